// Kenning viewer: boot, tabs, header (project, search, live indicator, theme), the address
// (route.js), the connection banner, keyboard.

import {api, ApiError, AuthError, clearToken, getToken, link, NetworkError, openStream, retryable, signIn,
  takeCodeFromUrl} from './api.js';
import {h, $, bytes, debounce, refreshTimes, toast} from './dom.js';
import {Feed} from './feed.js';
import {Detail} from './detail.js';
import {Bulk} from './bulk.js';
import {Write} from './write.js';
import {readView, writeView} from './route.js';
import {Preview, SettingsForm, Stats} from './views.js';
import {Review} from './review.js';
import {TeamReview} from './team.js';

const THEME_KEY = 'kenning.theme';
const root = document.documentElement;

// ---------------------------------------------------------------------------- theme

function effectiveTheme() {
  return root.dataset.theme || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
}

function showTheme() {
  const dark = effectiveTheme() === 'dark';
  $('#theme-toggle').setAttribute('aria-pressed', dark ? 'true' : 'false');
  $('#theme-label').textContent = 'Dark theme';
}

const storedTheme = localStorage.getItem(THEME_KEY);
if (storedTheme === 'light' || storedTheme === 'dark') root.dataset.theme = storedTheme;
showTheme();
$('#theme-toggle').addEventListener('click', () => {
  const next = effectiveTheme() === 'dark' ? 'light' : 'dark';
  root.dataset.theme = next;
  localStorage.setItem(THEME_KEY, next);
  showTheme();
});
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', showTheme);

// The detail panel starts below the header, whatever height the header wraps to.
new ResizeObserver(() => {
  root.style.setProperty('--chrome-h', `${Math.ceil($('#chrome').getBoundingClientRect().height)}px`);
}).observe($('#chrome'));

// ---------------------------------------------------------------------------- state

const state = {meta: null, types: new Map(), concepts: new Map(), stream: null, started: false};
const typeInfo = (id) => state.types.get(id);
const conceptLabel = (id) => state.concepts.get(id) || id;
// Projects are keyed by their repository's canonical path; people read the name (meta gives both).
const projectName = (key) => {
  const p = state.meta && state.meta.projects.find((x) => x.project === key);
  if (p && p.name) return p.name;
  return String(key || '').replace(/[\\/]+$/, '').split(/[\\/]/).pop() || key; // a new one: its folder
};
let metaReady;
const metaPromise = new Promise((resolve) => { metaReady = resolve; });

const feed = new Feed({
  list: $('#feed'), sentinel: $('#feed-sentinel'), heading: $('#feed-heading'), end: $('#feed-end'),
  typeInfo, conceptLabel, projectName, ready: metaPromise,
  onOpen: (item, el) => {
    if (!bulk.take(item, el)) detail.openItem(item, el);
  },
  onSession: (sid, el) => detail.openSession(sid, el),
});
const bulk = new Bulk({bar: $('#bulk'), feed, onChanged: () => feed.reset()});
new Write({slot: $('#bulk'), projects: () => (state.meta && state.meta.projects) || [],
  types: () => (state.meta && state.meta.types) || [], current: () => $('#project').value,
  onSaved: (id) => {
    feed.reset();
    detail.show({kind: 'observation', id});
  }});
const detail = new Detail({
  panel: $('#detail'), title: $('#detail-title'), body: $('#detail-body'), back: $('#detail-back'),
  close: $('#detail-close'), dialog: $('#confirm-delete'), meta: {types: []}, feed, typeInfo, conceptLabel, projectName,
  onChange: () => commit(true),
});
const preview = new Preview({form: $('#preview-form'), select: $('#preview-project'), size: $('#preview-size'),
  excluded: $('#preview-excluded'), pre: $('#preview-text')});
const settings = new SettingsForm({form: $('#settings-form'), fields: $('#settings-fields'),
  status: $('#settings-status'), all: $('#settings-all'), file: $('#settings-file')});
const stats = new Stats($('#stats'), typeInfo, projectName);
const review = new Review({root: $('#review'), projectName, onOpen: (id, el) => {
  detail.opener = el;
  detail.stack = [];
  detail.found = null;
  detail.show({kind: 'observation', id});
}});
const team = new TeamReview($('#team-review'));

// ----------------------------------------------------------------------------- tabs

const tabs = [...document.querySelectorAll('[role="tab"]')];
const tabName = (t) => t.id.replace(/^tab-/, '');
const currentTab = () => tabs.find((t) => t.getAttribute('aria-selected') === 'true') || tabs[0];

