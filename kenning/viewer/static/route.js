// What the page shows, kept in the address: the tab, the feed's filters, the search and the open
// item. Reload, Back/Forward and a pasted link all land on the same view. The query string is
// used (the fragment carries `kenning open`'s one-time code, removed at once).

export const TABS = ['feed', 'preview', 'stats', 'review', 'team', 'settings'];
const KEYS = ['tab', 'project', 'memory', 'type', 'concept', 'from', 'to', 'q', 'sort', 'item'];
export const MEMORY_VIEWS = ['', 'rule', 'key', 'log', 'archived', 'superseded'];
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The view in the current address; anything malformed is dropped, never trusted. */
export function readView() {
  const p = new URLSearchParams(location.search);
  const get = (k) => (p.get(k) || '').slice(0, 20000);
  const view = {};
  for (const k of KEYS) view[k] = get(k).trim();
  if (!TABS.includes(view.tab)) view.tab = 'feed';
  for (const d of ['from', 'to']) if (view[d] && !DAY.test(view[d])) view[d] = '';
  if (view.item && !/^[os]\d{1,18}$/.test(view.item)) view.item = '';
  if (!MEMORY_VIEWS.includes(view.memory)) view.memory = '';
  if (!['newest', 'oldest'].includes(view.sort)) view.sort = '';
  return view;
}

function search(view) {
  const p = new URLSearchParams();
  for (const key of KEYS) {
    const v = view[key];
    if (!v || (key === 'tab' && v === 'feed')) continue;
    p.set(key, v);
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Put the view in the address: a new history entry (push) or the current one rewritten. */
export function writeView(view, {push = false} = {}) {
  const url = location.pathname + search(view);
  if (url === location.pathname + location.search) return;
  if (push) history.pushState(null, '', url);
  else history.replaceState(history.state, '', url);
}
