// Kenning viewer: boot, tabs, header (project, search, live indicator, theme), keyboard.

import {api, AuthError, clearToken, getToken, openStream, signIn, takeCodeFromUrl} from './api.js';
import {h, $, debounce, toast} from './dom.js';
import {Feed} from './feed.js';
import {Detail} from './detail.js';
import {Preview, renderStats, SettingsForm} from './views.js';

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

// ---------------------------------------------------------------------------- state

const state = {meta: null, types: new Map(), stream: null, started: false, statsLoaded: false};
const typeInfo = (id) => state.types.get(id);
let metaReady;
const metaPromise = new Promise((resolve) => { metaReady = resolve; });

const feed = new Feed({
  list: $('#feed'), sentinel: $('#feed-sentinel'), heading: $('#feed-heading'), end: $('#feed-end'),
  typeInfo, onOpen: (item, el) => detail.openItem(item, el), ready: metaPromise,
});
const detail = new Detail({
  panel: $('#detail'), title: $('#detail-title'), body: $('#detail-body'), back: $('#detail-back'),
  close: $('#detail-close'), dialog: $('#confirm-delete'), meta: {types: []}, feed, typeInfo,
});
const preview = new Preview({form: $('#preview-form'), select: $('#preview-project'), size: $('#preview-size'),
  excluded: $('#preview-excluded'), pre: $('#preview-text')});
const settings = new SettingsForm({form: $('#settings-form'), fields: $('#settings-fields'),
  status: $('#settings-status'), all: $('#settings-all'), file: $('#settings-file')});

// ----------------------------------------------------------------------------- tabs

const tabs = [...document.querySelectorAll('[role="tab"]')];

function selectTab(tab, focus = false) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute('aria-selected', on ? 'true' : 'false');
    t.tabIndex = on ? 0 : -1;
    document.getElementById(t.getAttribute('aria-controls')).hidden = !on;
  }
  if (focus) tab.focus();
  if (!state.started) return;
  if (tab.id === 'tab-stats') renderStats($('#stats'), typeInfo);
  if (tab.id === 'tab-preview') preview.load();
  if (tab.id === 'tab-settings' && !settings.settings.length) settings.load();
}

for (const t of tabs) t.addEventListener('click', () => selectTab(t));
$('.tabs').addEventListener('keydown', (e) => {
  const i = tabs.indexOf(document.activeElement);
  if (i < 0) return;
  let j = null;
  if (e.key === 'ArrowRight') j = (i + 1) % tabs.length;
  else if (e.key === 'ArrowLeft') j = (i - 1 + tabs.length) % tabs.length;
  else if (e.key === 'Home') j = 0;
  else if (e.key === 'End') j = tabs.length - 1;
  if (j === null) return;
  e.preventDefault();
  selectTab(tabs[j], true);
});
const currentTab = () => tabs.find((t) => t.getAttribute('aria-selected') === 'true');

// ---------------------------------------------------------------------- token flow

