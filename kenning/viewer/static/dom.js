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

export function timeEl(epochSeconds) {
  return h('time', {datetime: new Date(epochSeconds * 1000).toISOString(), title: fullTime(epochSeconds)},
    when(epochSeconds));
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
