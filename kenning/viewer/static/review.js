// The Check-up tab: the walk `kenning review` takes in the terminal (standing rules to confirm or demote,
// memories never used, memories about the same subject), with each answer a button. Every change goes
// through the worker's routes, which go through the memory service (logged, live on other pages).

import {api, AuthError, link, retryable} from './api.js';
import {h, clear, fullTime, num, toast} from './dom.js';

const times = (n) => `${num(n)} ${n === 1 ? 'time' : 'times'}`;

export class Review {
  constructor({root, projectName, onOpen}) {
    Object.assign(this, {root, projectName, onOpen});
    this.project = '';
    this.gen = 0;
  }

  async load(project) {
    this.project = project || '';
    const gen = ++this.gen;
    clear(this.root).append(h('p', {class: 'muted'}, 'Loading…'));
    let body;
    try {
      body = await api('/api/ledger/review', {params: {project: this.project}});
    } catch (err) {
      if (err instanceof AuthError || gen !== this.gen) return;
      clear(this.root).append(h('p', {class: 'error'}, `Could not load the check-up: ${err.message}.`
        + (retryable(err) ? ' It loads by itself when the worker answers.' : '')));
      if (retryable(err)) link.lost(err, () => this.load(this.project));
      return;
    }
    if (gen !== this.gen) return;
    this.render(body);
    document.dispatchEvent(new CustomEvent('kenning:review-loaded'));
  }

  render(b) {
    const where = this.project ? `in ${this.projectName(this.project)}` : 'in all projects';
    const rules = b.rules || [];
    const never = b.never_used || [];
    const pairs = b.contradictions || [];
    clear(this.root).append(
      h('p', {class: 'muted', id: 'review-scope'}, `Memory ${where} (the project picker above chooses). `
        + 'The same questions as kenning review in a terminal; nothing changes until you press a button.'),
      h('section', {class: 'panel', id: 'review-rules', 'aria-labelledby': 'review-rules-h'},
        h('h3', {id: 'review-rules-h'}, `Standing rules (${num(rules.length)})`),
        h('p', {class: 'muted'}, 'Given first to every session. Confirm the ones that hold, demote the ones that are '
          + 'not rules to ordinary memories, forget the wrong ones.'),
        rules.length ? h('ul', {class: 'review-list'}, rules.map((r) => this.ruleItem(r)))
          : h('p', {class: 'muted'}, 'No standing rules.')),
      h('section', {class: 'panel', id: 'review-never', 'aria-labelledby': 'review-never-h'},
        h('h3', {id: 'review-never-h'}, `Never used in ${num(b.older_than_days)} days (${num(b.never_used_total || 0)})`),
        h('p', {class: 'muted'}, 'No session fetched, cited or acted on them. Keep what still matters; forget the rest.'),
        never.length ? h('ul', {class: 'review-list'}, never.map((m) => this.neverItem(m)))
          : h('p', {class: 'muted'}, 'Nothing: every memory this old was used at least once.')),
      h('section', {class: 'panel', id: 'review-pairs', 'aria-labelledby': 'review-pairs-h'},
        h('h3', {id: 'review-pairs-h'}, `About the same thing (${num(pairs.length)} pairs)`),
        h('p', {class: 'muted'}, 'Current memories that name the same subject: both may hold, or the newer replaces '
          + 'the older.'),
        pairs.length ? h('ul', {class: 'review-list'}, pairs.map((p) => this.pairItem(p)))
          : h('p', {class: 'muted'}, 'No two current memories name the same subject.')),
    );
  }

  title(m) {
    return h('button', {type: 'button', class: 'link', dataset: {oid: String(m.id)}, onclick: (e) => this.onOpen(m.id, e.currentTarget)},
      `#${m.id} ${m.title}`);
  }

