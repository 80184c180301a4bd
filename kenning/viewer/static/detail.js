// The detail panel: one observation (facts, narrative, files, concepts, session, prompt,
// tokens, related notes) with its actions, or a session's timeline.

import {api, ApiError, AuthError, link, retryable} from './api.js';
import {h, clear, fullTime, num, toast, plain, rich} from './dom.js';
import {memoryTags} from './feed.js';
import {givenSlot, toldSlot} from './ledger.js';
import {shareLine} from './team.js';

// What each layer decision says when it is done, and what it says when it is refused.
const DECISIONS = {
  pin: {done: 'Pinned: a standing rule now, given first to every session of its project.', failed: 'Not pinned'},
  unpin: {done: 'Unpinned: an ordinary memory now, no longer given to every session.', failed: 'Not unpinned'},
  unarchive: {done: 'Restored from the archive: given to sessions again, and never archived.',
    failed: 'Not restored from the archive'},
  restore: {done: 'Restored: it is current again and given to sessions.', failed: 'Not restored'},
  supersede: {done: 'Superseded: the newer memory replaces it; it is no longer given to sessions.',
    failed: 'Not superseded'},
};
const LAYER_TEXT = {
  rule: ['Standing rule', 'given first to every session of its project (the newest version only)'],
  key: ['Key memory', 'a decision, fact, gotcha or root cause: given to sessions by importance, never pushed out by '
    + 'routine work'],
  log: ['Session log', 'routine work: given to sessions by recency, archived when it gets old'],
};

export class Detail {
  constructor({panel, title, body, back, close, dialog, meta, feed, typeInfo, conceptLabel, projectName, onChange}) {
    Object.assign(this, {panel, title, body, back, meta, feed, typeInfo, dialog, conceptLabel, projectName, onChange});
    this.stack = [];
    this.opener = null;
    this.ctrl = null;
    this.found = null; // the search hit an observation was opened from: its score and matched words
    close.addEventListener('click', () => this.close());
    back.addEventListener('click', () => this.goBack());
  }

  /** The open view as the address says it: 'o12', 's5' or ''. */
  get ref() {
    if (!this.current) return '';
    return `${this.current.kind === 'observation' ? 'o' : 's'}${this.current.id}`;
  }

  /** Open what an address names (reload, Back, a pasted link); '' closes. */
  openRef(ref) {
    if (ref === this.ref) return;
    if (!ref) {
      this.close({quiet: true});
      return;
    }
    this.stack = [];
    this.found = null;
    this.show({kind: ref[0] === 'o' ? 'observation' : 'session', id: Number(ref.slice(1))}, false, true);
  }

  get isOpen() {
    return !this.panel.hidden;
  }

  /** Open what a feed row shows: an observation, or the session of a prompt or summary. */
  openItem(item, opener) {
    this.opener = opener || document.activeElement;
    this.stack = [];
    this.found = typeof item.score === 'number' ? {score: item.score, rx: this.feed.rx} : null;
    if (item.kind === 'observation') this.show({kind: 'observation', id: item.id});
    else this.show({kind: 'session', id: item.session_id});
  }

  openSession(id, opener) {
    this.opener = opener || document.activeElement;
    this.stack = [];
    this.found = null;
    this.show({kind: 'session', id});
  }

  show(view, push = false, quiet = false) {
    if (push && this.current) this.stack.push(this.current);
    if (push) this.found = null;
    this.current = view;
    this.back.hidden = this.stack.length === 0;
    this.panel.hidden = false;
    document.body.classList.add('has-detail');
    if (this.ctrl) this.ctrl.abort();
    this.ctrl = new AbortController();
    clear(this.body).append(h('p', {class: 'muted'}, 'Loading…'));
    this.title.textContent = view.kind === 'observation' ? `Observation #${view.id}` : `Session #${view.id}`;
    this.title.focus();
    if (!quiet) this.onChange(this.ref);
    return this.load(view);
  }

