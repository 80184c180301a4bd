// The other tabs: next-session preview, stats, settings.

import {api, ApiError, AuthError, link, retryable} from './api.js';
import {h, svg, clear, num, bytes, plain, shortDay, toast} from './dom.js';

// --------------------------------------------------------------------------- preview

export class Preview {
  constructor({form, select, size, excluded, pre}) {
    Object.assign(this, {form, select, size, excluded, pre});
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.load();
    });
    select.addEventListener('change', () => this.load());
  }

  setProjects(projects, preferred) {
    const current = this.select.value || preferred;
    clear(this.select).append(...projects.map((p) => h('option', {value: p.project}, p.name || p.project)));
    if (!projects.length) this.select.append(h('option', {value: ''}, 'no project yet'));
    if (current && projects.some((p) => p.project === current)) this.select.value = current;
    this.known = true;
    if (this.waiting) {  // asked for before the projects were known (a reload on this tab, a ?tab=preview link)
      this.waiting = false;
      this.load();
    }
  }

  async load() {
    if (!this.known) {
      this.waiting = true;
      this.size.textContent = 'Loading…';
      return;
    }
    const project = this.select.value;
    if (!project) {
      this.size.textContent = 'No project has memory yet.';
      this.pre.textContent = '';
      return;
    }
    this.size.textContent = 'Loading…';
    try {
      const body = await api('preview', {params: {project}});
      this.pre.textContent = body.context || '';
      this.pre.dataset.project = body.project || project;
      this.size.textContent = `${num(body.chars)} characters · ~${num(body.tokens)} tokens`;
      const ex = body.excluded;
      let exText = '';
      if (ex === true) exText = 'This project matches excluded_projects: nothing is captured nor injected.';
      else if (Array.isArray(ex) && ex.length) exText = `Left out: ${ex.join(', ')}`;
      else if (ex && typeof ex === 'object') exText = `Left out: ${Object.entries(ex).map(([k, v]) => `${k}: ${plain(v)}`).join(' · ')}`;
      else if (ex && typeof ex !== 'boolean') exText = `Left out: ${plain(ex)}`;
      this.excluded.hidden = !exText;
      this.excluded.textContent = exText;
      document.dispatchEvent(new CustomEvent('kenning:preview-loaded'));
    } catch (err) {
      if (err instanceof AuthError) return;
      this.size.textContent = `Could not build the preview: ${err.message}.`
        + (retryable(err) ? ' It loads by itself when the worker answers.' : '');
      if (retryable(err)) link.lost(err, () => this.load());
    }
  }
}

// ----------------------------------------------------------------------------- stats

/**
 * Every field the Stats page reads from /api/viewer/stats goes through need(): a field the API
 * does not send is a console error (which fails the browser tests) instead of a silent "–", and
 * the paths read are kept in STATS_READ for the contract test.
 */
export const STATS_READ = new Set();

function need(body, path) {
  STATS_READ.add(path);
  let v = body;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object' || !(part in v)) {
      console.error(`stats: the API response has no ${path}`);
      return undefined;
    }
    v = v[part];
  }
  return v;
}

const CHART_H = 150;
const PAD_LEFT = 34;

/** Bars drawn at the chart's real pixel width (never stretched), labels every ~64 px. */
function barChart({days, series, label, unit, typeClass, width}) {
  const W = Math.max(240, Math.floor(width));
  const H = CHART_H;
  const n = Math.max(days.length, 1);
  const max = Math.max(1, ...days.map((d) => series.reduce((a, s) => a + (s.value(d) || 0), 0)));
  const bw = (W - PAD_LEFT) / n;
  const chart = svg('svg', {viewBox: `0 0 ${W} ${H + 22}`, width: W, height: H + 22, class: 'chart', role: 'img',
    'aria-label': label});
  chart.append(svg('line', {x1: PAD_LEFT, y1: H, x2: W, y2: H, class: 'axis'}));
  chart.append(svg('text', {x: PAD_LEFT - 4, y: 12, class: 'tick', 'text-anchor': 'end'}, compact(max)));
  chart.append(svg('text', {x: PAD_LEFT - 4, y: H, class: 'tick', 'text-anchor': 'end'}, '0'));
  const every = Math.max(1, Math.ceil(64 / bw));
  days.forEach((d, i) => {
    let y = H;
    const x = PAD_LEFT + i * bw;
    const total = series.reduce((a, s) => a + (s.value(d) || 0), 0);
    const g = svg('g', {class: 'bar'});
    g.append(svg('title', null, `${d.day}: ${num(total)} ${unit}` +
      series.filter((s) => s.value(d)).map((s) => `\n${s.name}: ${num(s.value(d))}`).join('')));
    for (const s of series) {
      const v = s.value(d) || 0;
      if (!v) continue;
      const bh = (v / max) * (H - 16);
      y -= bh;
      g.append(svg('rect', {x: x + 1, y, width: Math.max(1, bw - 2), height: bh, class: typeClass(s)}));
    }
    chart.append(g);
    if ((n - 1 - i) % every === 0) {
      chart.append(svg('text', {x: x + bw / 2, y: H + 16, class: 'tick', 'text-anchor': 'middle'}, shortDay(d.day)));
    }
  });
  return chart;
}