function selectTab(tab, {focus = false, record = true} = {}) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute('aria-selected', on ? 'true' : 'false');
    t.tabIndex = on ? 0 : -1;
    document.getElementById(t.getAttribute('aria-controls')).hidden = !on;
  }
  if (focus) tab.focus();
  if (record) commit(true);
  if (!state.started) return;
  const name = tabName(tab);
  if (name === 'stats') stats.load($('#project').value);
  if (name === 'review') review.load($('#project').value);
  if (name === 'preview') preview.load();
  if (name === 'team') team.load();
  if (name === 'settings' && !settings.settings.length) settings.load();
}

for (const t of tabs) t.addEventListener('click', () => selectTab(t));
$('.tabs').addEventListener('keydown', (e) => {
  const shown = tabs.filter((t) => !t.hidden);  // the Team tab shows only on a machine that joined a team
  const i = shown.indexOf(document.activeElement);
  if (i < 0) return;
  let j = null;
  if (e.key === 'ArrowRight') j = (i + 1) % shown.length;
  else if (e.key === 'ArrowLeft') j = (i - 1 + shown.length) % shown.length;
  else if (e.key === 'Home') j = 0;
  else if (e.key === 'End') j = shown.length - 1;
  if (j === null) return;
  e.preventDefault();
  selectTab(shown[j], {focus: true});
});

/** The Team tab, on a machine that joined a team (asked without reaching the hub). */
async function showTeamTab() {
  try {
    const data = await api('/api/team/review?peek=1');
    $('#tab-team').hidden = !data.team;
    if (!data.team && currentTab() === $('#tab-team')) selectTab(tabs[0], {record: false});
  } catch (err) {
    if (err instanceof AuthError) return;
  }
}

// -------------------------------------------------------------------------- address

/** The view as the controls show it now. */
function currentView() {
  return {tab: tabName(currentTab()), project: $('#project').value, memory: $('#f-memory').value, type: $('#f-type').value,
    concept: $('#f-concept').value, from: $('#f-from').value, to: $('#f-to').value, q: $('#search').value.trim(),
    sort: $('#search').value.trim() && $('#search-sort').value !== 'relevance' ? $('#search-sort').value : '',
    item: detail.ref};
}

let restoring = false;
/** Record the view in the address (a new Back step with push); nothing while a view is restored. */
function commit(push) {
  if (restoring || !state.started) return;
  writeView(currentView(), {push});
}

function setSelect(sel, value) {
  if (value && ![...sel.options].some((o) => o.value === value)) {
    sel.append(h('option', {value}, value)); // from a link: kept even before meta names it
  }
  sel.value = value;
}

/** Show what the address says: tab, filters, query and open item (load, Back, a pasted link). */
function restore(view) {
  restoring = true;
  try {
    setSelect($('#project'), view.project);
    $('#f-memory').value = view.memory;
    setSelect($('#f-type'), view.type);
    setSelect($('#f-concept'), view.concept);
    $('#f-from').value = view.from;
    $('#f-to').value = view.to;
    $('#search').value = view.q;
    $('#search-sort').value = view.sort || 'relevance';
    feed.setSort($('#search-sort').value);
    showSearchTools();
    checkDates();
    const tab = tabs.find((t) => tabName(t) === view.tab) || tabs[0];
    if (tab !== currentTab() || !state.restoredOnce) selectTab(tab, {record: false});
    state.restoredOnce = true;
    feed.setView(filterValues(), view.q);
    countFilters();
    detail.openRef(view.item);
  } finally {
    restoring = false;
  }
}

window.addEventListener('popstate', () => {
  if (state.started) restore(readView());
});

// ---------------------------------------------------------------------- token flow

function showTokenForm(message) {
  if (state.stream) {
    state.stream.close();
    state.stream = null;
  }
  state.started = false;
  setLive('signed-out');
  document.body.classList.add('needs-token');
  $('#token-view').hidden = false;
  for (const t of tabs) document.getElementById(t.getAttribute('aria-controls')).hidden = true;
  detail.close({quiet: true});
  $('#token-why').textContent = message || 'This page needs the worker\'s access token.';
  $('#token-input').value = '';
  $('#token-input').focus();
}

window.addEventListener('kenning:unauthorised', (e) => {
  if (!state.started && !$('#token-view').hidden) return;
  clearToken();
  showTokenForm(e.detail ? `The worker refused the token: ${e.detail}. Paste the current one.`
    : 'This page needs the worker\'s access token.');
});