  load(view) {
    const run = view.kind === 'observation' ? this.loadObservation(view.id) : this.loadSession(view.id);
    return run.catch((err) => {
      if (err.name === 'AbortError' || err instanceof AuthError) return;
      if (retryable(err)) {
        clear(this.body).append(h('p', {class: 'error'}, `Could not load this: ${err.message}. It loads by itself `
          + 'when the worker answers.'));
        link.lost(err, () => {
          if (this.current === view) this.load(view);
        });
        return;
      }
      clear(this.body).append(h('p', {class: 'error'}, err.status === 404
        ? 'This is not in memory (any more): it was deleted, or the link is wrong.' : err.message));
    });
  }

  goBack() {
    const prev = this.stack.pop();
    if (prev) {
      this.current = null;
      this.show(prev);
    }
  }

  /** True while the detail shows observation ``id``. */
  showing(id) {
    return !this.panel.hidden && !!this.current && this.current.kind === 'observation' && this.current.id === id;
  }

  /** Close after the shown memory left the feed (deleted): the focus goes to its neighbour, else to the search
   * box, never to the page body. */
  closeRemoved(next) {
    this.opener = next;
    this.close();
    if (!next) document.getElementById('search')?.focus();
  }

  close({quiet = false} = {}) {
    if (this.panel.hidden) return;
    if (this.ctrl) this.ctrl.abort();
    this.panel.hidden = true;
    document.body.classList.remove('has-detail');
    this.current = null;
    this.stack = [];
    if (!quiet) this.onChange('');
    const opener = this.opener;
    this.opener = null;
    if (opener && opener.isConnected) opener.focus();
    else {
      const key = this.lastKey && this.feed.rows.get(this.lastKey);
      if (key) key.el.focus();
    }
  }

  // ------------------------------------------------------------------ observation

  async loadObservation(id) {
    const data = await api(`observations/${id}`, {signal: this.ctrl.signal});
    this.renderObservation(data);
  }