const compactFmt = new Intl.NumberFormat(undefined, {notation: 'compact', maximumFractionDigits: 1});
const compact = (n) => compactFmt.format(n);

function kv(entries) {
  return h('dl', {class: 'kv'}, entries.filter(([, v]) => v !== undefined).map(([k, v]) =>
    [h('dt', null, k), h('dd', null, v instanceof Node ? v : plain(v))]));
}

/** A percentage to one decimal, rounded down: 99.65 % reads 99.6 %, never 100.0 % while anything is missing. */
export function pct(v) {
  if (v === undefined || v === null || Number.isNaN(Number(v))) return '–';
  return `${(Math.floor(Number(v) * 10 + 1e-9) / 10).toFixed(1)}%`;
}

/** The embedding back-end's state in words (a default install has none that works offline). */
function embeddingText(e) {
  const state = e.state;
  const model = e.model ? ` (${e.model})` : '';
  if (state === 'off') return 'Off: search matches keywords only. Set “Search by meaning with” in Settings to turn it on.';
  if (state === 'failed') return `Not available${model}: ${e.detail || 'the model did not load'}. Search matches keywords only.`;
  if (state === 'ready') return `On${model}: ${num(e.vectors || 0)} memories searchable by meaning.`;
  if (state === 'indexing') {
    return `Indexing${model}: ${num(e.vectors || 0)} done` + (e.missing > 0 ? `, ${num(e.missing)} to go.` : '.');
  }
  if (state === 'loading') return `Loading the model${model}…`;
  return `${state || 'unknown'}${model}${e.detail ? `: ${e.detail}` : ''}`;
}

/** The memory's own dashboard over a date range (the injection ledger: /api/ledger/health). */
class Health {
  constructor() {
    this.project = '';
    this.out = h('div', {id: 'health-out', 'aria-live': 'polite'}, h('p', {class: 'muted'}, 'Loading…'));
    this.el = h('section', {class: 'panel', id: 'memory-health'}, h('h3', null, 'Memory health'),
      h('p', {class: 'muted'}, 'What was handed to agents in these days and whether they used it (healthy from 70 % '
        + 'up; under 50 % a check-up is due: the Check-up tab, or `kenning review`).'), this.out);
  }

  async load(project, since, until) {
    this.project = project || '';
    try {
      const b = await api('/api/ledger/health', {params: {project: this.project, since, until}});
      const led = b.injections || {};
      const day = (t) => (t ? new Date(t * 1000).toLocaleDateString() : 'never');
      const list = (o) => Object.entries(o || {}).map(([k, v]) => `${k} ${num(v)}`).join(', ') || 'none';
      clear(this.out).append(kv([
        ['Handed to agents', led.given ? `${num(led.given)} ${led.given === 1 ? 'time' : 'times'} in `
          + `${num(led.sessions)} ${led.sessions === 1 ? 'session' : 'sessions'}` : 'nothing recorded'],
        ['Used (hit rate)', led.given ? `${num(led.used)} · ${pct((led.hit_rate || 0) * 100)} · ${b.verdict}` : '–'],
        ['Injected tokens that were used', led.given ? `${pct((led.used_token_share || 0) * 100)} of ~${num(led.tokens)}`
          : '–'],
        ['Superseded or retracted after being given', num(led.contradicted || 0)],
        [`Never used, older than ${b.never_used_days} days`, num(b.never_used)],
        ['Entries by type', list(b.by_type)],
        ['Entries by layer', list(b.by_layer)],
        ['Archive', b.archive_before ? `routine work before ${day(b.archive_before)}` : 'off'],
        ['Last backup', day(b.last_backup)],
        ['Last reindex', day(b.last_reindex)],
      ]));
    } catch (err) {
      if (err instanceof AuthError) return;
      clear(this.out).append(h('p', {class: 'error'}, `Could not load the memory's health: ${err.message}.`));
    }
  }
}

