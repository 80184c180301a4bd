// DOM building without innerHTML: every piece of data goes in through textContent or attributes.

const SVG_NS = 'http://www.w3.org/2000/svg';
const PROPS = new Set(['value', 'checked', 'selected', 'indeterminate']);

function setProps(el, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    else if (k === 'text') el.textContent = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (PROPS.has(k)) el[k] = v;
    else if (k === 'style') throw new Error('no style attributes: the CSP forbids them');
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function addChildren(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) addChildren(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** h('li', {class: 'x', onclick: fn}, 'text', child, [more]) */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  addChildren(el, children);
  return el;
}

export function svg(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setProps(el, props);
  addChildren(el, children);
  return el;
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);

const rtf = new Intl.RelativeTimeFormat(undefined, {numeric: 'auto'});
const dtf = new Intl.DateTimeFormat(undefined, {dateStyle: 'medium', timeStyle: 'short'});
const dayFmt = new Intl.DateTimeFormat(undefined, {month: 'short', day: 'numeric'});

export function when(epochSeconds) {
  if (!epochSeconds) return '';
  const d = new Date(epochSeconds * 1000);
  const diff = (Date.now() - d.getTime()) / 1000;
  if (diff < 45 && diff > -45) return 'just now';
  if (diff < 3600 && diff > 0) return rtf.format(-Math.round(diff / 60), 'minute');
  if (diff < 86400 && diff > 0) return rtf.format(-Math.round(diff / 3600), 'hour');
  return dtf.format(d);
}

export function fullTime(epochSeconds) {
  return epochSeconds ? dtf.format(new Date(epochSeconds * 1000)) : '';
}

export function shortDay(isoDay) {
  const [y, m, d] = String(isoDay).split('-').map(Number);
  return y ? dayFmt.format(new Date(y, m - 1, d)) : String(isoDay);
}

/** A <time> that says "5 minutes ago"; refreshTimes() keeps every one of them current. */
export function timeEl(epochSeconds) {
  return h('time', {datetime: new Date(epochSeconds * 1000).toISOString(), title: fullTime(epochSeconds),
    dataset: {at: String(epochSeconds)}}, when(epochSeconds));
}

export function refreshTimes(root = document) {
  for (const el of root.querySelectorAll('time[data-at]')) {
    const text = when(Number(el.dataset.at));
    if (el.textContent !== text) el.textContent = text;
  }
}

const longDay = new Intl.DateTimeFormat(undefined, {weekday: 'long', month: 'long', day: 'numeric'});
const longDayYear = new Intl.DateTimeFormat(undefined, {weekday: 'long', month: 'long', day: 'numeric', year: 'numeric'});
const dateOnly = new Intl.DateTimeFormat(undefined, {day: 'numeric', month: 'short', year: 'numeric'});

/** The local calendar day of an instant, as YYYY-MM-DD (what the feed groups by). */
export function localDay(epochSeconds) {
  const d = new Date(epochSeconds * 1000);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** "Today", "Yesterday", or the weekday and date of a YYYY-MM-DD day. */
export function dayName(isoDay) {
  const [y, m, d] = isoDay.split('-').map(Number);
  const date = new Date(y, m - 1, d);
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  const diff = Math.round((today - date) / 86400000);
  if (diff === 0) return 'Today';
  if (diff === 1) return 'Yesterday';
  return (y === today.getFullYear() ? longDay : longDayYear).format(date);
}

/** A YYYY-MM-DD day for a sentence: "3 Jan 2026". */
export function dateText(isoDay) {
  const [y, m, d] = String(isoDay).split('-').map(Number);
  return y ? dateOnly.format(new Date(y, m - 1, d)) : String(isoDay);
}

/** Text shortened to n characters at a word boundary when one is near. */
export function shorten(text, n = 60) {
  const s = String(text).replace(/\s+/g, ' ').trim();
  if (s.length <= n) return s;
  let head = s.slice(0, n - 1);
  const sp = head.lastIndexOf(' ');
  if (sp > n * 0.6) head = head.slice(0, sp);
  return `${head.replace(/[\s,;:.-]+$/, '')}…`;
}

export const plural = (n, one, many = `${one}s`) => `${num(n)} ${n === 1 ? one : many}`;

// ------------------------------------------------------------------------ rich text

function escapeRx(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * A pattern for the words a search matched. Plain words match as word prefixes after dropping
 * a common ending (the index stems "tests" to "test"); identifiers and paths match as written.
 * A word in Chinese, Japanese or Korean matches as written wherever it is: the index finds it
 * inside a run of such text (数据库 in 我们把数据库迁移了), so the mark goes there too.
 */
export function matcher(terms) {
  const parts = [];
  const inner = [];
  for (const t of terms || []) {
    const w = String(t).toLowerCase();
    if (!w) continue;
    if (CJK.test(w)) {
      inner.push(escapeRx(w));
    } else if (/^[\p{L}\p{N}]+$/u.test(w)) {
      const stem = w.length > 4 ? w.replace(/(ing|ed|es|s)$/u, '') : w;
      parts.push(`${escapeRx(stem)}[\\p{L}\\p{N}_]*`);
    } else {
      parts.push(escapeRx(w));
    }
  }
  const alts = [];
  if (parts.length) alts.push(`(?<![\\p{L}\\p{N}_])(?:${parts.join('|')})`);
  if (inner.length) alts.push(inner.sort((a, b) => b.length - a.length).join('|'));
  if (!alts.length) return null;
  return new RegExp(alts.join('|'), 'giu');
}

function marked(text, rx) {
  if (!rx || !text) return [text];
  const out = [];
  let last = 0;
  rx.lastIndex = 0;
  for (const m of text.matchAll(rx)) {
    if (!m[0]) continue;
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(h('mark', null, m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Memory text as nodes: `backticks` become <code>, matched words <mark>; never markup from the text. */
export function rich(text, rx = null) {
  const s = String(text || '');
  const out = [];
  const parts = s.split(/`([^`\n]+)`/);
  parts.forEach((part, i) => {
    if (!part) return;
    if (i % 2) out.push(h('code', {class: 'code-span'}, marked(part, rx)));
    else out.push(...marked(part, rx));
  });
  return out;
}

const nf = new Intl.NumberFormat();
export const num = (n) => (n === null || n === undefined || Number.isNaN(Number(n)) ? '–' : nf.format(n));

export function bytes(n) {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = Number(n);
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** Plain text of any JSON-ish value, for generic key/value lists. */
export function plain(v) {
  if (v === null || v === undefined || v === '') return '–';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'number') return num(v);
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

export function debounce(fn, ms) {
  let t = 0;
  const wrapped = (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
  wrapped.cancel = () => clearTimeout(t);
  return wrapped;
}

let toastTimer = 0;
export function toast(message, kind = 'info') {
  const el = document.getElementById('toast');
  el.textContent = message;
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 4000);
}