$('#token-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const value = $('#token-input').value.trim();
  if (!value) return;
  $('#token-input').value = '';
  const problem = await signIn({token: value}); // the page keeps a session, never the token
  if (problem) showTokenForm(`The worker refused the token: ${problem}.`);
  else start();
});

// ----------------------------------------------------------------------------- live

const LIVE_TEXT = {connected: 'live', reconnecting: 'reconnecting', offline: 'offline', 'signed-out': 'not signed in',
  unauthorised: 'not signed in'};

function setLive(st) {
  const live = $('#live');
  if (live.dataset.state === st) return;
  live.dataset.state = st;
  $('#live-state').textContent = LIVE_TEXT[st] || st;
}

function onStatus(s) {
  const queue = (s.spool_depth || 0) + (s.pending_events || 0);
  $('#live-queue').textContent = `queue ${queue}`;
  $('#live-queue').title = `${s.spool_depth || 0} in the spool, ${s.pending_events || 0} pending events`;
  const obs = $('#live-observer');
  obs.textContent = s.observer_busy ? 'observer working' : 'observer idle';
  obs.dataset.busy = s.observer_busy ? 'true' : 'false';
  obs.title = s.provider ? `observer: ${s.provider}` : '';
  if (s.compaction) showCompaction(s.compaction);
  if (typeof s.waiting === 'string') showWaiting(s.waiting);
}

// Events captured but not yet memory, and why (the observer cannot reach its model, a quota, a key):
// the worker's one line, shown as text until the observer works again.
function showWaiting(line) {
  $('#waiting').hidden = !line;
  // `command` in the worker's words is a command to run: shown as code (as text, never as markup)
  const parts = (line || '').split('`');
  $('#waiting-what').replaceChildren(...parts.map((part, i) => (i % 2 ? h('code', {}, part) : part)));
}

/** Memories changed by any surface (the CLI, MCP, the observer, this or another page): shown anew. */
async function onChanged(change) {
  for (const id of change.ids || []) {
    const key = `o:${id}`;
    const shown = detail.current && detail.current.kind === 'observation' && detail.current.id === id;
    if (!feed.rows.has(key) && !shown) continue;
    if (change.op === 'forgotten') {  // gone: nothing to ask for
      const next = feed.remove(key);
      if (shown) {
        detail.closeRemoved(next);
        toast(`#${id} was deleted (${change.surface === 'viewer' ? 'in the viewer' : `through ${change.surface}`}).`);
      }
      continue;
    }
    let f = null;
    try {
      f = (await api(`observations/${id}`)).observation;
    } catch (err) {
      if (err instanceof AuthError) return;
      if (!(err instanceof ApiError && err.status === 404)) continue;
    }
    if (f) {
      feed.update(key, {title: f.title, type: f.type, layer: f.layer, pinned: f.pinned, decided: f.user_layer,
        archived: f.archived, status: f.status, superseded_by: f.superseded_by});
    } else {
      feed.remove(key);
    }
    if (shown && detail.current && detail.current.id === id) detail.load(detail.current);
  }
}

function onItem(item) {
  if (item.project && state.meta && !state.meta.projects.some((p) => p.project === item.project)) {
    state.meta.projects.push({project: item.project, observations: 0, last_at: item.at});
    fillProjects();
    metaSoon(); // its display name comes with meta
  }
  feed.prepend(item);
}

// ------------------------------------------------------------ compaction after a delete

let lastCompaction = null;
function showCompaction(c) {
  const el = $('#compaction');
  const bar = $('#compaction-bar');
  const text = $('#compaction-text');
  const was = lastCompaction;
  lastCompaction = c;
  if (c.state === 'waiting' || c.state === 'running') {
    el.hidden = false;
    el.dataset.state = c.state;
    const step = c.state === 'running' && c.step ? ` (step ${c.step} of ${c.steps}: ${c.phase})` : '';
    text.textContent = c.state === 'waiting' ? 'Compacting the database soon…' : `Compacting the database${step}…`;
    if (typeof c.fraction === 'number') bar.value = c.fraction;
    else bar.removeAttribute('value');
    return;
  }
  if (was && (was.state === 'waiting' || was.state === 'running')) {
    el.hidden = true;
    if (c.state === 'done') {
      const freed = Math.max(0, (c.bytes_before || 0) - (c.bytes_after || 0));
      toast(`Compacted: the deleted text is gone from disk${freed ? ` (${bytes(freed)} freed)` : ''}.`);
    } else if (c.state === 'failed') {
      toast(`Deleted, but not compacted yet: ${c.error}`, 'error');
    }
  }
}
document.addEventListener('kenning:compaction', (e) => {
  if (e.detail) showCompaction(e.detail);
});

