// The injection ledger in the detail panel (kenning/store/injections.py, /api/ledger/…): how often a
// memory was given to sessions and used, and what a session was told from memory and why.

import {api, AuthError} from './api.js';
import {h, clear, fullTime, num} from './dom.js';

// The paths of the injection ledger.
const VIA = {session_start: 'session start', prompt: 'prompt recall', file: 'file history', mcp: 'MCP answer'};

/** The injection ledger of one memory: how often it was given, why, and whether it was used. */
export function givenSlot(id, signal, openSession = null) {
  const slot = h('div', {id: 'ledger-memory'}, h('p', {class: 'muted'}, 'Loading…'));
  api(`/api/ledger/memory/${id}`, {signal}).then((led) => {
    const n = led.given || 0;
    const m = led.used || 0;
    clear(slot).append(
      h('p', {class: 'ledger-counts'}, `Given ${n} time${n === 1 ? '' : 's'}, used ${m} time${m === 1 ? '' : 's'}`,
        led.last_given ? ` · last given ${fullTime(led.last_given)}` : '',
        ` · last used ${led.last_used ? fullTime(led.last_used) : 'never'}.`),
      (led.injections || []).length ? h('ul', {class: 'ledger-list'}, led.injections.map((i) => h('li', null,
        h('span', {class: 'muted'}, `${fullTime(i.at)} · ${VIA[i.via] || i.via}`),
        i.session ? [' · ', i.session_id && openSession
          ? h('button', {type: 'button', class: 'link session-link', dataset: {sid: String(i.session_id)},
            title: `Open session ${i.session}: what it was told, and why`, onclick: () => openSession(i.session_id)},
          `session ${String(i.session).slice(0, 12)}`)
          : h('span', {class: 'muted'}, `session ${String(i.session).slice(0, 12)}`)] : '',
        ` · ${i.reason || 'listed'}`))) : h('p', {class: 'muted'}, 'Not given to any session yet (what a hook builds '
        + 'without the worker is not recorded).'),
      (led.uses || []).length ? h('ul', {class: 'ledger-uses'}, led.uses.map((u) => h('li', null,
        h('span', {class: 'muted'}, fullTime(u.at)), ` · used: ${u.kind} `, u.detail ? h('code', null, u.detail) : ''))) : '');
  }).catch((err) => {
    if (err.name === 'AbortError' || err instanceof AuthError) return;
    clear(slot).append(h('p', {class: 'muted'}, `The ledger could not be read: ${err.message}.`));
  });
  return slot;
}

/** The injection ledger of one agent session: what it was told, why, and what came of it. */
export function toldSlot(agentSession, signal, link) {
  const slot = h('div', {id: 'ledger-session'}, h('p', {class: 'muted'}, 'Loading…'));
  if (!agentSession) {
    clear(slot).append(h('p', {class: 'muted'}, 'No agent session id: nothing recorded.'));
    return slot;
  }
  api('/api/ledger/session', {params: {session: agentSession}, signal}).then((rep) => {
    if (!rep.given) {
      clear(slot).append(h('p', {class: 'muted'}, 'Nothing recorded as given to this session (a context a hook '
        + 'built without the worker is not recorded).'));
      return;
    }
    const groups = [];
    let last = null;
    for (const t of rep.injections || []) {
      const head = `${fullTime(t.at)} · ${VIA[t.via] || t.via}`;
      if (head !== last) {
        groups.push({head, rows: []});
        last = head;
      }
      groups[groups.length - 1].rows.push(t);
    }
    clear(slot).append(
      h('p', {class: 'ledger-counts'}, `Told ${rep.given} ${rep.given === 1 ? 'memory' : 'memories'} `
        + `(~${num(rep.tokens)} tokens): ${rep.used} used, ${rep.contradicted} superseded or retracted since.`),
      ...groups.flatMap((g) => [h('h4', null, g.head), h('ul', {class: 'ledger-list'}, g.rows.map((t) => h('li', null,
        link(t.id, `#${t.id}`), ` ${t.title || '(forgotten)'}`,
        h('span', {class: 'muted'}, ` · why: ${t.reason || 'listed'}`),
        t.used ? h('span', {class: 'flag flag-used'}, 'used') : null,
        t.contradicted ? h('span', {class: 'flag flag-superseded'}, `${t.status} since`) : null)))]));
  }).catch((err) => {
    if (err.name === 'AbortError' || err instanceof AuthError) return;
    clear(slot).append(h('p', {class: 'muted'}, `The ledger could not be read: ${err.message}.`));
  });
  return slot;
}
