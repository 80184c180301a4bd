// The other tabs: next-session preview, stats, settings.

import {api, ApiError, AuthError} from './api.js';
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
  }

  async load() {
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
      if (!(err instanceof AuthError)) this.size.textContent = `Could not build the preview: ${err.message}`;
    }
  }
}

// ----------------------------------------------------------------------------- stats

function barChart({days, series, label, unit, typeClass}) {
  const W = 720;
  const H = 160;
  const pad = 24;
  const n = Math.max(days.length, 1);
  const max = Math.max(1, ...days.map((d) => series.reduce((a, s) => a + (s.value(d) || 0), 0)));
  const bw = (W - pad) / n;
  const chart = svg('svg', {viewBox: `0 0 ${W} ${H + 20}`, class: 'chart', role: 'img', 'aria-label': label,
    preserveAspectRatio: 'none'});
  chart.append(svg('line', {x1: pad, y1: H, x2: W, y2: H, class: 'axis'}));
  chart.append(svg('text', {x: 0, y: 10, class: 'tick'}, num(max)));
  days.forEach((d, i) => {
    let y = H;
    const x = pad + i * bw;
    const total = series.reduce((a, s) => a + (s.value(d) || 0), 0);
    const g = svg('g', {class: 'bar'});
    g.append(svg('title', null, `${d.day}: ${num(total)} ${unit}` +
      series.filter((s) => s.value(d)).map((s) => `\n${s.name}: ${num(s.value(d))}`).join('')));
    for (const s of series) {
      const v = s.value(d) || 0;
      if (!v) continue;
      const bh = (v / max) * (H - 14);
      y -= bh;
      g.append(svg('rect', {x: x + 1, y, width: Math.max(1, bw - 2), height: bh, class: typeClass(s)}));
    }
    chart.append(g);
    if (n <= 14 || i % Math.ceil(n / 10) === 0) {
      chart.append(svg('text', {x: x + bw / 2, y: H + 14, class: 'tick', 'text-anchor': 'middle'}, shortDay(d.day)));
    }
  });
  return chart;
}

function kv(entries) {
  return h('dl', {class: 'kv'}, entries.filter(([, v]) => v !== undefined).map(([k, v]) =>
    [h('dt', null, k), h('dd', null, v instanceof Node ? v : plain(v))]));
}

