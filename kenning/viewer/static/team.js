// Team memory in the viewer (kenning/team, docs/team.md): where a memory lives and who vouches for it (a
// tag on its card, a line in its detail), and the Team tab, where a reviewer approves, rejects or edits what
// waits on the hub, seeing the word diff against what it replaces (GET/POST /api/team/review: the path
// `kenning team review` takes).

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

/** A word diff ([[op, text], …]: '=' kept, '-' removed, '+' added) as text with <del> and <ins>; a screen reader
 * hears "removed" and "added" (hidden words around each change), the hub's text goes in as text only. */
export function diffNodes(diff) {
  return diff.map(([op, text]) => (op === '=' ? text
    : [h('span', {class: 'sr-only'}, op === '-' ? ' [removed: ' : ' [added: '),
      h(op === '-' ? 'del' : 'ins', null, text), h('span', {class: 'sr-only'}, '] ')]));
}

const changes = (diff) => (diff || []).some(([op]) => op !== '=');

/** One memory a waiting one replaces: its title, then what the waiting one changes in its title and text. */
function replaced(o, m) {
  const bodyToo = changes(o.body_diff) && (o.body !== o.title || m.body !== m.title);
  return h('li', {class: 'review-replaced', 'data-gid': o.gid},
    h('p', {class: 'muted'}, 'Replaces “', h('span', {class: 'review-old-title'}, o.title), '”; what changes:'),
    changes(o.title_diff) ? h('p', {class: 'diff diff-title'}, h('span', {class: 'diff-label'}, 'Title: '),
      diffNodes(o.title_diff)) : null,
    bodyToo ? h('p', {class: 'diff diff-body'}, h('span', {class: 'diff-label'}, 'Text: '),
      diffNodes(o.body_diff)) : null);
}

/** The Team tab: for each team this machine is in, a section with the memories waiting for review, each with
 * what it replaces; approve or reject. A team whose hub cannot be read says so in its own section. */
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
    clear(this.root).append(h('p', {class: 'muted'}, 'New team memories wait here until a teammate approves them; '
      + 'nobody approves their own.'), ...data.teams.map((t) => this.section(t)));
  }

  /** One team's part: a heading (the landmark a screen reader jumps to), then its list, or why its hub failed. */
  section(t) {
    const heading = h('h3', {id: `team-heading-${t.team}`}, `Team ${t.team}, as ${t.user}`);
    const body = t.error ? h('p', {class: 'error', role: 'alert'}, `The hub of team ${t.team} could not be read: `
      + t.error)
      : t.pending.length ? h('ul', {class: 'review-list'}, t.pending.map((m) => this.row({...m, team: t.team})))
        : h('p', {class: 'muted review-empty'}, 'Nothing waits for review.');
    return h('section', {class: 'team-section', id: `team-${t.team}`, 'data-team': t.team,
      'aria-labelledby': heading.id}, heading, body);
  }

  row(m) {
    const error = h('p', {class: 'error', role: 'alert'});
    const edit = this.editor(m);
    const approve = h('button', {type: 'button', class: 'review-approve', disabled: m.yours,
      title: m.yours ? 'yours: a teammate reviews it' : 'Approve: every teammate\'s sessions are told it',
      onclick: () => this.decide(m, 'approved', li, error, edit)}, 'Approve');
    const li = h('li', {class: 'review-item', 'data-gid': m.gid},
      h('p', null, h('span', {class: ['layer', `layer-${m.layer}`]}, m.layer === 'rule' ? 'Rule' : 'Key'), ' ',
        h('strong', {class: 'review-title'}, m.title)),
      m.body && m.body !== m.title ? h('p', {class: 'review-body'}, m.body) : null,
      h('p', {class: 'muted review-by'}, `from ${m.author}, ${fullTime(m.created_at)}`),
      (m.replaces || []).length ? h('ul', {class: 'review-replaces', 'aria-label': 'What it replaces'},
        m.replaces.map((o) => replaced(o, m))) : null,
      edit.form,
      h('div', {class: 'actions', role: 'group', 'aria-label': 'Review'},
        approve, ' ',
        h('button', {type: 'button', class: 'review-edit', disabled: m.yours, 'aria-expanded': 'false',
          'aria-controls': edit.form.id, onclick: (ev) => edit.toggle(ev.currentTarget, approve)}, 'Edit'), ' ',
        h('button', {type: 'button', class: 'review-reject', disabled: m.yours,
          onclick: () => this.decide(m, 'rejected', li, error, edit)}, 'Reject')),
      error);
    return li;
  }

  /** The fields of an approval with the reviewer's own wording, hidden until Edit opens them. */
  editor(m) {
    const key = m.gid.replace(/[^0-9a-f]/g, '-');
    const title = h('input', {type: 'text', class: 'review-edit-title', id: `edit-title-${key}`, maxlength: 200,
      value: m.title, required: true});
    const text = h('textarea', {class: 'review-edit-text', id: `edit-text-${key}`, rows: 5, maxlength: 4000});
    text.value = m.body || '';
    const form = h('div', {class: 'review-editor', id: `edit-${key}`, hidden: true, role: 'group',
      'aria-label': 'Your wording, approved in place of the author\'s'},
      h('label', {for: title.id}, 'Title'), title, h('label', {for: text.id}, 'Text'), text);
    return {
      form,
      open: () => !form.hidden,
      values: () => ({title: title.value, text: text.value}),
      toggle: (button, approve) => {
        form.hidden = !form.hidden;
        button.setAttribute('aria-expanded', String(!form.hidden));
        button.textContent = form.hidden ? 'Edit' : 'Cancel edit';
        approve.textContent = form.hidden ? 'Approve' : 'Approve with edit';
        if (!form.hidden) title.focus();
      },
    };
  }

  async decide(m, decision, li, error, edit) {
    error.textContent = '';
    let edited = decision === 'approved' && edit.open() ? edit.values() : null;
    if (edited && edited.title === m.title && edited.text === (m.body || '')) edited = null;  // opened, unchanged
    for (const b of li.querySelectorAll('button')) b.disabled = true;
    try {
      await api('/api/team/review', {method: 'POST', body: {gid: m.gid, decision, team: m.team,
        ...(edited || {})}});
    } catch (err) {
      error.textContent = err.message;
      for (const b of li.querySelectorAll('button')) b.disabled = m.yours;
      return;
    }
    toast(decision !== 'approved' ? `Rejected: “${m.title}” is told to nobody.`
      : edited ? `Approved with your edit: “${edited.title}” reaches every teammate at their next sync.`
        : `Approved: “${m.title}” reaches every teammate at their next sync.`);
    const list = li.closest('.review-list');
    li.remove();
    if (list && !list.querySelector('.review-item')) {
      list.replaceWith(h('p', {class: 'muted review-empty'}, 'Nothing waits for review.'));
    }
  }
}