function showTokenForm(message) {
  if (state.stream) {
    state.stream.close();
    state.stream = null;
  }
  state.started = false;
  setLive('offline');
  document.body.classList.add('needs-token');
  $('#token-view').hidden = false;
  for (const t of tabs) document.getElementById(t.getAttribute('aria-controls')).hidden = true;
  detail.close();
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

function setLive(st) {
  const live = $('#live');
  if (live.dataset.state === st) return;
  live.dataset.state = st;
  $('#live-state').textContent = st === 'connected' ? 'live' : st;
}

function onStatus(s) {
  const queue = (s.spool_depth || 0) + (s.pending_events || 0);
  $('#live-queue').textContent = `queue ${queue}`;
  $('#live-queue').title = `${s.spool_depth || 0} in the spool, ${s.pending_events || 0} pending events`;
  const obs = $('#live-observer');
  obs.textContent = s.observer_busy ? 'observer working' : 'observer idle';
  obs.dataset.busy = s.observer_busy ? 'true' : 'false';
  obs.title = s.provider ? `observer: ${s.provider}` : '';
}

function onItem(item) {
  if (item.project && state.meta && !state.meta.projects.some((p) => p.project === item.project)) {
    state.meta.projects.push({project: item.project, observations: 0, last_at: item.at});
    fillProjects();
  }
  feed.prepend(item);
}

// ---------------------------------------------------------------------------- boot

function fillSelect(sel, options, keepFirst = true) {
  const first = keepFirst ? sel.firstElementChild : null;
  const value = sel.value;
  sel.replaceChildren(...(first ? [first] : []), ...options);
  if ([...sel.options].some((o) => o.value === value)) sel.value = value;
}

function fillProjects() {
  const projects = state.meta.projects || [];
  fillSelect($('#project'), projects.map((p) => h('option', {value: p.project}, p.name || p.project)));
  preview.setProjects(projects, $('#project').value || (projects[0] && projects[0].project));
}

function applyMeta(meta) {
  state.meta = meta;
  meta.projects = meta.projects || [];
  meta.types = meta.types || [];
  state.types = new Map(meta.types.map((t) => [t.id, t]));
  detail.meta = meta;
  fillProjects();
  fillSelect($('#f-type'), meta.types.map((t) => h('option', {value: t.id}, `${t.emoji || ''} ${t.label || t.id}`)));
  const concepts = [];
  for (const c of [...(meta.known_concepts || []), ...(meta.concepts || [])]) {
    const it = typeof c === 'string' ? {id: c, label: c} : c;
    if (it && it.id && !concepts.some((x) => x.id === it.id)) concepts.push(it);
  }
  fillSelect($('#f-concept'), concepts.map((c) => h('option', {value: c.id}, c.label || c.id)));
  if (meta.token_file) $('#token-file').textContent = meta.token_file;
}

async function start() {
  if (!getToken()) {
    showTokenForm('');
    return;
  }
  document.body.classList.remove('needs-token');
  $('#token-view').hidden = true;
  state.started = true;
  selectTab(currentTab() || tabs[0]);
  const first = feed.reset();
  try {
    applyMeta(await api('meta'));
  } catch (err) {
    if (err instanceof AuthError) return;
    toast(`Could not reach the worker: ${err.message}`, 'error');
    applyMeta({types: [], projects: [], concepts: []});
  } finally {
    metaReady();
  }
  if (!state.stream && state.started) {
    state.stream = openStream({onItem, onStatus, onState: setLive});
  }
  await first;
}

// ------------------------------------------------------------------ feed controls

$('#project').addEventListener('change', () => {
  feed.setFilters({project: $('#project').value});
  if ($('#project').value) {
    $('#preview-project').value = $('#project').value;
    if (currentTab().id === 'tab-preview') preview.load();
  }
});
$('#filters').addEventListener('change', () => {
  feed.setFilters({type: $('#f-type').value, concept: $('#f-concept').value, from: $('#f-from').value,
    to: $('#f-to').value});
});
$('#filters').addEventListener('submit', (e) => e.preventDefault());
$('#f-clear').addEventListener('click', () => {
  for (const id of ['#f-type', '#f-concept', '#f-from', '#f-to']) $(id).value = '';
  feed.setFilters({type: '', concept: '', from: '', to: ''});
});

const search = $('#search');
const runSearch = () => {
  if (currentTab().id !== 'tab-feed') selectTab($('#tab-feed'));
  return feed.search(search.value);
};
const searchSoon = debounce(runSearch, 250);
search.addEventListener('input', () => {
  if (!search.value.trim()) {
    searchSoon.cancel();
    feed.clearSearch();
  } else {
    searchSoon();
  }
});
$('#search-form').addEventListener('submit', (e) => {
  e.preventDefault();
  searchSoon.cancel();
  runSearch();
});
search.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') {
    e.preventDefault();
    e.stopPropagation();
    searchSoon.cancel();
    search.value = '';
    feed.clearSearch();
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
    if (currentTab().id !== 'tab-feed') return;
    if (detail.isOpen && detail.panel.contains(e.target)) return;
    e.preventDefault();
    feed.move(e.key === 'j' ? 1 : -1);
  }
});

document.addEventListener('kenning:settings-saved', () => {
  // context_* settings change what the next session is told: refresh the preview next time.
  if (currentTab().id === 'tab-preview') preview.load();
});

takeCodeFromUrl().then((problem) => {
  if (problem) showTokenForm(`Sign-in failed: ${problem}.`);
  else start();
});
