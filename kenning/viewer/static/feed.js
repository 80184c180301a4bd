// The feed: newest first, grouped by local day and then by session (each group with its count
// under the current filters, from the server), pages appended as the sentinel comes into view
// (never a full re-render, so 100k observations cost what one page does), live items
// prepended, and the search results that replace it while a query is active.
//
// A page that fails to load is never taken for the end of memory: what is shown stays, the
// banner says why, and the same page (same filters, same cursor) is asked again once the
// worker answers (api.js `link`).

import {api, AuthError, link, retryable} from './api.js';
import {h, clear, timeEl, localDay, dayName, dateText, shorten, plural, rich, matcher} from './dom.js';
import {scopeTag} from './team.js';

const PAGE = 50;
const SEARCH_PAGE = 30;
const TZ = (() => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || '';
  } catch {
    return '';
  }
})();

// The memory views (kenning/viewer/items.py MEMORY_VIEWS) in words.
export const MEMORY_NOUN = {rule: 'standing rules', key: 'key memories', log: 'session log entries',
  archived: 'archived memories', superseded: 'superseded memories'};
const MEMORY_HEADING = {rule: 'Standing rules, newest first: what every session of the project is given first',
  key: 'Key memories, newest first', log: 'Session log, newest first', archived: 'Archive, newest first: routine '
    + 'work too old to be given to a session (searchable; restore what still matters)',
  superseded: 'Superseded memories, newest first: replaced by newer ones, never given to a session'};
const LAYER_TAG = {rule: ['Rule', 'Standing rule: given first to every session of its project'],
  key: ['Key', 'Key memory: a decision, fact, gotcha or root cause, ranked by importance'],
  log: ['Log', 'Session log: routine work, given by recency']};

/** The small tags of an observation's place in memory: its layer (or the archive), pinned, ×N. */
export function memoryTags(item) {
  if (item.kind !== 'observation' || !item.layer) return [];
  const out = [];
  // A superseded or retracted memory is given to no session whatever its layer: its flag says all.
  const current = !item.status || item.status === 'active';
  if (current && item.archived) {
    out.push(h('span', {class: 'flag flag-archived', title: 'Archived: routine work too old to be given to a session; '
      + 'searchable, and restorable from its detail'}, 'archived'));
  } else if (current) {
    const [label, title] = LAYER_TAG[item.layer] || [item.layer, ''];
    out.push(h('span', {class: ['layer', `layer-${item.layer}`], title: item.pinned ? `${title} (pinned by you)` : title},
      item.pinned ? `${label} · pinned` : label));
  }
  const scope = item.share && item.share.scope !== 'personal' ? scopeTag(item) : null;  // personal: in the detail
  if (scope) out.push(scope);
  if (item.occurrences > 1) {
    out.push(h('span', {class: 'occurrences', title: `recorded ${item.occurrences} times (near-duplicates merged)`},
      `×${item.occurrences}`));
  }
  return out;
}

function dayStart(isoDate) {
  const [y, m, d] = isoDate.split('-').map(Number);
  return new Date(y, m - 1, d).getTime() / 1000;
}

/** Whether an item belongs to a memory view (the rules of kenning/viewer/items.py in_view). */
export function inMemoryView(item, memory) {
  if (item.kind !== 'observation') return !memory;
  if (memory === 'superseded') return item.status === 'superseded';
  if (!memory) return item.status !== 'superseded';
  const head = item.duplicate_of === null || item.duplicate_of === undefined;
  if (item.status !== 'active' || !head) return false;
  if (memory === 'archived') return Boolean(item.archived);
  return item.layer === memory && !item.archived;
}