// ------------------------------------------------------------------ connection banner

function showLink() {
  const banner = $('#banner');
  if (!link.down) {
    banner.hidden = true;
    return;
  }
  const err = link.error;
  const down = err instanceof NetworkError || !err;
  banner.hidden = false;
  $('#banner-what').textContent = down ? 'The Kenning worker is not answering.'
    : `The worker could not answer: ${err.message}.`;
  $('#banner-fix').hidden = !down;
  const secs = link.nextAt ? Math.max(0, Math.ceil((link.nextAt - Date.now()) / 1000)) : 0;
  $('#banner-retry').textContent = link.nextAt ? `Trying again in ${secs} s; what you see stays until then.`
    : 'Trying again now…';
}
link.addEventListener('change', showLink);
setInterval(() => {
  if (link.down) showLink();
}, 1000);
$('#banner-now').addEventListener('click', () => link.retryNow());

// ---------------------------------------------------------------------------- boot

function fillSelect(sel, options, keepFirst = true) {
  const first = keepFirst ? sel.firstElementChild : null;
  const value = sel.value;
  sel.replaceChildren(...(first ? [first] : []), ...options);
  if (value && ![...sel.options].some((o) => o.value === value)) sel.append(h('option', {value}, value));
  sel.value = value;
}

function fillProjects() {
  const projects = state.meta.projects || [];
  fillSelect($('#project'), projects.map((p) => h('option', {value: p.project, title: p.root || p.project}, p.name || p.project)));
  preview.setProjects(projects, $('#project').value || (projects[0] && projects[0].project));
}

function applyMeta(meta) {
  state.meta = meta;
  meta.projects = meta.projects || [];
  meta.types = meta.types || [];
  state.types = new Map(meta.types.map((t) => [t.id, t]));
  detail.meta = meta;
  fillProjects();
  fillSelect($('#f-type'), meta.types.map((t) => h('option', {value: t.id}, t.label || t.id)));
  const concepts = [];
  for (const c of [...(meta.known_concepts || []), ...(meta.concepts || [])]) {
    const it = typeof c === 'string' ? {id: c, label: c} : c;
    if (it && it.id && !concepts.some((x) => x.id === it.id)) concepts.push(it);
  }
  state.concepts = new Map(concepts.map((c) => [c.id, c.label || c.id]));
  fillSelect($('#f-concept'), concepts.map((c) => h('option', {value: c.id}, c.label || c.id)));
  if (meta.token_file) $('#token-file').textContent = meta.token_file;
  $('#damage').hidden = !meta.damage;  // the worker's words for a damaged database, as text
  $('#damage-what').textContent = meta.damage || '';
  showWaiting(meta.waiting || '');
}

async function loadMeta() {
  try {
    applyMeta(await api('meta'));
    metaReady();
    feed.describe();
  } catch (err) {
    if (err instanceof AuthError) return;
    if (!state.meta) applyMeta({types: [], projects: [], concepts: []});
    metaReady(); // the feed shows its rows meanwhile, with plain type names
    if (retryable(err)) link.lost(err, loadMeta);
    else toast(`Could not load the page's lists: ${err.message}`, 'error');
  }
}

const metaSoon = debounce(() => loadMeta(), 2000);

async function start() {
  if (!getToken()) {
    showTokenForm('');
    return;
  }
  document.body.classList.remove('needs-token');
  $('#token-view').hidden = true;
  state.started = true;
  setLive('offline');
  feed.started = true;
  restore(readView());
  const first = feed.loading;
  await loadMeta();
  await showTeamTab();
  if (!state.stream && state.started) {
    state.stream = openStream({onItem, onStatus, onState: setLive, onChanged});
  }
  await first;
}

// ------------------------------------------------------------------ feed controls

function filterValues() {
  return {project: $('#project').value, memory: $('#f-memory').value, type: $('#f-type').value,
    concept: $('#f-concept').value,
    from: $('#f-from').value, to: $('#f-to').value};
}