export async function renderStats(root, typeInfo) {
  let body;
  try {
    body = await api('stats', {params: {days: 30}});
  } catch (err) {
    if (!(err instanceof AuthError)) clear(root).append(h('p', {class: 'error'}, `Could not load stats: ${err.message}`));
    return;
  }
  const days = body.days || [];
  const typeIds = [];
  for (const d of days) for (const t of Object.keys(d.observations || {})) if (!typeIds.includes(t)) typeIds.push(t);
  const obsSeries = typeIds.map((t) => ({id: t, name: (typeInfo(t) || {}).label || t, value: (d) => (d.observations || {})[t]}));
  const tokSeries = [
    {id: 'in', name: 'input', value: (d) => d.tokens_in},
    {id: 'out', name: 'output', value: (d) => d.tokens_out},
  ];
  const totals = body.totals || {};
  const sv = body.savings || {};
  const obs = body.observer || {};
  const {provider, busy, why, last_error: lastError, ...more} = obs;
  const legend = h('ul', {class: 'legend', 'aria-label': 'Types'}, obsSeries.map((s) =>
    h('li', null, h('span', {class: ['swatch', `fill-${s.id}`], 'aria-hidden': 'true'}), s.name)));
  const tokenTotal = days.reduce((a, d) => a + (d.tokens_in || 0) + (d.tokens_out || 0), 0);
  const calls = days.reduce((a, d) => a + (d.calls || 0), 0);

  clear(root).append(
    h('div', {class: 'cards'},
      card('Observations', num(totals.observations)),
      card('Sessions', num(totals.sessions)),
      card('Prompts', num(totals.prompts)),
      card('Summaries', num(totals.summaries)),
      card('Database', bytes(body.db_bytes)),
      card('Spool depth', num(body.spool_depth)),
      card('Pending events', num(body.pending_events)),
      card('Saved', sv.saved_pct === undefined || sv.saved_pct === null ? '–' : `${Number(sv.saved_pct).toFixed(1)}%`)),
    h('section', {class: 'panel'},
      h('h3', null, `Observations per day and type (last ${days.length} days)`),
      days.length ? barChart({days, series: obsSeries, label: 'Observations per day, stacked by type', unit: 'observations',
        typeClass: (s) => `fill-${s.id}`}) : h('p', {class: 'muted'}, 'No data yet.'),
      legend,
      dayTable(days, 'Observations per day', ['Day', 'Total'], (d) => [d.day, num(d.total)])),
    h('section', {class: 'panel'},
      h('h3', null, 'Tokens the observer spent per day'),
      h('p', {class: 'muted'}, `${num(tokenTotal)} tokens in ${num(calls)} calls over these days.`),
      tokenTotal ? barChart({days, series: tokSeries, label: 'Observer tokens per day (input and output)', unit: 'tokens',
        typeClass: (s) => `fill-tokens-${s.id}`}) : h('p', {class: 'muted'}, 'No model calls: the rules observer costs no tokens.'),
      h('ul', {class: 'legend'}, h('li', null, h('span', {class: 'swatch fill-tokens-in', 'aria-hidden': 'true'}), 'input'),
        h('li', null, h('span', {class: 'swatch fill-tokens-out', 'aria-hidden': 'true'}), 'output')),
      dayTable(days, 'Observer tokens per day', ['Day', 'Input', 'Output', 'Cache read', 'Calls'],
        (d) => [d.day, num(d.tokens_in), num(d.tokens_out), num(d.cache_read), num(d.calls)])),
    h('section', {class: 'panel'},
      h('h3', null, 'Savings'),
      kv([['Source tokens (what was observed)', sv.source_tokens], ['Stored tokens (the memory)', sv.stored_tokens],
        ['Observer tokens (the cost)', sv.observer_tokens],
        ['Saved', sv.saved_pct === undefined || sv.saved_pct === null ? undefined : `${Number(sv.saved_pct).toFixed(1)}%`]])),
    h('section', {class: 'panel', id: 'observer-status'},
      h('h3', null, 'Observer'),
      kv([['Provider', provider], ['Working', busy], ['Why this provider', why],
        ['Last error', lastError ? h('span', {class: 'error'}, lastError) : 'none'],
        ...Object.entries(more).map(([k, v]) => [k.replace(/_/g, ' '), v])])),
    body.embedding ? h('section', {class: 'panel'}, h('h3', null, 'Embeddings'),
      kv(Object.entries(body.embedding).map(([k, v]) => [k.replace(/_/g, ' '), v]))) : null,
  );
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
      if (!(err instanceof AuthError)) this.status.textContent = `Could not load settings: ${err.message}`;
    }
  }

  apply(body) {
    this.settings = body.settings || [];
    if (body.file) this.file.textContent = body.file;
    this.render();
  }

  render() {
    const showAll = this.all.checked;
    const shown = this.settings.filter((s) => showAll || s.common);
    clear(this.fields).append(...shown.map((s) => this.field(s)));
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
    const defText = ` Default: ${Array.isArray(s.default) ? (s.default.length ? s.default.join(', ') : 'none')
      : (s.default === '' ? 'empty' : (s.default === null ? 'automatic' : plain(s.default)))}.`;
    const tags = [];
    if (!s.live) tags.push(h('span', {class: 'tag', title: 'takes effect after `kenning worker restart`'}, 'restart'));
    if (s.env) tags.push(h('span', {class: 'tag tag-env', title: `${s.env} is set: the environment wins over the file`}, s.env));
    const label = h('label', {for: id}, s.name, ' ', tags);
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
      this.status.textContent = 'Not saved: fix the fields marked below.';
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
        this.status.textContent = `Not saved: ${err.message}`;
      } else {
        this.status.textContent = `Not saved: ${err.message}`;
        toast(err.message, 'error');
      }
    }
  }
}