  ruleItem(r) {
    const li = h('li', {class: 'review-item', id: `review-rule-${r.id}`, dataset: {oid: String(r.id)}},
      h('p', {class: 'review-title'}, this.title(r)),
      h('p', {class: 'muted'}, `since ${fullTime(r.created_at)} · given ${times(r.given)}, used ${times(r.used)}`
        + (r.confirmed ? ' · confirmed by you' : '')));
    const actions = h('div', {class: 'actions', role: 'group', 'aria-label': `What to do with #${r.id}`},
      h('button', {type: 'button', class: 'review-confirm', onclick: () => this.act(li, 'Confirmed: it stays a standing rule.',
        () => api('/api/observations/confirm', {method: 'POST', body: {id: r.id}}))}, 'Confirm'),
      h('button', {type: 'button', class: 'review-demote', onclick: () => this.act(li, 'Demoted: an ordinary memory now.',
        () => api('/api/observations/unpin', {method: 'POST', body: {id: r.id}}))}, 'Demote'),
      this.forgetButton(li, r));
    li.append(actions, h('p', {class: 'review-status', role: 'status'}));
    return li;
  }

  neverItem(m) {
    const li = h('li', {class: 'review-item', id: `review-never-${m.id}`, dataset: {oid: String(m.id)}},
      h('p', {class: 'review-title'}, this.title(m)),
      h('p', {class: 'muted'}, `${m.type} · since ${fullTime(m.created_at)} · given ${times(m.given)}, never used`));
    li.append(h('div', {class: 'actions', role: 'group', 'aria-label': `What to do with #${m.id}`},
      h('button', {type: 'button', class: 'review-keep', onclick: () => this.done(li, 'Kept.')}, 'Keep'),
      this.forgetButton(li, m)), h('p', {class: 'review-status', role: 'status'}));
    return li;
  }

  pairItem(p) {
    const {older, newer} = p;
    const li = h('li', {class: 'review-item', id: `review-pair-${older.id}-${newer.id}`},
      h('p', {class: 'muted'}, `Both name ${p.subject}`),
      h('p', null, 'Older: ', this.title(older), h('span', {class: 'muted'}, ` · ${fullTime(older.created_at)}`)),
      h('p', null, 'Newer: ', this.title(newer), h('span', {class: 'muted'}, ` · ${fullTime(newer.created_at)}`)));
    li.append(h('div', {class: 'actions', role: 'group', 'aria-label': `#${older.id} and #${newer.id}`},
      h('button', {type: 'button', class: 'review-both', onclick: () => this.done(li, 'Both kept.')}, 'Both hold'),
      h('button', {type: 'button', class: 'review-supersede', onclick: () => this.act(li,
        `Superseded: #${newer.id} replaces #${older.id}.`,
        () => api('/api/observations/supersede', {method: 'POST', body: {ids: [older.id], by: newer.id}}))},
      `#${newer.id} replaces #${older.id}`)), h('p', {class: 'review-status', role: 'status'}));
    return li;
  }

  /** Forget asks once more, in place (it cannot be undone). */
  forgetButton(li, m) {
    const sure = h('span', {class: 'review-sure', hidden: true}, `Delete #${m.id} for good? `,
      h('button', {type: 'button', class: 'danger review-forget-yes', onclick: () => this.act(li, `Forgotten: #${m.id} is deleted.`,
        () => api(`observations/${m.id}`, {method: 'DELETE'}))}, 'Delete for good'), ' ',
      h('button', {type: 'button', class: 'review-forget-no', onclick: () => {
        sure.hidden = true;
        btn.hidden = false;
        btn.focus();
      }}, 'Cancel'));
    const btn = h('button', {type: 'button', class: 'review-forget', onclick: () => {
      btn.hidden = true;
      sure.hidden = false;
      sure.querySelector('.review-forget-no').focus();
    }}, 'Forget…');
    return h('span', null, btn, sure);
  }

  async act(li, said, call) {
    const buttons = [...li.querySelectorAll('button:not(.link)')];
    for (const b of buttons) b.disabled = true;
    try {
      await call();
    } catch (err) {
      for (const b of buttons) b.disabled = false;
      if (err instanceof AuthError) return;
      li.querySelector('.review-status').textContent = `Not done: ${err.message}.`;
      toast(`Not done: ${err.message}.`, 'error');
      return;
    }
    this.done(li, said);
    toast(said);
  }

  done(li, said) {
    li.dataset.done = 'true';
    for (const b of li.querySelectorAll('.actions button')) b.disabled = true;
    const status = li.querySelector('.review-status');
    status.textContent = said;
    status.classList.add('review-done');
  }
}