/** A date as the date inputs hold it (the viewer's local day). */
function isoDay(d) {
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/** The Stats tab over a date range (the last 30 days until another is chosen; "All history" goes back to
 * the oldest memory, imported ones included); one load per call, redrawn to its width on resize. */
export class Stats {
  constructor(root, typeInfo, projectName) {
    Object.assign(this, {root, typeInfo});
    this.projectName = projectName || ((p) => p);
    this.health = new Health();
    this.body = null;
    this.project = '';
    this.width = 0;
    const today = new Date();
    this.from = h('input', {type: 'date', id: 'stats-from', name: 'from', value: isoDay(new Date(today - 29 * 86400000))});
    this.to = h('input', {type: 'date', id: 'stats-to', name: 'to', value: isoDay(today)});
    this.rangeError = h('p', {class: 'error', id: 'stats-range-error', role: 'alert'});
    const all = h('button', {type: 'button', id: 'stats-all'}, 'All history');
    this.range = h('form', {class: 'stats-range row', id: 'stats-range', 'aria-label': 'Date range'},
      h('label', {for: 'stats-from'}, 'From'), this.from, h('label', {for: 'stats-to'}, 'To'), this.to,
      h('button', {type: 'submit'}, 'Show'), all, this.rangeError);
    this.range.addEventListener('submit', (e) => {
      e.preventDefault();
      this.load(this.project);
    });
    all.addEventListener('click', () => {
      const first = this.body && this.body.first_day;
      if (first) this.from.value = first;
      this.to.value = isoDay(new Date());
      this.load(this.project);
    });
    root.before(this.range);
    new ResizeObserver(() => {
      const w = this.root.clientWidth;
      if (this.body && Math.abs(w - this.width) > 8) this.render();
    }).observe(root);
  }

  async load(project) {
    this.project = project || '';
    const from = this.from.value;
    const to = this.to.value;
    if (from && to && from > to) {
      this.rangeError.textContent = 'The From date is after the To date: swap them.';
      this.from.setAttribute('aria-invalid', 'true');
      return;
    }
    this.rangeError.textContent = '';
    this.from.removeAttribute('aria-invalid');
    this.health.load(this.project, from, to);
    if (!this.body) clear(this.root).append(h('p', {class: 'muted'}, 'Loading…'));
    try {
      this.body = await api('stats', {params: {days: 30, from, to, project: this.project}});
    } catch (err) {
      if (err instanceof AuthError) return;
      clear(this.root).append(h('p', {class: 'error'}, `Could not load stats: ${err.message}.`
        + (retryable(err) ? ' They load by themselves when the worker answers.' : '')));
      this.body = null;
      if (retryable(err)) link.lost(err, () => this.load(this.project));
      return;
    }
    this.render();
  }

  render() {
    const body = this.body;
    const root = this.root;
    this.width = root.clientWidth;
    const chartW = Math.max(240, this.width - 34); // the panel's padding
    const days = need(body, 'days') || [];
    const typeIds = [];
    for (const d of days) for (const t of Object.keys(d.observations || {})) if (!typeIds.includes(t)) typeIds.push(t);
    const obsSeries = typeIds.map((t) => ({id: t, name: (this.typeInfo(t) || {}).label || t, value: (d) => (d.observations || {})[t]}));
    const tokSeries = [
      {id: 'in', name: 'input', value: (d) => d.tokens_in},
      {id: 'out', name: 'output', value: (d) => d.tokens_out},
    ];
    const legend = h('ul', {class: 'legend', 'aria-label': 'Types'}, obsSeries.map((s) =>
      h('li', null, h('span', {class: ['swatch', `fill-${s.id}`], 'aria-hidden': 'true'}), s.name)));
    const tokenTotal = days.reduce((a, d) => a + (d.tokens_in || 0) + (d.tokens_out || 0), 0);
    const calls = days.reduce((a, d) => a + (d.calls || 0), 0);
    const observer = need(body, 'observer') || {};
    const {provider, busy, why, last_error: lastError, ...more} = observer;
    const embedding = need(body, 'embedding') || {};
    const where = this.project ? `in ${this.projectName(this.project)}` : 'in all projects';

    clear(root).append(
      h('p', {class: 'stats-scope', id: 'stats-scope'}, `Memory ${where}`,
        this.project ? h('span', {class: 'muted'}, ' (the project picker above chooses)') : null),
      h('div', {class: 'cards'},
        card('Observations', num(need(body, 'totals.observations'))),
        card('Still true', num(need(body, 'totals.active_observations'))),
        card('Sessions', num(need(body, 'totals.sessions'))),
        card('Prompts', num(need(body, 'totals.prompts'))),
        card('Summaries', num(need(body, 'totals.summaries'))),
        card('Saved', pct(need(body, 'savings.saved_pct'))),
        card('Database (all projects)', bytes(need(body, 'db_bytes'))),
        card('Waiting to be processed', num((need(body, 'spool_depth') || 0) + (need(body, 'pending_events') || 0)))),
      this.health.el,
      h('section', {class: 'panel'},
        h('h3', null, `Observations per day and type, ${shortDay(need(body, 'from'))} to ${shortDay(need(body, 'to'))} `
          + `(${days.length} ${days.length === 1 ? 'day' : 'days'})`),
        days.some((d) => d.total) ? barChart({days, series: obsSeries, label: 'Observations per day, stacked by type',
          unit: 'observations', typeClass: (s) => `fill-${s.id}`, width: chartW}) : h('p', {class: 'muted'}, `No observations ${where} in these days.`),
        legend,
        dayTable(days, 'Observations per day', ['Day', 'Total'], (d) => [d.day, num(d.total)])),
      h('section', {class: 'panel'},
        h('h3', null, 'Tokens the observer spent per day (all projects)'),
        h('p', {class: 'muted'}, `${num(tokenTotal)} tokens in ${num(calls)} calls over these days.`),
        tokenTotal ? barChart({days, series: tokSeries, label: 'Observer tokens per day (input and output)', unit: 'tokens',
          typeClass: (s) => `fill-tokens-${s.id}`, width: chartW}) : h('p', {class: 'muted'}, 'No model calls: the rules observer costs no tokens.'),
        tokenTotal ? h('ul', {class: 'legend'}, h('li', null, h('span', {class: 'swatch fill-tokens-in', 'aria-hidden': 'true'}), 'input'),
          h('li', null, h('span', {class: 'swatch fill-tokens-out', 'aria-hidden': 'true'}), 'output')) : null,
        dayTable(days, 'Observer tokens per day', ['Day', 'Input', 'Output', 'Cache read', 'Calls'],
          (d) => [d.day, num(d.tokens_in), num(d.tokens_out), num(d.cache_read), num(d.calls)])),
      h('section', {class: 'panel', id: 'savings'},
        h('h3', null, `What memory saves ${where}`),
        h('p', {class: 'muted'}, 'Work the observer read, against what reading its memory costs the agent.'),
        kv([['Work observed (tokens)', num(need(body, 'savings.work_tokens'))],
          ['Reading the index of it (tokens)', num(need(body, 'savings.index_tokens'))],
          ['Reading every full record (tokens)', num(need(body, 'savings.full_tokens'))],
          ['Observer cost (tokens)', num(need(body, 'savings.observer_tokens'))],
          ['Saved', pct(need(body, 'savings.saved_pct'))]])),
      h('section', {class: 'panel', id: 'observer-status'},
        h('h3', null, 'Observer'),
        kv([['Provider', provider], ['Working now', busy], ['Why this provider', why],
          ['Last error', lastError ? h('span', {class: 'error'}, lastError) : 'none'],
          ...Object.entries(more).map(([k, v]) => [k.replace(/_/g, ' '), v])])),
      h('section', {class: 'panel', id: 'embedding-status'}, h('h3', null, 'Search by meaning'),
        h('p', null, embeddingText(embedding))),
    );
  }
}

function card(label, value) {
  return h('div', {class: 'card'}, h('span', {class: 'card-value'}, value), h('span', {class: 'card-label'}, label));
}

function dayTable(days, caption, headers, row) {
  if (!days.length) return null;
  return h('details', {class: 'table-details'}, h('summary', null, 'As a table'),
    h('table', null, h('caption', {class: 'sr-only'}, caption),
      h('thead', null, h('tr', null, headers.map((x) => h('th', {scope: 'col'}, x)))),
      h('tbody', null, days.map((d) => h('tr', null, row(d).map((c) => h('td', null, c)))))));
}

// -------------------------------------------------------------------------- settings

export class SettingsForm {
  constructor({form, fields, status, all, file}) {
    Object.assign(this, {form, fields, status, all, file});
    this.settings = [];
    this.sections = [];
    all.addEventListener('change', () => this.render());
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.save();
    });
    form.addEventListener('reset', (e) => {
      e.preventDefault();
      this.render();
      this.status.textContent = '';
    });
  }

  async load() {
    try {
      const body = await api('settings');
      this.apply(body);
    } catch (err) {
      if (err instanceof AuthError) return;
      this.status.textContent = `Could not load settings: ${err.message}.`;
      if (retryable(err)) link.lost(err, () => this.load());
    }
  }

  apply(body) {
    this.settings = body.settings || [];
    this.sections = body.sections || [];
    if (body.file) this.file.textContent = body.file;
    this.render();
  }

  render() {
    const showAll = this.all.checked;
    const shown = this.settings.filter((s) => showAll || s.common);
    const groups = this.sections.map((sec) => {
      const fields = shown.filter((s) => s.section === sec.id);
      if (!fields.length) return null;
      return h('fieldset', {class: 'settings-section', id: `section-${sec.id}`},
        h('legend', null, sec.title), h('div', {class: 'section-fields'}, fields.map((s) => this.field(s))));
    });
    clear(this.fields).append(...groups.filter(Boolean));
  }

  field(s) {
    const id = `set-${s.name}`;
    const helpId = `${id}-help`;
    const errId = `${id}-error`;
    const described = `${helpId} ${errId}`;
    let input;
    const v = s.value;
    if (s.kind === 'bool') {
      input = h('input', {type: 'checkbox', id, name: s.name, checked: Boolean(v), 'aria-describedby': described});
    } else if (s.kind === 'int' || s.kind === 'float') {
      input = h('input', {type: 'number', id, name: s.name, value: v === null || v === undefined ? '' : String(v),
        min: s.min ?? null, max: s.max ?? null, step: s.kind === 'int' ? '1' : 'any', inputmode: s.kind === 'int' ? 'numeric' : 'decimal',
        placeholder: v === null ? 'default' : null, 'aria-describedby': described});
    } else if (s.kind === 'choice') {
      input = h('select', {id, name: s.name, 'aria-describedby': described},
        (s.choices || []).map((c) => h('option', {value: c, selected: c === v}, c)));
    } else if (s.kind === 'list') {
      const lines = Array.isArray(v) ? v : [];
      input = h('textarea', {id, name: s.name, rows: Math.min(8, Math.max(2, lines.length + 1)), spellcheck: 'false',
        'aria-describedby': described}, lines.join('\n'));
    } else {
      input = h('input', {type: 'text', id, name: s.name, value: v === null || v === undefined ? '' : String(v),
        spellcheck: 'false', 'aria-describedby': described});
    }
    input.dataset.kind = s.kind;
    const range = (s.kind === 'int' || s.kind === 'float') && (s.min !== undefined || s.max !== undefined)
      ? ` (${s.min ?? '…'} to ${s.max ?? '…'})` : '';
    // Values as they are typed: a port is 37800, not "37,800".
    const asTyped = (v) => (typeof v === 'boolean' ? (v ? 'on' : 'off') : String(v));
    const defText = ` Default: ${Array.isArray(s.default) ? (s.default.length ? s.default.join(', ') : 'none')
      : (s.default === '' ? 'empty' : (s.default === null ? 'automatic' : asTyped(s.default)))}.`;
    const tags = [];
    if (!s.live) tags.push(h('span', {class: 'tag', title: 'takes effect after `kenning worker restart`'}, 'restart'));
    if (s.env) tags.push(h('span', {class: 'tag tag-env', title: `${s.env} is set: the environment wins over the file`}, s.env));
    const label = h('label', {for: id}, h('span', {class: 'label-text'}, s.label || s.name), ' ',
      h('code', {class: 'key'}, s.name), ' ', tags);
    const envNote = s.env ? ` ${s.env} is set in the worker's environment: it wins over a saved value.` : '';
    const help = h('p', {class: 'help', id: helpId}, `${s.help || ''}${range}.${defText}${envNote}`.replace('..', '.'));
    const err = h('p', {class: 'error field-error', id: errId, role: 'alert'});
    return h('div', {class: ['field', `field-${s.kind}`], dataset: {name: s.name}},
      s.kind === 'bool' ? h('div', {class: 'check'}, input, label) : [label, input], help, err);
  }

  valueOf(s) {
    const el = this.form.elements.namedItem(s.name);
    if (!el) return {shown: false};
    if (s.kind === 'bool') return {shown: true, value: el.checked};
    if (s.kind === 'int' || s.kind === 'float') {
      const raw = el.value.trim();
      if (!raw) return {shown: true, value: null, raw};
      return {shown: true, value: Number(raw), raw};
    }
    if (s.kind === 'list') return {shown: true, value: el.value.split('\n').map((x) => x.trim()).filter(Boolean)};
    return {shown: true, value: el.value};
  }

  check(s, value, raw) {
    if (s.kind === 'int' || s.kind === 'float') {
      if (value === null) return s.value === null ? '' : 'enter a number';
      if (Number.isNaN(value)) return `“${raw}” is not a number`;
      if (s.kind === 'int' && !Number.isInteger(value)) return 'a whole number is needed';
      if (s.min !== undefined && s.min !== null && value < s.min) return `at least ${s.min}`;
      if (s.max !== undefined && s.max !== null && value > s.max) return `at most ${s.max}`;
    }
    if (s.kind === 'choice' && s.choices && !s.choices.includes(value)) return `one of ${s.choices.join(', ')}`;
    return '';
  }

  showProblems(problems) {
    for (const el of this.fields.querySelectorAll('.field')) {
      const msg = problems[el.dataset.name] || '';
      el.querySelector('.field-error').textContent = msg;
      const input = el.querySelector('input, select, textarea');
      if (msg) input.setAttribute('aria-invalid', 'true');
      else input.removeAttribute('aria-invalid');
    }
    const first = Object.keys(problems).find((n) => this.form.elements.namedItem(n));
    if (first) this.form.elements.namedItem(first).focus();
  }

  async save() {
    const changes = {};
    const problems = {};
    for (const s of this.settings) {
      const {shown, value, raw} = this.valueOf(s);
      if (!shown) continue;
      if (JSON.stringify(value) === JSON.stringify(s.value)) continue;
      const p = this.check(s, value, raw);
      if (p) problems[s.name] = p;
      else changes[s.name] = value;
    }
    if (Object.keys(problems).length) {
      this.showProblems(problems);
      this.status.textContent = 'Not saved: fix the fields marked in red.';
      this.status.dataset.kind = 'error';
      return;
    }
    this.showProblems({});
    if (!Object.keys(changes).length) {
      this.status.textContent = 'Nothing changed.';
      this.status.dataset.kind = 'info';
      return;
    }
    this.status.textContent = 'Saving…';
    try {
      const body = await api('settings', {method: 'PUT', body: {changes}});
      this.apply(body);
      const restart = body.restart_needed || [];
      this.status.dataset.kind = 'ok';
      this.status.textContent = `Saved ${Object.keys(body.saved || changes).join(', ')}.` + (restart.length
        ? ` Needs a worker restart (kenning worker restart): ${restart.join(', ')}.` : ' In effect now.');
      document.dispatchEvent(new CustomEvent('kenning:settings-saved', {detail: body}));
    } catch (err) {
      if (err instanceof AuthError) return;
      this.status.dataset.kind = 'error';
      if (err instanceof ApiError && err.body && err.body.problems) {
        this.showProblems(err.body.problems);
        const general = err.body.problems._;
        this.status.textContent = general ? `Not saved: ${general}` : 'Not saved: fix the fields marked in red.';
      } else {
        this.status.textContent = `Not saved: ${err.message}`;
        toast(err.message, 'error');
      }
    }
  }
}