export class Feed {
  constructor({list, sentinel, heading, end, onOpen, onSession, typeInfo, conceptLabel, projectName, ready}) {
    Object.assign(this, {list, sentinel, heading, end, onOpen, onSession, typeInfo});
    this.projectName = projectName || ((p) => p);
    this.conceptLabel = conceptLabel || ((c) => c);
    this.ready = ready || Promise.resolve();
    this.filters = {project: '', memory: '', type: '', concept: '', from: '', to: ''};
    this.mode = 'feed';
    this.q = '';
    this.terms = [];
    this.rx = null;
    this.noWords = false;
    this.semantic = false;
    this.sort = 'relevance'; // search results: relevance, newest or oldest
    this.total = null;     // how many results the search found (a lower bound when more is true)
    this.moreFound = false;
    this.cursor = null;
    this.done = false;
    this.loaded = false; // the first page of the current view is in
    this.loading = null;
    this.ctrl = null;
    this.gen = 0;
    this.rows = new Map(); // key -> {item, el}
    this.counts = {days: new Map(), sessions: new Map()};
    this.firstRendered = false;
    this.started = false; // the app starts the feed once it is signed in and knows the view
    this.observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) this.more();
    }, {rootMargin: '800px 0px'});
    this.observer.observe(sentinel);
    list.addEventListener('click', (e) => {
      const head = e.target.closest('button.session-open');
      if (head) {
        this.onSession(Number(head.dataset.session), head);
        return;
      }
      const el = e.target.closest('article.item');
      if (el) this.open(el);
    });
    list.addEventListener('keydown', (e) => {
      if ((e.key === 'Enter' || e.key === ' ') && e.target.matches('article.item')) {
        e.preventDefault();
        this.open(e.target);
      }
    });
  }

  open(el) {
    const row = this.rows.get(el.dataset.key);
    if (row) this.onOpen(row.item, el);
  }

  get filtered() {
    const f = this.filters;
    return Boolean(f.project || f.memory || f.type || f.concept || f.from || f.to);
  }

  /** Query parameters of the current filters (dates as epoch seconds, `until` exclusive). */
  params() {
    const f = this.filters;
    const p = {project: f.project, memory: f.memory, type: f.type, concept: f.concept, include_inactive: 1};
    if (f.from) p.since = dayStart(f.from);
    if (f.to) p.until = dayStart(f.to) + 86400;
    return p;
  }

  matches(item) {
    const f = this.filters;
    if (f.project && item.project !== f.project) return false;
    if ((f.type || f.concept || f.memory) && item.kind !== 'observation') return false;
    if (!inMemoryView(item, f.memory)) return false;
    if (f.type && item.type !== f.type) return false;
    if (f.concept && !(item.concepts || []).includes(f.concept)) return false;
    if (f.from && item.at < dayStart(f.from)) return false;
    if (f.to && item.at >= dayStart(f.to) + 86400) return false;
    return true;
  }

  /** Show this view (filters and query); reloads only when something changed. */
  setView(filters, q) {
    const next = {...this.filters, ...filters};
    q = (q || '').trim();
    const mode = q ? 'search' : 'feed';
    const same = JSON.stringify(next) === JSON.stringify(this.filters) && mode === this.mode && q === this.q;
    if (same && (this.loaded || this.loading)) return this.loading || Promise.resolve();
    this.filters = next;
    this.mode = mode;
    this.q = q;
    return this.reset();
  }

  setFilters(patch) {
    return this.setView(patch, this.q);
  }

  search(q) {
    return this.setView({}, q);
  }

  /** How search results are ordered; a search shown now is asked for again. */
  setSort(sort) {
    sort = ['newest', 'oldest'].includes(sort) ? sort : 'relevance';
    if (sort === this.sort) return this.loading || Promise.resolve();
    this.sort = sort;
    return this.mode === 'search' ? this.reset() : Promise.resolve();
  }

  clearSearch() {
    return this.setView({}, '');
  }

  reset() {
    if (this.ctrl) this.ctrl.abort();
    this.ctrl = new AbortController();
    this.gen += 1;
    this.cursor = null;
    this.done = false;
    this.loaded = false;
    this.loading = null;
    this.noWords = false;
    this.terms = [];
    this.rx = null;
    this.total = null;
    this.moreFound = false;
    this.rows.clear();
    this.counts = {days: new Map(), sessions: new Map()};
    clear(this.list);
    this.end.hidden = true;
    this.end.classList.remove('error');
    this.describe();
    return this.more();
  }

  // ---------------------------------------------------------------------- wording

  /** The filters in words: {what: "bugfix observations", where: " in webshop between 3 Jan and 9 Jan 2026"}. */
  scope() {
    const f = this.filters;
    const type = f.type ? ((this.typeInfo(f.type) || {}).label || f.type) : '';
    let what = type ? `${type.toLowerCase()} observations` : (f.concept ? 'observations' : 'items');
    if (f.memory) what = MEMORY_NOUN[f.memory] + (type ? ` of type ${type.toLowerCase()}` : '');
    if (f.concept) what += ` about “${this.conceptLabel(f.concept)}”`;
    let where = f.project ? ` in ${this.projectName(f.project)}` : '';
    if (f.from && f.to) where += f.from === f.to ? ` on ${dateText(f.from)}` : ` between ${dateText(f.from)} and ${dateText(f.to)}`;
    else if (f.from) where += ` since ${dateText(f.from)}`;
    else if (f.to) where += ` until ${dateText(f.to)}`;
    return {what, where};
  }

  describe() {
    const f = this.filters;
    const parts = [];
    if (f.project) parts.push(`project ${this.projectName(f.project)}`);
    if (f.memory && this.mode === 'search') parts.push(MEMORY_NOUN[f.memory]);
    if (f.type) parts.push(`type ${(this.typeInfo(f.type) || {}).label || f.type}`);
    if (f.concept) parts.push(`concept ${this.conceptLabel(f.concept)}`);
    if (f.from) parts.push(`from ${f.from}`);
    if (f.to) parts.push(`to ${f.to}`);
    const scope = parts.length ? ` · ${parts.join(', ')}` : '';
    this.heading.title = '';
    if (this.mode !== 'search') {
      this.heading.textContent = `${f.memory ? MEMORY_HEADING[f.memory] : 'Newest first'}${scope}`;
      return;
    }
    const q = `“${shorten(this.q, 60)}”`;
    if (this.q.length > 60) this.heading.title = this.q.slice(0, 2000);
    if (!this.loaded) {
      this.heading.textContent = `Searching for ${q}${scope}…`;
      return;
    }
    const n = this.total ?? this.rows.size;
    const how = this.semantic ? ' (keywords and meaning)' : ' (keywords)';
    const count = this.moreFound ? `${n}+ results` : plural(n, 'result');
    let order = {newest: ', newest first', oldest: ', oldest first'}[this.sort] || '';
    if (order && this.moreFound) order += ` (among the best ${n})`;
    this.heading.textContent = this.noWords ? `Nothing to search for in ${q}` : `${count} for ${q}${how}${order}${scope}`;
  }

  showEnd(text, kind = '') {
    this.end.hidden = false;
    this.end.textContent = text;
    this.end.classList.toggle('error', kind === 'error');
  }

  endText() {
    const {what, where} = this.scope();
    if (this.mode === 'search') {
      if (this.noWords) {
        return `“${shorten(this.q, 40)}” has no words to search for: try a name, a file or an error message.`;
      }
      if (!this.rows.size) return `Nothing matches “${shorten(this.q, 60)}”${this.filtered ? ` among ${what}${where}` : ''}.`;
      return 'No more results.';
    }
    if (!this.rows.size) {
      return this.filtered ? `No ${what}${where}.` : 'Nothing here yet: memory appears as your agent works.';
    }
    return this.filtered ? `No older ${what}${where}.` : 'The beginning of memory.';
  }

  // ---------------------------------------------------------------------- loading

  more() {
    if (!this.started || this.loading || this.done) return this.loading || Promise.resolve();
    const gen = this.gen;
    if (link.down) {
      // Asking now would only fail again: this page loads when the worker answers.
      if (!this.rows.size) this.showEnd('Waiting for the worker to answer…', 'error');
      link.whenBack(() => {
        if (gen === this.gen) this.more();
      });
      return Promise.resolve();
    }
    const ctrl = this.ctrl || (this.ctrl = new AbortController());
    this.list.setAttribute('aria-busy', 'true');
    const run = async () => {
      let items;
      let next;
      let counts = null;
      if (this.mode === 'search') {
        const body = await api('search', {params: {...this.params(), q: this.q, limit: SEARCH_PAGE,
          offset: this.cursor || 0, sort: this.sort}, signal: ctrl.signal});
        this.total = typeof body.total === 'number' ? body.total : null;
        this.moreFound = Boolean(body.more);
        items = body.items || [];
        next = body.next_offset ?? null;
        this.semantic = Boolean(body.semantic);
        this.note = body.note || ''; // why meaning did not answer (embeddings off, loading, being embedded)
        document.dispatchEvent(new CustomEvent('kenning:search-note', {detail: this.note}));
        this.noWords = Boolean(body.no_words);
        this.terms = body.terms || [];
        this.rx = matcher(this.terms);
      } else {
        const body = await api('feed', {params: {...this.params(), limit: PAGE, before: this.cursor, tz: TZ},
          signal: ctrl.signal});
        items = body.items || [];
        next = body.next ?? null;
        counts = body.counts || null;
      }
      await this.ready; // type labels come with meta
      if (ctrl.signal.aborted) return;
      if (counts) {
        for (const [d, n] of Object.entries(counts.days || {})) this.counts.days.set(d, n);
        for (const [sid, n] of Object.entries(counts.sessions || {})) this.counts.sessions.set(Number(sid), n);
      }
      this.append(items);
      this.refreshCounts();
      this.cursor = next;
      this.loaded = true;
      this.done = next === null || next === undefined || items.length === 0;
      this.end.classList.remove('error');
      if (this.done) this.showEnd(this.endText());
      else this.end.hidden = true;
      this.describe();
    };
    const p = run().catch((err) => {
      if (ctrl.signal.aborted || err.name === 'AbortError' || err instanceof AuthError) return;
      if (retryable(err)) {
        // Not the end of memory: keep what is shown, and ask for the same page again later.
        this.showEnd(`Could not load ${this.rows.size ? 'more' : 'this view'}: ${err.message}. It loads again by `
          + 'itself when the worker answers.', 'error');
        link.lost(err, () => {
          if (gen === this.gen) this.more();
        });
      } else {
        this.showEnd(`Could not load: ${err.message}.`, 'error');
        this.done = true;
      }
    }).finally(() => {
      if (this.loading === p) this.loading = null;
      if (ctrl.signal.aborted) return;
      this.list.setAttribute('aria-busy', 'false');
      if (!this.firstRendered) {
        this.firstRendered = true;
        performance.mark('kenning:feed-rendered');
      }
      // The page may not fill the screen: keep loading while the sentinel is visible.
      if (!this.done && !link.down && this.sentinel.getBoundingClientRect().top < innerHeight + 800) {
        requestAnimationFrame(() => this.more());
      }
    });
    this.loading = p;
    return p;
  }

  // ----------------------------------------------------------------------- groups

  /** The group an item goes in: a day section, and in it a run of one session's items. */
  groupFor(item, atTop) {
    if (this.mode === 'search') return this.list;
    const day = localDay(item.at);
    const edge = atTop ? this.list.firstElementChild : this.list.lastElementChild;
    let dayEl = edge && edge.dataset.day === day ? edge : null;
    if (!dayEl) {
      dayEl = h('section', {class: 'day', dataset: {day}, 'aria-label': dayName(day)},
        h('h2', {class: 'day-head'}, h('span', {class: 'day-name'}, dayName(day)), ' ',
          h('span', {class: 'count day-count'})));
      if (atTop) this.list.prepend(dayEl);
      else this.list.append(dayEl);
    }
    // One group per session and day, even when sessions interleave (parallel or imported ones): a live
    // item brings its session's group to the top of the day.
    const sid = item.session_id;
    const run = [...dayEl.querySelectorAll(':scope > .session')].find((g) => Number(g.dataset.session) === sid);
    if (run) {
      if (atTop && run !== dayEl.querySelector(':scope > .session')) dayEl.querySelector('.day-head').after(run);
      return run.querySelector('.session-items');
    }
    const fresh = h('div', {class: 'session', dataset: {session: String(sid)}},
      h('h3', {class: 'session-head'},
        h('button', {type: 'button', class: 'session-open link', dataset: {session: String(sid)},
          title: 'Open this session\'s timeline'}, `Session #${sid}`),
        h('span', {class: 'session-project', title: item.project || ''}, this.projectName(item.project || '')),
        h('span', {class: 'count session-count'})),
      h('div', {class: 'session-items'}));
    if (atTop) dayEl.querySelector('.day-head').after(fresh);
    else dayEl.append(fresh);
    return fresh.querySelector('.session-items');
  }

  refreshCounts() {
    for (const el of this.list.querySelectorAll(':scope > .day')) {
      const n = this.counts.days.get(el.dataset.day);
      el.querySelector('.day-count').textContent = n === undefined ? '' : plural(n, 'item');
    }
    for (const el of this.list.querySelectorAll('.session')) {
      const n = this.counts.sessions.get(Number(el.dataset.session));
      el.querySelector('.session-count').textContent = n === undefined ? '' : plural(n, 'item');
    }
  }

  bump(item, by) {
    const day = localDay(item.at);
    if (this.counts.days.has(day)) this.counts.days.set(day, Math.max(0, this.counts.days.get(day) + by));
    else if (by > 0) this.counts.days.set(day, by);
    const sid = item.session_id;
    if (this.counts.sessions.has(sid)) this.counts.sessions.set(sid, Math.max(0, this.counts.sessions.get(sid) + by));
    else if (by > 0) this.counts.sessions.set(sid, by);
  }

  append(items) {
    for (const item of items) {
      if (this.rows.has(item.key)) continue;
      const el = this.render(item);
      this.rows.set(item.key, {item, el});
      this.groupFor(item, false).append(el);
    }
  }

  /** A live item: shown at the top, highlighted, when it fits the feed as it is now. */
  prepend(item) {
    // Before the first page of this view is in, the page itself brings the item (in its place).
    if (this.mode !== 'feed' || !this.loaded || !this.matches(item)) return false;
    if (this.rows.has(item.key)) return false;
    const el = this.render(item);
    el.classList.add('fresh');
    el.dataset.live = '1'; // arrived over the stream (kept after the highlight fades)
    el.addEventListener('animationend', () => el.classList.remove('fresh'), {once: true});
    this.rows.set(item.key, {item, el});
    this.groupFor(item, true).prepend(el);
    this.bump(item, 1);
    this.refreshCounts();
    if (this.end.hidden === false && this.rows.size === 1) this.end.hidden = true;
    return true;
  }

  patch(key, fields) {
    const row = this.rows.get(key);
    if (!row) return;
    Object.assign(row.item, fields);
    const el = this.render(row.item);
    if (row.el.dataset.live) el.dataset.live = row.el.dataset.live;
    const focused = document.activeElement === row.el;
    row.el.replaceWith(el);
    row.el = el;
    if (focused) el.focus();
  }

  /** An item changed in memory (pinned, restored…): shown anew, or taken out if this view no longer holds it.
   * Returns the element that should get the focus when the item left (its neighbour), else null. */
  update(key, fields) {
    const row = this.rows.get(key);
    if (!row) return null;
    const item = {...row.item, ...fields};
    if (this.mode === 'feed' && !this.matches(item)) return this.remove(key);
    this.patch(key, fields);
    return null;
  }

  /** Take an item out (deleted): the focus goes to its neighbour, empty groups go too. */
  remove(key) {
    const row = this.rows.get(key);
    if (!row) return null;
    const all = this.articles();
    const i = all.indexOf(row.el);
    const next = all[i + 1] || all[i - 1] || null;
    const group = row.el.closest('.session');
    row.el.remove();
    this.rows.delete(key);
    if (this.mode === 'feed') {
      this.bump(row.item, -1);
      if (group && !group.querySelector('article.item')) {
        const day = group.parentElement;
        group.remove();
        if (day && !day.querySelector('article.item')) day.remove();
      }
      this.refreshCounts();
    }
    if (!this.rows.size && this.done) this.showEnd(this.endText());
    this.describe();
    return next;
  }

  articles() {
    return [...this.list.querySelectorAll('article.item')];
  }

  /** j/k: move the focus one item down or up. */
  move(step) {
    const items = this.articles();
    if (!items.length) return;
    const cur = document.activeElement && document.activeElement.closest
      ? document.activeElement.closest('article.item') : null;
    let idx = cur && items.includes(cur) ? items.indexOf(cur) + step : 0;
    idx = Math.max(0, Math.min(items.length - 1, idx));
    items[idx].focus();
    items[idx].scrollIntoView({block: 'nearest'});
  }

  render(item) {
    const info = this.typeInfo(item.type) || {};
    const id = `item-${item.key.replace(':', '-')}`;
    const status = item.status || 'active';
    const flags = [];
    if (status === 'retracted') flags.push(h('span', {class: 'flag flag-retracted'}, 'no longer true'));
    if (status === 'superseded') flags.push(h('span', {class: 'flag flag-superseded'}, 'superseded'));
    const kindLabel = item.kind === 'observation' ? (info.label || item.type) : (item.kind === 'prompt' ? 'Prompt' : 'Summary');
    const meta = [timeEl(item.at)];
    if (this.mode === 'search') {
      meta.unshift(h('span', {class: 'project', title: item.project || ''}, this.projectName(item.project || '')));
    }
    if (item.files && item.files.length) {
      meta.push(h('span', {class: 'files-hint', title: item.files.join('\n')}, item.files.length === 1 ? item.files[0]
        : `${item.files[0]} and ${plural(item.files.length - 1, 'other file')}`));
    }
    const badgeKind = item.kind === 'observation' ? item.type : item.kind;
    return h('article', {
      class: ['item', `kind-${item.kind}`, `type-${item.type}`, `status-${status}`],
      tabindex: 0, id, 'aria-labelledby': `${id}-t`, 'aria-describedby': `${id}-m`,
      dataset: {key: item.key, kind: item.kind, status, project: item.project || ''},
    },
    h('div', {class: 'item-head'},
      h('span', {class: ['badge', `badge-${badgeKind}`], title: info.description || kindLabel},
        h('span', {class: ['dot', `fill-${badgeKind}`], 'aria-hidden': 'true'}), kindLabel),
      h('h3', {class: 'item-title', id: `${id}-t`}, rich(item.title || '(untitled)', this.rx)),
      flags, memoryTags(item)),
    item.subtitle ? h('p', {class: 'item-sub'}, rich(item.subtitle, this.rx)) : null,
    h('p', {class: 'item-meta', id: `${id}-m`}, meta.flatMap((m, i) => (i ? [h('span', {class: 'sep', 'aria-hidden': 'true'}, '·'), m] : [m]))));
  }
}
