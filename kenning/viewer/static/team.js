// Team memory in the viewer (kenning/team, docs/team.md): where a memory lives and who vouches for it (a
// tag on its card, a line in its detail), and the Team tab, where a reviewer approves or rejects what waits
// on the hub (GET/POST /api/team/review: the path `kenning team review` takes).

import {api, AuthError} from './api.js';
import {h, clear, fullTime, toast} from './dom.js';

const SCOPE = {
  personal: ['personal', 'Personal: on this machine only, never shared'],
  mine: ['mine · every machine', 'Yours: your own preference, on every machine you joined your own space from'],
  team: ['team', 'Shared with your team through the team hub'],
};
const REVIEW = {unsent: 'not sent yet', pending: 'pending review', approved: 'approved', rejected: 'rejected'};

const day = (at) => (at ? new Date(at * 1000).toISOString().slice(0, 10) : '');

/** The card's tag: personal, mine on every machine, or team (with its review state when not approved). */
export function scopeTag(item) {
  const s = item.share;
  if (!s || item.kind !== 'observation') return null;
  const [label, title] = SCOPE[s.scope] || SCOPE.personal;
  const state = s.scope !== 'personal' && s.review !== 'approved' ? ` · ${REVIEW[s.review] || s.review}` : '';
  return h('span', {class: ['scope', `scope-${s.scope}`, s.review ? `review-${s.review}` : ''], title,
    'data-scope': s.scope}, label + state);
}

/** "From ana, 2026-12-03, approved by li" (or pending, rejected, not sent yet): the detail's line. */
export function shareLine(o) {
  const s = o.share;
  if (!s || s.scope === 'personal') {
    return h('p', {class: 'share-line', id: 'share-line'}, h('strong', null, 'Personal'),
      ': on this machine only, never shared.');
  }
  const where = s.scope === 'mine' ? 'Yours on every machine' : `Team ${s.team}`;
  const review = s.review === 'approved' || s.review === 'rejected'
    ? `${s.review} ${s.reviewer === 'automatic' ? 'automatically' : `by ${s.reviewer || 'a reviewer'}`}`
      + (s.reviewed_at ? ` on ${day(s.reviewed_at)}` : '')
    : REVIEW[s.review] || s.review;
  return h('p', {class: 'share-line', id: 'share-line'}, h('strong', null, where),
    `: from ${s.author || 'you'}, ${day(o.created_at)}, ${review}.`);
}

/** The Team tab: the memories waiting for review, each with what it replaces; approve or reject. */
export class TeamReview {
  constructor(root) {
    this.root = root;
  }

  async load() {
    clear(this.root).append(h('p', {class: 'muted'}, 'Loading…'));
    let data;
    try {
      data = await api('/api/team/review');
    } catch (err) {
      if (err instanceof AuthError) throw err;
      clear(this.root).append(h('p', {class: 'error', role: 'alert'}, `The team hub could not be read: ${err.message}`));
      return;
    }
    if (!data.team) {
      clear(this.root).append(h('p', {class: 'muted'}, 'This machine joined no team: ',
        h('code', null, 'kenning team join --dsn … --team …'), ' in a repository (docs/team.md).'));
      return;
    }
    const list = h('ul', {class: 'review-list', id: 'review-list'});
    for (const m of data.pending) list.append(this.row(m));
    clear(this.root).append(
      h('p', {class: 'muted'}, `Team ${data.team}, as ${data.user}. New team memories wait here until a teammate `
        + 'approves them; nobody approves their own.'),
      data.pending.length ? list : h('p', {class: 'muted', id: 'review-empty'}, 'Nothing waits for review.'));
  }

  row(m) {
    const error = h('p', {class: 'error', role: 'alert'});
    const li = h('li', {class: 'review-item', 'data-gid': m.gid},
      h('p', null, h('span', {class: ['layer', `layer-${m.layer}`]}, m.layer === 'rule' ? 'Rule' : 'Key'), ' ',
        h('strong', {class: 'review-title'}, m.title)),
      m.body && m.body !== m.title ? h('p', {class: 'review-body'}, m.body) : null,
      h('p', {class: 'muted review-by'}, `from ${m.author}, ${fullTime(m.created_at)}`),
      (m.replaces || []).length ? h('ul', {class: 'review-replaces', 'aria-label': 'What it replaces'},
        m.replaces.map((t) => h('li', null, h('del', null, t)))) : null,
      h('div', {class: 'actions', role: 'group', 'aria-label': 'Review'},
        h('button', {type: 'button', class: 'review-approve', disabled: m.yours,
          title: m.yours ? 'yours: a teammate reviews it' : 'Approve: every teammate\'s sessions are told it',
          onclick: () => this.decide(m, 'approved', li, error)}, 'Approve'), ' ',
        h('button', {type: 'button', class: 'review-reject', disabled: m.yours,
          onclick: () => this.decide(m, 'rejected', li, error)}, 'Reject')),
      error);
    return li;
  }

  async decide(m, decision, li, error) {
    error.textContent = '';
    for (const b of li.querySelectorAll('button')) b.disabled = true;
    try {
      await api('/api/team/review', {method: 'POST', body: {gid: m.gid, decision}});
    } catch (err) {
      error.textContent = err.message;
      for (const b of li.querySelectorAll('button')) b.disabled = m.yours;
      return;
    }
    li.remove();
    toast(decision === 'approved' ? `Approved: “${m.title}” reaches every teammate at their next sync.`
      : `Rejected: “${m.title}” is told to nobody.`);
    if (!this.root.querySelector('.review-item')) {
      this.root.querySelector('#review-list')?.replaceWith(
        h('p', {class: 'muted', id: 'review-empty'}, 'Nothing waits for review.'));
    }
  }
}
