// The feed: newest first, pages appended as the sentinel comes into view (never a full
// re-render, so 100k observations cost what one page does), live items prepended, and the
// search results that replace it while a query is active.

import {api, AuthError} from './api.js';
import {h, clear, timeEl, num} from './dom.js';

const PAGE = 50;
const SEARCH_PAGE = 30;

function dayStart(isoDate) {
  const [y, m, d] = isoDate.split('-').map(Number);
  return new Date(y, m - 1, d).getTime() / 1000;
}

export class Feed {
  constructor({list, sentinel, heading, end, onOpen, typeInfo, ready}) {
    this.ready = ready || Promise.resolve();
    this.list = list;
    this.sentinel = sentinel;
    this.heading = heading;
    this.end = end;
    this.onOpen = onOpen;
    this.typeInfo = typeInfo;
    this.filters = {project: '', type: '', concept: '', from: '', to: ''};
    this.mode = 'feed';
    this.q = '';
    this.semantic = false;
    this.cursor = null;
    this.done = false;
    this.loading = null;
    this.ctrl = null;
    this.rows = new Map(); // key -> {item, el}
    this.firstRendered = false;
    this.observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) this.more();
    }, {rootMargin: '800px 0px'});
    this.observer.observe(sentinel);
    list.addEventListener('click', (e) => {
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

  /** Query parameters of the current filters (dates as epoch seconds, `until` exclusive). */
  params() {
    const f = this.filters;
    const p = {project: f.project, type: f.type, concept: f.concept, include_inactive: 1};
    if (f.from) p.since = dayStart(f.from);
    if (f.to) p.until = dayStart(f.to) + 86400;
    return p;
  }

  matches(item) {
    const f = this.filters;
    if (f.project && item.project !== f.project) return false;
    if ((f.type || f.concept) && item.kind !== 'observation') return false;
    if (f.type && item.type !== f.type) return false;
    if (f.concept && !(item.concepts || []).includes(f.concept)) return false;
    if (f.from && item.at < dayStart(f.from)) return false;
    if (f.to && item.at >= dayStart(f.to) + 86400) return false;
    return true;
  }

  setFilters(patch) {
    Object.assign(this.filters, patch);
    this.reset();
  }

  search(q) {
    q = q.trim();
    if (!q) return this.clearSearch();
    if (this.mode === 'search' && q === this.q) return this.loading || Promise.resolve();
    this.mode = 'search';
    this.q = q;
    return this.reset();
  }

  clearSearch() {
    if (this.mode === 'feed') return this.loading || Promise.resolve();
    this.mode = 'feed';
    this.q = '';
    return this.reset();
  }

  reset() {
    if (this.ctrl) this.ctrl.abort();
    this.ctrl = new AbortController();
    this.cursor = null;
    this.done = false;
    this.loading = null;
    this.rows.clear();
    clear(this.list);
    this.end.hidden = true;
    this.describe();
    return this.more();
  }

  describe(extra) {
    const f = this.filters;
    const parts = [];
    if (f.project) parts.push(`project ${f.project}`);
    if (f.type) parts.push(`type ${(this.typeInfo(f.type) || {}).label || f.type}`);
    if (f.concept) parts.push(`concept ${f.concept}`);
    if (f.from) parts.push(`from ${f.from}`);
    if (f.to) parts.push(`to ${f.to}`);
    const scope = parts.length ? ` · ${parts.join(', ')}` : '';
    if (this.mode === 'search') {
      const how = extra === undefined ? '' : (this.semantic ? ' (keywords + meaning)' : ' (keywords)');
      this.heading.textContent = `Search results for “${this.q}”${how}${scope}`;
    } else {
      this.heading.textContent = `Newest first${scope}`;
    }
  }

  more() {
    if (this.loading || this.done) return this.loading || Promise.resolve();
    const ctrl = this.ctrl || (this.ctrl = new AbortController());
    this.list.setAttribute('aria-busy', 'true');
    const run = async () => {
      let items;
      let next;
      if (this.mode === 'search') {
        const body = await api('search', {params: {...this.params(), q: this.q, limit: SEARCH_PAGE,
          offset: this.cursor || 0}, signal: ctrl.signal});
        items = body.items || [];
        next = body.next_offset ?? null;
        this.semantic = Boolean(body.semantic);
        this.describe(true);
      } else {
        const body = await api('feed', {params: {...this.params(), limit: PAGE, before: this.cursor},
          signal: ctrl.signal});
        items = body.items || [];
        next = body.next ?? null;
      }
      await this.ready; // type labels come with meta
      if (ctrl.signal.aborted) return;
      this.append(items);
      this.cursor = next;
      this.done = next === null || next === undefined || items.length === 0;
      if (this.done) {
        this.end.hidden = false;
        this.end.textContent = this.rows.size ? (this.mode === 'search' ? 'No more results.' : 'The beginning of memory.')
          : (this.mode === 'search' ? 'Nothing matches.' : 'Nothing here yet: memory appears as your agent works.');
      }
    };
    const p = run().catch((err) => {
      if (ctrl.signal.aborted || err.name === 'AbortError' || err instanceof AuthError) return;
      this.end.hidden = false;
      this.end.textContent = `Could not load: ${err.message}`;
      this.done = true;
    }).finally(() => {
      if (this.loading === p) this.loading = null;
      if (ctrl.signal.aborted) return;
      this.list.setAttribute('aria-busy', 'false');
      if (!this.firstRendered) {
        this.firstRendered = true;
        performance.mark('kenning:feed-rendered');
      }
      // The page may not fill the screen: keep loading while the sentinel is visible.
      if (!this.done && this.sentinel.getBoundingClientRect().top < innerHeight + 800) {
        requestAnimationFrame(() => this.more());
      }
    });
    this.loading = p;
    return p;
  }

  append(items) {
    const frag = document.createDocumentFragment();
    for (const item of items) {
      if (this.rows.has(item.key)) continue;
      const el = this.render(item);
      this.rows.set(item.key, {item, el});
      frag.append(el);
    }
    this.list.append(frag);
  }

  /** A live item: shown at the top, highlighted, when it fits the feed as it is now. */
  prepend(item) {
    if (this.mode !== 'feed' || !this.matches(item)) return false;
    if (this.rows.has(item.key)) return false;
    const el = this.render(item);
    el.classList.add('fresh');
    el.dataset.live = '1'; // arrived over the stream (kept after the highlight fades)
    el.addEventListener('animationend', () => el.classList.remove('fresh'), {once: true});
    this.rows.set(item.key, {item, el});
    this.list.prepend(el);
    if (this.end.hidden === false && this.rows.size === 1) this.end.hidden = true;
    return true;
  }

  patch(key, fields) {
    const row = this.rows.get(key);
    if (!row) return;
    Object.assign(row.item, fields);
    const el = this.render(row.item);
    const focused = document.activeElement === row.el;
    row.el.replaceWith(el);
    row.el = el;
    if (focused) el.focus();
  }

  remove(key) {
    const row = this.rows.get(key);
    if (!row) return;
    const next = row.el.nextElementSibling || row.el.previousElementSibling;
    const focused = row.el.contains(document.activeElement);
    row.el.remove();
    this.rows.delete(key);
    if (focused && next) next.focus();
  }

  /** j/k: move the focus one item down or up. */
  move(step) {
    const items = this.list.children;
    if (!items.length) return;
    const cur = document.activeElement && document.activeElement.closest
      ? document.activeElement.closest('article.item') : null;
    let idx = cur && cur.parentElement === this.list ? Array.prototype.indexOf.call(items, cur) + step : 0;
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
    const emoji = item.kind === 'observation' ? (info.emoji || '•') : (item.kind === 'prompt' ? '💬' : '📋');
    const meta = [h('span', {class: 'project'}, item.project || ''), timeEl(item.at)];
    if (item.files && item.files.length) {
      meta.push(h('span', {title: item.files.join('\n')}, item.files.length === 1 ? item.files[0]
        : `${item.files.length} files`));
    }
    meta.push(h('span', {title: 'size of the full record'}, `~${num(item.tokens || 0)} tokens`));
    if (typeof item.score === 'number') meta.push(h('span', {class: 'score'}, `score ${item.score.toFixed(2)}`));
    return h('article', {
      class: ['item', `kind-${item.kind}`, `type-${item.type}`, `status-${status}`],
      tabindex: 0, id, 'aria-labelledby': `${id}-t`, 'aria-describedby': `${id}-m`,
      dataset: {key: item.key, kind: item.kind, status},
    },
    h('div', {class: 'item-head'},
      h('span', {class: ['badge', `badge-${item.kind === 'observation' ? item.type : item.kind}`], title: info.description || kindLabel},
        h('span', {'aria-hidden': 'true'}, emoji), ' ', kindLabel),
      h('h3', {class: 'item-title', id: `${id}-t`}, item.title || '(untitled)'),
      flags),
    item.subtitle ? h('p', {class: 'item-sub'}, item.subtitle) : null,
    h('p', {class: 'item-meta', id: `${id}-m`}, meta.flatMap((m, i) => (i ? [h('span', {class: 'sep', 'aria-hidden': 'true'}, '·'), m] : [m]))));
  }
}