/** A From date after the To date is refused here, with the reason, before any request. */
function checkDates() {
  const from = $('#f-from').value;
  const to = $('#f-to').value;
  const bad = Boolean(from && to && from > to);
  for (const id of ['#f-from', '#f-to']) {
    if (bad) $(id).setAttribute('aria-invalid', 'true');
    else $(id).removeAttribute('aria-invalid');
  }
  $('#filters-error').textContent = bad ? 'The From date is after the To date: swap them, or clear one.' : '';
  return !bad;
}

/** The phone's "Filters" button says how many are set (the form itself is folded away there). */
function countFilters() {
  const set = Object.values(filterValues()).filter(Boolean).length;
  $('#filters-toggle').textContent = set ? `Filters (${set})` : 'Filters';
}

$('#filters-toggle').addEventListener('click', () => {
  const open = !document.body.classList.contains('filters-open');
  document.body.classList.toggle('filters-open', open);
  $('#filters-toggle').setAttribute('aria-expanded', open ? 'true' : 'false');
});

function applyFilters() {
  countFilters();
  if (!checkDates()) return;
  feed.setView(filterValues(), $('#search').value);
  commit(true);
}

$('#project').addEventListener('change', () => {
  applyFilters();
  if ($('#project').value) {
    $('#preview-project').value = $('#project').value;
    if (tabName(currentTab()) === 'preview') preview.load();
  }
  if (tabName(currentTab()) === 'stats') stats.load($('#project').value);
  if (tabName(currentTab()) === 'review') review.load($('#project').value);
});
$('#filters').addEventListener('change', applyFilters);
$('#filters').addEventListener('submit', (e) => e.preventDefault());
$('#f-clear').addEventListener('click', () => {
  for (const id of ['#f-memory', '#f-type', '#f-concept', '#f-from', '#f-to']) $(id).value = '';
  applyFilters();
});

/** The sort control and the meaning-search note belong to search results only. */
function showSearchTools() {
  $('#search-tools').hidden = !$('#search').value.trim();
}
document.addEventListener('kenning:search-note', (e) => {
  const note = e.detail || '';
  $('#search-note').hidden = !note;
  $('#search-note').textContent = note ? `Search by meaning is off: ${note}. These results match keywords only.` : '';
});
$('#search-sort').addEventListener('change', () => {
  feed.setSort($('#search-sort').value);
  commit(true);
});

const search = $('#search');
let searchPushed = false; // one Back step per search, not one per keystroke
const runSearch = () => {
  if (tabName(currentTab()) !== 'feed') selectTab($('#tab-feed'), {record: false});
  const p = feed.setView(filterValues(), search.value);
  commit(!searchPushed);
  searchPushed = true;
  return p;
};
const searchSoon = debounce(runSearch, 250);
const endSearch = () => {
  searchSoon.cancel();
  searchPushed = false;
  feed.setView(filterValues(), '');
  commit(true);
};
search.addEventListener('input', () => {
  showSearchTools();
  if (!search.value.trim()) endSearch();
  else searchSoon();
});
$('#search-form').addEventListener('submit', (e) => {
  e.preventDefault();
  searchSoon.cancel();
  runSearch();
  searchPushed = false;
});
search.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') {
    e.preventDefault();
    e.stopPropagation();
    search.value = '';
    showSearchTools();
    endSearch();
  }
});

// ------------------------------------------------------------------------ keyboard

function typing(el) {
  return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
}

document.addEventListener('keydown', (e) => {
  if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
  if (document.querySelector('dialog[open]')) return; // the dialog handles its own keys
  if (e.key === 'Escape') {
    if (detail.isOpen) {
      e.preventDefault();
      detail.close();
    }
    return;
  }
  if (typing(e.target) || !state.started) return;
  if (e.key === '/') {
    e.preventDefault();
    search.focus();
    search.select();
  } else if (e.key === 'j' || e.key === 'k') {
    if (tabName(currentTab()) !== 'feed') return;
    if (detail.isOpen && detail.panel.contains(e.target)) return;
    e.preventDefault();
    feed.move(e.key === 'j' ? 1 : -1);
  }
});

document.addEventListener('kenning:settings-saved', () => {
  // context_* settings change what the next session is told: refresh the preview next time.
  if (tabName(currentTab()) === 'preview') preview.load();
});

// "5 minutes ago" stays true while the page is open.
setInterval(() => refreshTimes(), 30000);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refreshTimes();
});

takeCodeFromUrl().then((problem) => {
  if (problem) showTokenForm(`Sign-in failed: ${problem}.`);
  else start();
});
