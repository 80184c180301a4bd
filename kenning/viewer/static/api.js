// Talking to the worker: the sign-in flow (one-time code or pasted token → viewer session in
// localStorage → Authorization header), JSON calls under /api/viewer, and the live stream read
// with fetch() (EventSource cannot send the Authorization header).

const KEY = 'kenning.session';
const OLD_KEY = 'kenning.token'; // before sessions: the raw token itself; never kept any more
const BASE = '/api/viewer/';

export class AuthError extends Error {}
export class ApiError extends Error {
  constructor(message, status, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

/** Trade {code} or {token} for a viewer session; resolves to an error message or ''. */
export async function signIn(credential) {
  let res;
  try {
    res = await fetch(`${BASE}session`, {
      method: 'POST', cache: 'no-store', credentials: 'omit',
      headers: {'Content-Type': 'application/json', Accept: 'application/json'},
      body: JSON.stringify(credential),
    });
  } catch (err) {
    return `could not reach the worker: ${err.message}`;
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok || !data || !data.session) return (data && data.error) || `${res.status} ${res.statusText}`;
  localStorage.setItem(KEY, data.session);
  return '';
}

/** A #code=… fragment (from `kenning open`): drop it from the address bar at once, then trade it. */
export async function takeCodeFromUrl() {
  localStorage.removeItem(OLD_KEY);
  const hash = location.hash.replace(/^#/, '');
  if (!hash) return null;
  const params = new URLSearchParams(hash);
  const code = params.get('code');
  const token = params.get('token'); // an address printed by an older `kenning open`
  if (code === null && token === null) return null;
  params.delete('code');
  params.delete('token');
  const rest = params.toString();
  history.replaceState(history.state, '', location.pathname + location.search + (rest ? `#${rest}` : ''));
  if (code && code.trim()) return signIn({code: code.trim()});
  if (token && token.trim()) return signIn({token: token.trim()});
  return null;
}

export const getToken = () => localStorage.getItem(KEY) || '';
export const clearToken = () => localStorage.removeItem(KEY);

function unauthorised(message) {
  window.dispatchEvent(new CustomEvent('kenning:unauthorised', {detail: message}));
  return new AuthError(message);
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v === null || v === undefined || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The worker did not answer at all (stopped, restarting): worth retrying, never "memory is empty". */
export class NetworkError extends Error {}

/** Whether a failed call may succeed later by itself (worker down, database busy, a 5xx). */
export const retryable = (err) => err instanceof NetworkError || (err instanceof ApiError && err.status >= 500);

/** One JSON call: api('feed', {params: {limit: 50}}), api('observations/3', {method: 'PATCH', body}). */
export async function api(path, {method = 'GET', params, body, signal} = {}) {
  const token = getToken();
  if (!token) throw unauthorised('');
  const headers = {Authorization: `Bearer ${token}`, Accept: 'application/json'};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    // 'feed' is under /api/viewer/; '/api/observations/pin' (the worker's own routes) as given.
    res = await fetch((path.startsWith('/api/') ? path : BASE + path) + query(params), {
      method, headers, signal, cache: 'no-store', credentials: 'omit',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new NetworkError('the worker is not answering');
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (res.status === 401) throw unauthorised((data && data.error) || 'the token was refused');
  if (!res.ok) throw new ApiError((data && data.error) || `${res.status} ${res.statusText}`, res.status, data);
  link.ok();
  return data;
}

/**
 * The connection to the worker as the page sees it. A load that failed for a reason that may
 * pass (worker stopped, database busy) calls lost(err, retry): the banner says what is wrong
 * and how to fix it, the worker's public health route is probed with backoff (1 s → 15 s), and
 * every waiting retry runs once it answers (or the live stream reconnects, or the user presses
 * Retry now). Listeners get a 'change' event.
 */
class Link extends EventTarget {
  constructor() {
    super();
    this.down = false;
    this.error = null;
    this.waiting = new Set();
    this.delay = 1000;
    this.timer = 0;
    this.nextAt = 0;
  }

  lost(err, retry) {
    if (retry) this.waiting.add(retry);
    this.error = err;
    if (this.down) return;
    this.down = true;
    this.schedule();
  }

  schedule() {
    clearTimeout(this.timer);
    this.nextAt = Date.now() + this.delay;
    this.timer = setTimeout(() => this.probe(), this.delay);
    this.delay = Math.min(15000, this.delay * 2);
    this.dispatchEvent(new Event('change'));
  }

  async probe() {
    clearTimeout(this.timer);
    this.nextAt = 0;
    this.dispatchEvent(new Event('change'));
    let up = false;
    try {
      const res = await fetch('/api/health', {cache: 'no-store', credentials: 'omit'});
      up = res.ok;
    } catch {
      up = false;
    }
    if (!this.down) return;
    // Up: the waiting calls run again and say themselves whether they still fail (a busy
    // database); the delay keeps growing until one of them succeeds.
    if (up) this.back();
    else this.schedule();
  }

  /** Evidence the worker answers (the stream reconnected, a call succeeded): run what waited. */
  back() {
    if (!this.down) return;
    clearTimeout(this.timer);
    this.down = false;
    this.error = null;
    const waiting = [...this.waiting];
    this.waiting.clear();
    this.dispatchEvent(new Event('change'));
    for (const fn of waiting) fn();
  }

  /** Run fn now, or once the worker answers again. */
  whenBack(fn) {
    if (this.down) this.waiting.add(fn);
    else fn();
  }

  /** A call succeeded: the next outage starts again from a short delay. */
  ok() {
    this.delay = 1000;
    if (this.down) this.back();
  }

  retryNow() {
    if (this.down) this.probe();
  }
}

export const link = new Link();

const sleep = (ms) => new Promise((r) => { setTimeout(r, ms); });

/**
 * The live stream. Calls onItem(item), onStatus(status), onState('connected' | 'reconnecting' |
 * 'unauthorised'). Reconnects by itself with backoff 0.5 s → 5 s, resuming after the last
 * item's id (Last-Event-ID). A connection silent for 20 s (status comes every 5 s) is
 * dropped and reopened. Returns {close()}.
 */
export function openStream({onItem, onStatus, onState, onChanged = () => {}}) {
  let lastId = null;
  let closed = false;
  let ctrl = null;
  let delay = 500;

  function dispatch(block) {
    let event = 'message';
    let id = null;
    const data = [];
    for (const line of block.split(/\r\n|\r|\n/)) {
      if (!line || line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? '' : line.slice(i + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
    if (id !== null) lastId = id;
    if (!data.length) return;
    let payload;
    try {
      payload = JSON.parse(data.join('\n'));
    } catch {
      return;
    }
    if (event === 'item') onItem(payload);
    else if (event === 'status') onStatus(payload);
    else if (event === 'changed') onChanged(payload);
  }

  async function once() {
    ctrl = new AbortController();
    const headers = {Authorization: `Bearer ${getToken()}`, Accept: 'text/event-stream'};
    if (lastId !== null) headers['Last-Event-ID'] = lastId;
    const res = await fetch(`${BASE}stream`, {headers, signal: ctrl.signal, cache: 'no-store', credentials: 'omit'});
    if (res.status === 401) {
      closed = true;
      onState('unauthorised');
      unauthorised('the token was refused');
      return;
    }
    if (!res.ok || !res.body) throw new Error(`stream: ${res.status}`);
    onState('connected');
    link.back();
    delay = 500;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    let watchdog = 0;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => ctrl.abort(), 20000);
    };
    arm();
    try {
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        arm();
        buf += value;
        let m;
        while ((m = /\r\n\r\n|\n\n|\r\r/.exec(buf))) {
          dispatch(buf.slice(0, m.index));
          buf = buf.slice(m.index + m[0].length);
        }
      }
    } finally {
      clearTimeout(watchdog);
    }
  }

  (async () => {
    while (!closed) {
      try {
        await once();
      } catch {
        // connection refused, reset or dropped by the watchdog: try again below
      }
      if (closed) return;
      onState('reconnecting');
      await sleep(delay);
      delay = Math.min(5000, delay * 2);
    }
  })();

  return {
    close() {
      closed = true;
      if (ctrl) ctrl.abort();
    },
  };
}