  renderObservation(data) {
    // Drawn again (a live change, an action here): the control that had focus keeps it.
    const had = document.activeElement;
    const focused = had && had.id && this.body.contains(had) ? had.id : '';
    const o = data.observation;
    const info = this.typeInfo(o.type) || {};
    const key = `o:${o.id}`;
    this.lastKey = key;
    const rx = this.found ? this.found.rx : null;
    this.title.replaceChildren(...rich(o.title || `Observation #${o.id}`, rx));
    const status = o.status || 'active';
    const retracted = status === 'retracted';

    const editBtn = h('button', {type: 'button', id: 'act-edit', 'aria-expanded': 'false'}, 'Edit…');
    const superseded = status === 'superseded';
    const m = data.memory || {layer: o.layer || 'log', replaced: [], occurrences: 1};
    const active = status === 'active';
    const isRule = active && m.layer === 'rule';
    const retractBtn = superseded ? null : h('button', {type: 'button', id: 'act-retract',
      'aria-pressed': retracted ? 'true' : 'false'}, retracted ? 'Restore (it is true again)' : 'Mark as no longer true');
    const pinBtn = active && !m.archived ? h('button', {type: 'button', id: 'act-pin', 'aria-pressed': isRule ? 'true' : 'false',
      title: isRule ? 'Make it an ordinary memory: no longer given to every session'
        : 'Make it a standing rule: given first to every session of this project'},
    isRule ? 'Unpin (ordinary memory)' : 'Pin as a standing rule') : null;
    const unarchiveBtn = m.archived ? h('button', {type: 'button', id: 'act-unarchive',
      title: 'Make it a key memory: given to sessions again, never archived'}, 'Restore from the archive') : null;
    const restoreBtn = superseded ? h('button', {type: 'button', id: 'act-restore',
      title: 'Make it current again (the newer memory stays too)'}, 'Restore (it is true again)') : null;
    const supersedeBtn = active ? h('button', {type: 'button', id: 'act-supersede', 'aria-expanded': 'false',
      title: 'No longer true: name the memory that replaces it'}, 'Supersede…') : null;
    const byInput = h('input', {id: 'supersede-by', name: 'by', inputmode: 'numeric', pattern: '#?[0-9]{1,18}',
      required: true, size: 8, placeholder: 'e.g. 31'});
    const supersedeForm = h('form', {class: 'supersede-form', id: 'supersede-form', hidden: true},
      h('label', {for: 'supersede-by'}, 'Replaced by memory #'), ' ', byInput, ' ',
      h('button', {type: 'submit', id: 'supersede-go'}, 'Supersede'),
      h('span', {class: 'muted'}, ' (the id of the newer memory: search for it, it is on its card)'));
    const actError = h('p', {class: 'error act-error', id: 'act-error', role: 'alert'});
    const decide = async (btn, action, path, body) => {
      btn.disabled = true;
      btn.setAttribute('aria-busy', 'true');
      actError.textContent = '';
      try {
        await api(path, {method: 'POST', body});
        const fresh = await api(`observations/${o.id}`);
        toast(DECISIONS[action].done);
        const f = fresh.observation;
        const gone = this.feed.update(key, {layer: f.layer, pinned: f.pinned, decided: f.user_layer, archived: f.archived,
          status: f.status, superseded_by: f.superseded_by});
        if (gone) this.opener = gone; // the row left this view (e.g. unpinned in Standing rules)
        this.renderObservation({...fresh});
        const again = document.getElementById(btn.id) || document.getElementById('act-pin');
        (again || this.title).focus();
      } catch (err) {
        btn.disabled = false;
        btn.removeAttribute('aria-busy');
        if (err instanceof AuthError) return;
        const why = retryable(err) ? `${err.message}; nothing changed, try again when it answers` : err.message;
        actError.textContent = `${DECISIONS[action].failed}: ${why}.`;
        toast(`${DECISIONS[action].failed}: ${why}.`, 'error');
        btn.focus();
      }
    };
    if (pinBtn) {
      pinBtn.addEventListener('click', () => decide(pinBtn, isRule ? 'unpin' : 'pin',
        `/api/observations/${isRule ? 'unpin' : 'pin'}`, {id: o.id, project: o.project}));
    }
    if (unarchiveBtn) {
      unarchiveBtn.addEventListener('click', () => decide(unarchiveBtn, 'unarchive', '/api/observations/unarchive',
        {id: o.id, project: o.project}));
    }
    if (supersedeBtn) {
      supersedeBtn.addEventListener('click', () => {
        const open = supersedeForm.hidden;
        supersedeForm.hidden = !open;
        supersedeBtn.setAttribute('aria-expanded', open ? 'true' : 'false');
        if (open) byInput.focus();
      });
      supersedeForm.addEventListener('submit', (e) => {
        e.preventDefault();
        const by = Number(byInput.value.replace(/^#/, ''));
        if (!Number.isInteger(by) || by <= 0 || by === o.id) {
          actError.textContent = 'Give the id of another memory, the one that replaces this one.';
          byInput.focus();
          return;
        }
        decide(supersedeForm.querySelector('#supersede-go'), 'supersede', '/api/observations/supersede',
          {ids: [o.id], by});
      });
    }
    if (restoreBtn) {
      restoreBtn.addEventListener('click', () => decide(restoreBtn, 'restore', '/api/observations/restore',
        {ids: [o.id]}));
    }
    const deleteBtn = h('button', {type: 'button', id: 'act-delete', class: 'danger'}, 'Delete…');
    const editSlot = h('div', {class: 'edit-slot'});

    editBtn.addEventListener('click', () => {
      if (editSlot.firstChild) {
        clear(editSlot);
        editBtn.setAttribute('aria-expanded', 'false');
        return;
      }
      editBtn.setAttribute('aria-expanded', 'true');
      editSlot.append(this.editForm(o, () => {
        clear(editSlot);
        editBtn.setAttribute('aria-expanded', 'false');
        editBtn.focus();
      }));
      editSlot.querySelector('input').focus();
    });
    retractBtn?.addEventListener('click', async () => {
      retractBtn.disabled = true;
      try {
        const updated = await this.patch(o.id, {status: retracted ? 'active' : 'retracted'});
        toast(updated.status === 'retracted' ? 'Marked as no longer true: kept, never injected.' : 'Restored.');
        this.renderObservation({...data, observation: {...o, ...updated}});
        document.getElementById('act-retract').focus();
      } catch (err) {
        retractBtn.disabled = false;
        if (!(err instanceof AuthError)) toast(err.message, 'error');
      }
    });
    deleteBtn.addEventListener('click', () => this.confirmDelete(o));

    const facts = Array.isArray(o.facts) ? o.facts : [];
    const read = Array.isArray(o.files_read) ? o.files_read : [];
    const modified = Array.isArray(o.files_modified) ? o.files_modified : [];
    const concepts = Array.isArray(o.concepts) ? o.concepts : [];
    const s = data.session;
    const prompt = data.prompt;

    const sections = [
      h('p', {class: 'detail-badges'},
        h('span', {class: ['badge', `badge-${o.type}`], title: info.description || ''},
          h('span', {class: ['dot', `fill-${o.type}`], 'aria-hidden': 'true'}), info.label || o.type),
        retracted ? h('span', {class: 'flag flag-retracted'}, 'no longer true') : null,
        status === 'superseded' ? h('span', {class: 'flag flag-superseded'}, 'superseded') : null,
        memoryTags({kind: 'observation', layer: m.layer, archived: m.archived, pinned: m.decided === 'rule',
          occurrences: m.occurrences, status}),
        h('span', {class: 'muted', title: o.project || ''}, `#${o.id} · ${this.projectName(o.project || '')} · ${fullTime(o.created_at)}`)),
      o.subtitle ? h('p', {class: 'detail-sub'}, rich(o.subtitle, rx)) : null,
      h('div', {class: 'actions', role: 'group', 'aria-label': 'Actions'}, pinBtn, unarchiveBtn, restoreBtn, editBtn,
        supersedeBtn, retractBtn, deleteBtn),
      supersedeForm,
      actError,
      editSlot,
      section('Memory', this.lineage(o, m)),
      section('Facts', facts.length ? h('ul', {class: 'facts'}, facts.map((f) => h('li', null, rich(f, rx))))
        : h('p', {class: 'muted'}, 'none')),
      section('Narrative', o.narrative ? h('p', {class: 'narrative'}, rich(o.narrative, rx)) : h('p', {class: 'muted'}, 'none')),
      section('Files', h('dl', {class: 'kv'},
        h('dt', null, 'Modified'), h('dd', null, fileList(modified)),
        h('dt', null, 'Read'), h('dd', null, fileList(read)))),
      section('Concepts', concepts.length ? h('ul', {class: 'chips'}, concepts.map((c) => h('li', {class: 'chip', title: c},
        this.conceptLabel(c))))
        : h('p', {class: 'muted'}, 'none')),
      s ? section('Session', h('p', null,
        h('button', {type: 'button', class: 'link', id: 'open-session', onclick: () => this.show({kind: 'session', id: s.id}, true)},
          `Session #${s.id} timeline`),
        ` · ${this.projectName(s.project || '')} · started ${fullTime(s.started_at)}${s.ended_at ? `, ended ${fullTime(s.ended_at)}` : ''}`,
        s.status ? ` · ${s.status}` : '')) : null,
      section('Prompt', prompt ? h('blockquote', {class: 'prompt'},
        h('span', {class: 'muted'}, `#${prompt.number} `), prompt.text) : h('p', {class: 'muted'}, 'no prompt recorded')),
      section('Tokens', h('dl', {class: 'kv'},
        h('dt', null, 'Record'), h('dd', null, `~${num(o.tokens)}`),
        o.source_tokens !== undefined ? [h('dt', null, 'Source (what it compresses)'), h('dd', null, num(o.source_tokens))] : null,
        o.tokens_spent !== undefined ? [h('dt', null, 'Observer spent'), h('dd', null, num(o.tokens_spent))] : null,
        o.observer ? [h('dt', null, 'Observer'), h('dd', null, o.observer)] : null,
        this.found ? [h('dt', null, 'Search score'), h('dd', {class: 'score'}, this.found.score.toFixed(2))] : null)),
      section(`Other observations on the same files (${(data.related || []).length})`,
        this.itemList(data.related || [], 'No other observation touched these files.')),
      section('Given to sessions', givenSlot(o.id, this.ctrl && this.ctrl.signal,
        (sid) => this.show({kind: 'session', id: sid}, true))),
    ];
    clear(this.body).append(...sections.filter(Boolean));
    if (focused) document.getElementById(focused)?.focus();
  }

  /** Where the memory stands: its layer (and who decided it), what replaced it, what it replaced. */
  lineage(o, m) {
    const status = o.status || 'active';
    const [name, what] = LAYER_TEXT[m.layer] || [m.layer, ''];
    const parts = [shareLine(o)];
    if (status === 'superseded') {
      parts.push(h('p', {class: 'layer-line'}, h('strong', null, 'Superseded'),
        ': replaced by a newer memory, never given to a session; kept and searchable.'));
    } else if (status === 'retracted') {
      parts.push(h('p', {class: 'layer-line'}, h('strong', null, 'No longer true'), ': never given to a session.'));
    } else if (m.archived) {
      parts.push(h('p', {class: 'layer-line'}, h('strong', null, 'Archived'),
        ': routine work too old to be given to a session (the archive_after_days setting); searchable. Restore it from the '
        + 'archive to give it to sessions again.'));
    } else {
      let who = '';
      if (m.decided === 'rule') who = ` Pinned by you${m.decided_at ? ` on ${fullTime(m.decided_at)}` : ''}.`;
      else if (m.decided === 'key') who = ` Kept as a key memory by you${m.decided_at ? ` on ${fullTime(m.decided_at)}` : ''}.`;
      parts.push(h('p', {class: 'layer-line'}, h('strong', null, name), `: ${what}.${who}`));
    }
    const j = m.judged;
    if (j) {  // why the observer judged it so: the sentence, who said it and where (undo it with "Keep as a key memory")
      const scope = j.scope === 'user' ? ', for all your projects' : '';
      parts.push(h('p', {class: 'judged-line'}, h('strong', null, `Judged a ${j.kind}`), `${scope}${j.tentative ? ', tentative' : ''}`,
        j.said ? [' because ', j.who, ' said', j.where ? ` (${j.where})` : '', ': ', h('q', {class: 'judged-said'}, j.said)] : '',
        '.', j.how ? h('span', {class: 'muted'}, ` ${j.how}.`) : ''));
    }
    if (m.occurrences > 1) {
      parts.push(h('p', null, `Recorded ${m.occurrences} times: near-duplicates are merged into one memory`,
        m.head && m.head !== o.id ? [', whose newest statement is ', this.link(m.head, `#${m.head}`, 'group-head')] : '',
        '.'));
    }
    const by = m.superseded_by;
    if (by) {
      parts.push(h('p', {class: 'superseded-line'}, 'Superseded by ', this.link(by.id, `#${by.id} “${by.title}”`, 'superseded-by'),
        m.superseded_at ? ` on ${fullTime(m.superseded_at)}` : '', '.',
        by.shared && by.shared.length ? h('span', {class: 'shared muted'}, ` Same subject: ${by.shared.map(subject).join(', ')}.`) : ''));
    } else if (status === 'superseded') {
      parts.push(h('p', {class: 'muted'}, 'What replaced it is no longer in memory (deleted).'));
    }
    if (m.replaced && m.replaced.length) {
      parts.push(h('div', {class: 'replaced'}, h('p', null, `It replaced ${m.replaced.length === 1 ? 'an older memory' : `${m.replaced.length} older memories`}:`),
        h('ul', {class: 'mini-items', id: 'replaced'}, m.replaced.map((it) => h('li', null,
          this.link(it.id, `#${it.id} “${it.title}”`, null), h('span', {class: 'flag flag-superseded'}, 'superseded'),
          it.shared && it.shared.length ? h('span', {class: 'shared muted'}, ` · same subject: ${it.shared.map(subject).join(', ')}`) : '')))));
    }
    return h('div', {class: 'lineage'}, parts);
  }

  link(id, text, elId) {
    return h('button', {type: 'button', class: 'link', id: elId || null, dataset: {oid: String(id)},
      onclick: () => this.show({kind: 'observation', id}, true)}, text);
  }

  /** Every field of the memory, corrected by hand (kenning/viewer/editing.py says what each may hold). */
  editForm(o, done) {
    const lines = (v) => (Array.isArray(v) ? v.join('\n') : '');
    const field = (id, label, input, help) => h('div', {class: 'edit-field'},
      h('label', {for: id}, label), input, help ? h('p', {class: 'help', id: `${id}-help`}, help) : null);
    const area = (id, value, rows, help) => h('textarea', {id, name: id.replace(/^edit-/, ''), rows,
      'aria-describedby': help ? `${id}-help` : null, spellcheck: id === 'edit-narrative' || id === 'edit-facts'}, value);
    const titleIn = h('input', {id: 'edit-title', name: 'title', required: true, maxlength: 300, value: o.title || ''});
    const subIn = h('input', {id: 'edit-subtitle', name: 'subtitle', maxlength: 300, value: o.subtitle || ''});
    const typeSel = h('select', {id: 'edit-type', name: 'type'},
      this.meta.types.map((t) => h('option', {value: t.id, selected: t.id === o.type}, `${t.emoji || ''} ${t.label || t.id}`)));
    const narrative = area('edit-narrative', o.narrative || '', 5);
    const facts = area('edit-facts', lines(o.facts), 4, 'One fact per line.');
    const concepts = h('input', {id: 'edit-concepts', name: 'concepts', value: (o.concepts || []).join(', '),
      'aria-describedby': 'edit-concepts-help', spellcheck: 'false'});
    const modified = area('edit-files-modified', lines(o.files_modified), 3, 'One path per line.');
    const read = area('edit-files-read', lines(o.files_read), 3, 'One path per line.');
    const decided = o.user_importance !== null && o.user_importance !== undefined;
    const importance = h('input', {id: 'edit-importance', name: 'importance', type: 'number', min: 0, max: 10, step: 1,
      inputmode: 'numeric', value: decided ? String(o.user_importance) : '', placeholder: String(o.importance ?? ''),
      'aria-describedby': 'edit-importance-help'});
    const err = h('p', {class: 'error', id: 'edit-error', role: 'alert'});
    const form = h('form', {class: 'edit-form', id: 'edit-form', 'aria-label': 'Edit this memory', novalidate: true},
      field('edit-title', 'Title', titleIn),
      field('edit-subtitle', 'Subtitle', subIn),
      field('edit-type', 'Type', typeSel),
      field('edit-narrative', 'Narrative', narrative),
      field('edit-facts', 'Facts', facts, 'One fact per line.'),
      field('edit-concepts', 'Concepts', concepts, 'Separated by commas, e.g. gotcha, pattern.'),
      field('edit-files-modified', 'Files modified', modified, 'One path per line.'),
      field('edit-files-read', 'Files read', read, 'One path per line.'),
      field('edit-importance', 'Importance (0 to 10)', importance,
        `Ranks key memories for the next session. Empty: as the memory index judges it (now ${o.importance ?? 0}). `
        + 'Pin or unpin above to change its layer.'),
      err,
      h('div', {class: 'form-actions'},
        h('button', {type: 'submit', class: 'primary'}, 'Save'),
        h('button', {type: 'button', onclick: done}, 'Cancel')));
    form.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        done();
      }
    });
    const split = (text, sep) => text.split(sep).map((x) => x.trim()).filter(Boolean);
    const same = (a, b) => JSON.stringify(a || []) === JSON.stringify(b || []);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const title = titleIn.value.trim();
      if (!title || title.length > 300) {
        err.textContent = 'A title is 1 to 300 characters.';
        titleIn.setAttribute('aria-invalid', 'true');
        titleIn.focus();
        return;
      }
      const imp = importance.value.trim();
      const impValue = imp === '' ? null : Number(imp);
      if (impValue !== null && !(Number.isInteger(impValue) && impValue >= 0 && impValue <= 10)) {
        err.textContent = 'Importance is a whole number from 0 to 10, or empty.';
        importance.setAttribute('aria-invalid', 'true');
        importance.focus();
        return;
      }
      const changes = {};
      if (title !== o.title) changes.title = title;
      if (subIn.value.trim() !== (o.subtitle || '')) changes.subtitle = subIn.value.trim();
      if (typeSel.value !== o.type) changes.type = typeSel.value;
      if (narrative.value.trim() !== (o.narrative || '').trim()) changes.narrative = narrative.value;
      const lists = {facts: split(facts.value, '\n'), concepts: split(concepts.value, ','),
        files_modified: split(modified.value, '\n'), files_read: split(read.value, '\n')};
      for (const [k, v] of Object.entries(lists)) if (!same(v, o[k])) changes[k] = v;
      if (impValue !== (decided ? o.user_importance : null)) changes.importance = impValue;
      if (!Object.keys(changes).length) return done();
      try {
        const updated = await this.patch(o.id, changes);
        toast('Saved.');
        const data = await api(`observations/${o.id}`);
        this.renderObservation({...data, observation: {...data.observation, ...updated}});
        document.getElementById('act-edit').focus();
      } catch (ex) {
        if (!(ex instanceof AuthError)) err.textContent = `Not saved: ${ex.message}`;
      }
    });
    return form;
  }

  async patch(id, changes) {
    const body = await api(`observations/${id}`, {method: 'PATCH', body: changes});
    const o = body.observation || body;
    this.feed.patch(`o:${id}`, {title: o.title, type: o.type, status: o.status});
    return o;
  }

  /** Delete for good, after a dialog whose default is Cancel and which offers the reversible way. */
  confirmDelete(o) {
    const d = this.dialog;
    document.getElementById('confirm-what').textContent = `“${o.title}” (#${o.id})`;
    const instead = document.getElementById('confirm-retract');
    instead.hidden = o.status === 'retracted';
    d.returnValue = '';
    d.addEventListener('close', async () => {
      if (d.returnValue === 'retract') {
        document.getElementById('act-retract')?.click();
        return;
      }
      if (d.returnValue !== 'delete') {
        document.getElementById('act-delete')?.focus();
        return;
      }
      const buttons = [...this.body.querySelectorAll('.actions button')];
      for (const b of buttons) b.disabled = true;
      try {
        const res = await api(`observations/${o.id}`, {method: 'DELETE'});
        // The stream's "forgotten" can arrive before this answer: it has then taken the row out and closed the
        // detail already (and the row's neighbour has the focus).
        const shown = this.showing(o.id);
        const next = this.feed.remove(`o:${o.id}`);
        if (shown) this.closeRemoved(next);
        toast(`Deleted #${o.id}. The database file is compacted in the background.`);
        document.dispatchEvent(new CustomEvent('kenning:compaction', {detail: res.compaction}));
      } catch (err) {
        for (const b of buttons) b.disabled = false;
        if (!(err instanceof AuthError)) toast(`Not deleted: ${err instanceof ApiError ? err.message : String(err)}`, 'error');
      }
    }, {once: true});
    d.showModal();
  }

  // ---------------------------------------------------------------------- session

  async loadSession(id) {
    const data = await api(`sessions/${id}`, {signal: this.ctrl.signal});
    const s = data.session || {};
    this.title.textContent = `Session #${s.id ?? id} · ${this.projectName(s.project || '')}`;
    const turns = (data.turns || []).map((t) => h('li', {class: 'turn'},
      h('h4', null, `Prompt #${t.number}`, t.at ? h('span', {class: 'muted'}, ` · ${fullTime(t.at)}`) : null),
      t.prompt ? h('blockquote', {class: 'prompt'}, t.prompt) : h('p', {class: 'muted'}, 'no prompt text'),
      this.itemList(t.observations || [], 'No observation from this turn.')));
    const sum = data.summary;
    const fields = [['request', 'Request'], ['investigated', 'Investigated'], ['learned', 'Learned'],
      ['completed', 'Completed'], ['next_steps', 'Next steps'], ['notes', 'Notes']];
    clear(this.body).append(
      h('p', {class: 'muted'}, [s.agent_session_id ? `agent session ${s.agent_session_id}` : '',
        s.project_root || '', s.started_at ? `started ${fullTime(s.started_at)}` : '',
        s.ended_at ? `ended ${fullTime(s.ended_at)}` : '', s.status || ''].filter(Boolean).join(' · ')),
      section('Timeline', turns.length ? h('ol', {class: 'timeline'}, turns) : h('p', {class: 'muted'}, 'No prompts.')),
      section('Summary', sum ? h('dl', {class: 'kv'}, fields.filter(([k]) => sum[k]).map(([k, label]) =>
        [h('dt', null, label), h('dd', null, plain(sum[k]))])) : h('p', {class: 'muted'}, 'No summary yet.')),
      section('What it was told from memory, and why', toldSlot(s.agent_session_id, this.ctrl && this.ctrl.signal,
        (id, text) => this.link(id, text, null))));
  }

  itemList(items, empty) {
    if (!items.length) return h('p', {class: 'muted'}, empty);
    return h('ul', {class: 'mini-items'}, items.map((it) => {
      const info = this.typeInfo(it.type) || {};
      return h('li', null, h('button', {
        type: 'button', class: ['mini-item', `status-${it.status || 'active'}`],
        onclick: () => this.show(it.kind === 'observation' ? {kind: 'observation', id: it.id}
          : {kind: 'session', id: it.session_id}, true),
      }, h('span', {class: ['dot', `fill-${it.kind === 'observation' ? it.type : it.kind}`], 'aria-hidden': 'true'}),
      h('span', {class: 'mini-type'}, it.kind === 'observation' ? (info.label || it.type) : it.kind), ' ',
      h('span', {class: 'mini-title'}, rich(it.title || '(untitled)')),
      it.status === 'retracted' ? h('span', {class: 'flag flag-retracted'}, 'no longer true') : null,
      h('span', {class: 'muted'}, ` · ${fullTime(it.at)}`)));
    }));
  }
}

function section(title, content) {
  return h('section', {class: 'detail-section'}, h('h3', null, title), content);
}

function fileList(files) {
  if (!files.length) return h('span', {class: 'muted'}, 'none');
  return h('ul', {class: 'files'}, files.map((f) => h('li', null, h('code', null, f))));
}

/** A subject as people read it: "cmd:pnpm" → "the command pnpm". */
function subject(s) {
  const [kind, ...rest] = String(s).split(':');
  const name = rest.join(':');
  const what = {cmd: 'the command', file: 'the file', set: 'the setting', id: 'the identifier', work: 'the work on',
    ticket: 'the ticket'}[kind];
  return what ? `${what} ${name}` : s;
}
