// @ts-check
// The session inspector (issue 15): ES modules, no framework, no build step
// beyond a type check (apps/inspector/tsconfig.json). It calls the tenant API
// with the key the user typed, kept in sessionStorage only. Everything that
// comes from events is untrusted: it is rendered with textContent, never as HTML.
// Full-text search (issue 31) is its own module, search.js; dom.js holds the
// helpers both use.

import { $, el, linkButton, num } from './dom.js';
import { createSearch } from './search.js';

const KEY_STORAGE = 'inspector.apiKey';
const ROW_HEIGHT = 24;
const PAGE = 500;
const OVERSCAN = 20;
const POLL_MS = 2000;

/** @typedef {{ seq: number, id: string, type: string, data: any, createdAt: string, origin?: unknown }} StoredEvent */
/** @typedef {{ id: string, model: string, metadata: any, headSeq: number, createdAt: string, updatedAt: string, archivedAt?: string | null, forkedFrom?: unknown }} SessionRow */

// ---------------------------------------------------------------- API

class ApiError extends Error {
  /** @param {number} status @param {string} code @param {string} message */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE);
}

/** The key goes in the Authorization header only, never in a URL. @param {string} path @param {{ key?: string, accept?: string, signal?: AbortSignal }} [options] */
function request(path, { key = apiKey() ?? '', accept = 'application/json', signal } = {}) {
  return fetch(path, { headers: { authorization: `Bearer ${key}`, accept }, credentials: 'omit', cache: 'no-store', signal });
}

/** @param {string} text @returns {any} */
function parsed(text) {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/** The error a refused request becomes (a 401 signs out). @param {Response} response @param {string} text */
function refusal(response, text) {
  const body = parsed(text);
  const problem = body && typeof body === 'object';
  const detail = problem ? `${body.code ?? ''} ${body.detail ?? body.title ?? ''}`.trim() : String(body).slice(0, 300);
  if (response.status === 401) signOut();
  return new ApiError(response.status, problem && typeof body.code === 'string' ? body.code : '', `${response.status} ${detail}`);
}

/** @param {string} path @param {string} [key] @returns {Promise<any>} */
async function api(path, key) {
  const response = await request(path, { key });
  const text = await response.text();
  if (!response.ok) throw refusal(response, text);
  return parsed(text);
}

const enc = encodeURIComponent;

/** @param {unknown} error */
function showError(error) {
  $('error').textContent = error instanceof Error ? error.message : String(error);
}
function clearError() {
  $('error').textContent = '';
}

// ---------------------------------------------------------------- sign in

function signOut() {
  sessionStorage.removeItem(KEY_STORAGE);
  closeSession();
  sessions.rows = [];
  sessions.cursor = null;
  /** @type {HTMLInputElement} */ ($('find-q')).value = '';
  find.clear();
  renderFindView();
  show('sign-in');
}

/** @param {'sign-in' | 'sessions' | 'session'} view */
function show(view) {
  $('sign-in-view').hidden = view !== 'sign-in';
  $('sessions-view').hidden = view !== 'sessions';
  $('session-view').hidden = view !== 'session';
  $('sign-out').hidden = view === 'sign-in';
  $('tenant-status').textContent = view === 'sign-in' ? '' : 'Signed in (this tab only)';
}

$('sign-in-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($('api-key'));
  const key = input.value.trim();
  $('sign-in-error').textContent = '';
  try {
    await api('/v1/sessions?limit=1', key);
    sessionStorage.setItem(KEY_STORAGE, key);
    input.value = '';
    await openSessions();
  } catch (error) {
    $('sign-in-error').textContent = error instanceof ApiError && error.status === 401 ? 'That key was not accepted.' : String(error instanceof Error ? error.message : error);
  }
});
$('sign-out').addEventListener('click', signOut);

// ---------------------------------------------------------------- sessions list

const SESSIONS_PAGE = 50;

/**
 * The list is the server's search (GET /v1/sessions: metadata containment and
 * title, newest activity first), one page per "Load more" through nextCursor.
 * @type {{ rows: SessionRow[], cursor: string | null, loadedAll: boolean, query: string }}
 */
const sessions = { rows: [], cursor: null, loadedAll: false, query: '' };

/** @param {{ metadata?: any }} s */
function titleOf(s) {
  const m = s.metadata;
  return m && typeof m === 'object' && typeof m.title === 'string' ? m.title : '';
}

/** Archived and forked sessions (retention, forks) say so; fields a deployment lacks are simply absent. @param {SessionRow} s */
function stateOf(s) {
  const bits = [];
  if (s.archivedAt) bits.push(`archived ${new Date(s.archivedAt).toLocaleString()}`);
  const origin = forkOrigin(s);
  if (origin) bits.push(`fork of ${origin.sessionId}${origin.atSeq !== null ? ` at seq ${origin.atSeq}` : ''}`);
  return bits.join(' · ');
}

/** @param {{ forkedFrom?: any }} s @returns {{ sessionId: string, atSeq: number | null } | null} */
function forkOrigin(s) {
  const f = s.forkedFrom;
  if (typeof f === 'string') return { sessionId: f, atSeq: null };
  if (!f || typeof f !== 'object') return null;
  const sessionId = f.sessionId ?? f.id;
  return typeof sessionId === 'string' ? { sessionId, atSeq: typeof f.atSeq === 'number' ? f.atSeq : null } : null;
}

async function openSessions() {
  closeSession();
  show('sessions');
  if (sessions.rows.length === 0) await loadSessions(true);
  else renderSessions();
}

/**
 * The search's query string from the form, or an error for metadata that is not a JSON object
 * (the server would refuse it too; saying so here names the field).
 * @returns {string}
 */
function searchQuery() {
  const title = /** @type {HTMLInputElement} */ ($('search-title')).value.trim();
  const metadata = /** @type {HTMLInputElement} */ ($('search-metadata')).value.trim();
  const params = new URLSearchParams();
  if (title) params.set('title', title);
  if (metadata) {
    /** @type {unknown} */
    let parsed;
    try {
      parsed = JSON.parse(metadata);
    } catch {
      parsed = undefined;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('Metadata must be a JSON object, e.g. {"team":"payments"}');
    params.set('metadata', JSON.stringify(parsed));
  }
  return params.toString();
}

/** A new search (reset) or the next page of the current one; the list changes only when the server answered. @param {boolean} reset */
async function loadSessions(reset) {
  clearError();
  try {
    if (!reset && sessions.loadedAll) return;
    const query = reset ? searchQuery() : sessions.query;
    const params = new URLSearchParams(query);
    params.set('limit', String(SESSIONS_PAGE));
    if (!reset && sessions.cursor) params.set('cursor', sessions.cursor);
    const page = await api(`/v1/sessions?${params}`);
    if (reset) {
      sessions.rows = [];
      sessions.query = query;
    }
    sessions.rows.push(...page.sessions);
    sessions.cursor = page.nextCursor;
    sessions.loadedAll = page.nextCursor === null;
  } catch (error) {
    showError(error);
  }
  renderSessions();
}

function renderSessions() {
  const body = $('sessions-body');
  body.replaceChildren(
    ...sessions.rows.map((s) => {
      const tr = el('tr', {}, [
        el('td', { text: s.id }),
        el('td', { text: titleOf(s) }),
        el('td', { text: s.model }),
        el('td', { text: num(s.headSeq) }),
        el('td', { className: 'activity', text: new Date(s.updatedAt).toLocaleString(), title: s.updatedAt }),
        el('td', { text: stateOf(s) }),
        el('td', { className: 'meta', text: JSON.stringify(s.metadata ?? {}), title: JSON.stringify(s.metadata ?? {}, null, 2) }),
      ]);
      tr.dataset.session = s.id;
      tr.addEventListener('click', () => void openSession(s.id));
      return tr;
    }),
  );
  const filtered = sessions.query ? ' matching the search' : '';
  $('sessions-count').textContent = `${num(sessions.rows.length)} session${sessions.rows.length === 1 ? '' : 's'}${filtered}${sessions.loadedAll ? '' : ', more on the server'}`;
  /** @type {HTMLButtonElement} */ ($('sessions-more')).hidden = sessions.loadedAll;
}

$('search-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void loadSessions(true);
});
$('search-clear').addEventListener('click', () => {
  /** @type {HTMLInputElement} */ ($('search-title')).value = '';
  /** @type {HTMLInputElement} */ ($('search-metadata')).value = '';
  void loadSessions(true);
});
$('sessions-more').addEventListener('click', () => void loadSessions(false));
$('sessions-refresh').addEventListener('click', () => void loadSessions(true));
$('back').addEventListener('click', () => void openSessions());

// ---------------------------------------------------------------- search across sessions

/**
 * What was said or run, in all of the tenant's sessions (GET /v1/search): the
 * hits replace the list until the search is cleared, and stay while a hit's
 * session is open, for the way back.
 */
const find = createSearch({
  route: () => '/v1/search',
  list: $('find-results'),
  more: $('find-more'),
  status: $('find-count'),
  showSession: true,
  api,
  showError,
  clearError,
  onHit: (hit, q) => void openSessionAt(hit.sessionId, hit.seq, q),
  onAnswer: () => renderFindView(),
});

function renderFindView() {
  const active = find.state.q !== '';
  $('find-view').hidden = !active;
  $('sessions-list').hidden = active;
}

$('find-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const q = /** @type {HTMLInputElement} */ ($('find-q')).value.trim();
  if (q) void find.search(q);
  else {
    find.clear();
    renderFindView();
  }
});
$('find-clear').addEventListener('click', () => {
  /** @type {HTMLInputElement} */ ($('find-q')).value = '';
  find.clear();
  renderFindView();
});

// ---------------------------------------------------------------- one session

/**
 * @typedef {{
 *   id: string, headSeq: number, events: Map<number, StoredEvent>, loading: Set<number>,
 *   selected: number | null, pruned: Set<string>, archived: Set<string>,
 *   covered: { fromSeq: number, throughSeq: number }[], refs: Map<string, string>,
 *   tab: string, live: string, stream: AbortController | null, retry: ReturnType<typeof setTimeout> | null, failures: number,
 *   fallback: string | null, timer: ReturnType<typeof setInterval> | null, polling: boolean,
 *   hits: Set<number>,
 * }} OpenSession
 */
/** @type {OpenSession | null} */
let current = null;

function closeSession() {
  if (current) stopLive(current);
  current = null;
}

/** @param {string} id */
async function openSession(id) {
  closeSession();
  clearError();
  let state;
  try {
    state = await api(`/v1/sessions/${enc(id)}`);
  } catch (error) {
    showError(error);
    return;
  }
  current = {
    id, headSeq: state.headSeq, events: new Map(), loading: new Set(), selected: null,
    pruned: new Set(), archived: new Set(), covered: [], refs: new Map(), tab: 'timeline',
    live: 'connecting', stream: null, retry: null, failures: 0, fallback: null, timer: null, polling: false,
    hits: new Set(),
  };
  show('session');
  $('session-title').textContent = id;
  const title = state.metadata && typeof state.metadata.title === 'string' ? ` · ${state.metadata.title}` : '';
  $('session-info').textContent = `${state.model}${title}${state.archivedAt ? ` · archived ${new Date(state.archivedAt).toLocaleString()}` : ''}`;
  const origin = forkOrigin(state);
  $('session-lineage').replaceChildren(...(origin ? [el('span', { className: 'muted', text: 'fork of' }), linkButton(origin.sessionId, () => void openSession(origin.sessionId)), el('span', { className: 'muted', text: origin.atSeq !== null ? `at seq ${origin.atSeq}` : '' })] : []));
  $('event-detail').textContent = '';
  $('event-heading').textContent = 'Select an event';
  $('event-refs').replaceChildren();
  $('event-context').hidden = true;
  $('ctx-messages').replaceChildren();
  $('ctx-tokens').textContent = '';
  /** @type {HTMLInputElement} */ ($('ctx-at')).value = '';
  /** @type {HTMLInputElement} */ ($('jump-seq')).value = '';
  $('compactions-list').replaceChildren();
  $('ref-lines').textContent = '';
  $('ref-info').textContent = '';
  $('grep-results').replaceChildren();
  /** @type {HTMLInputElement} */ ($('session-find-q')).value = '';
  sessionFind.clear();
  $('timeline').scrollTop = 0;
  updateHead();
  selectTab('timeline');
  renderTimeline();
  void loadCompactions();
  void loadMarks(current);
  startLive(current);
}

/**
 * A search hit's session, its timeline at the hit's seq (centred, selected,
 * marked); the session's own search runs the same words, so its other hits
 * are listed and marked too.
 * @param {string} id @param {number} seq @param {string} q
 */
async function openSessionAt(id, seq, q) {
  await openSession(id);
  const session = current;
  if (!session || session.id !== id) return;
  session.hits.add(seq);
  /** @type {HTMLInputElement} */ ($('jump-seq')).value = String(seq);
  select(seq, true);
  /** @type {HTMLInputElement} */ ($('session-find-q')).value = q;
  await sessionFind.search(q);
  // Marked even when the session's search lists it on a later page.
  if (session !== current) return;
  session.hits.add(seq);
  renderTimeline();
}

// Every prune and archive event of the session, whatever part of the timeline
// has been loaded: the marks on old results are complete at open.
/** @param {OpenSession} session */
async function loadMarks(session) {
  try {
    let after = 0;
    for (;;) {
      const page = await api(`/v1/sessions/${enc(session.id)}/events?types=tool_outputs.pruned,tool_results.archived&afterSeq=${after}&limit=${PAGE}`);
      if (session !== current) return;
      for (const e of page.events) addEvent(session, e);
      renderTimeline();
      if (page.nextAfterSeq === null) return;
      after = page.nextAfterSeq;
    }
  } catch (error) {
    if (session === current) showError(error);
  }
}

function updateHead() {
  if (!current) return;
  $('timeline-spacer').style.height = `${current.headSeq * ROW_HEIGHT}px`;
  liveStatus(current);
  /** @type {HTMLInputElement} */ ($('jump-seq')).max = String(current.headSeq);
}

// Live: the session's event stream (GET /events/stream, Server-Sent Events)
// from the last seq known. EventSource cannot send the Authorization header,
// so the page reads the stream with fetch. A hidden tab holds no stream; shown
// again, it reopens from the last seq, so nothing is missed or repeated. A
// dropped stream reconnects with backoff; a stream refused for good (404: no
// stream here, 409: the session is archived, 429: the tenant's streams are
// all taken, or not an event stream) leaves the open session on polling. A
// stream that ends with an `end` event (access ended) reconnects like a
// dropped one, and the reconnection's refusal says why.

const RETRY_MS = 1000;
const RETRY_MAX_MS = 30_000;
/** Statuses that mean no stream for this session view: poll instead. */
const NO_STREAM = new Set([404, 409, 429]);

/** Starts following the session as the tab allows: nothing while hidden. @param {OpenSession} session */
function startLive(session) {
  stopLive(session);
  if (document.hidden) setLive(session, 'paused while the tab is hidden');
  else if (session.fallback) startPolling(session);
  else void openStream(session);
}

/** @param {OpenSession} session */
function stopLive(session) {
  session.stream?.abort();
  session.stream = null;
  if (session.retry) clearTimeout(session.retry);
  session.retry = null;
  if (session.timer) clearInterval(session.timer);
  session.timer = null;
}

/** @param {OpenSession} session @param {string} live */
function setLive(session, live) {
  session.live = live;
  if (session === current) liveStatus(session);
}

/** @param {OpenSession} session */
function liveStatus(session) {
  $('live-status').textContent = `${session.live} · head seq ${num(session.headSeq)}`;
}

document.addEventListener('visibilitychange', () => {
  if (current) startLive(current);
});

/** @param {OpenSession} session */
async function openStream(session) {
  const controller = new AbortController();
  session.stream = controller;
  setLive(session, 'connecting');
  try {
    const response = await request(`/v1/sessions/${enc(session.id)}/events/stream?afterSeq=${session.headSeq}`, { accept: 'text/event-stream', signal: controller.signal });
    if (!response.ok) throw refusal(response, await response.text());
    if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) throw new ApiError(response.status, 'not_an_event_stream', 'not an event stream');
    setLive(session, 'live');
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parse = sseParser();
    for (;;) {
      const { done, value } = await reader.read();
      if (done || session.stream !== controller) break;
      // Anything from the server, a heartbeat included, shows the stream healthy again.
      session.failures = 0;
      const messages = parse(decoder.decode(value, { stream: true }));
      const end = messages.find((m) => m.event === 'end');
      received(session, messages.filter((m) => m.event !== 'end').map((m) => /** @type {StoredEvent} */ (JSON.parse(m.data))));
      if (end) throw new Error(`the stream ended: ${JSON.parse(end.data).reason}`);
    }
    throw new Error('the stream ended');
  } catch (error) {
    if (controller.signal.aborted || session.stream !== controller) return;
    session.stream = null;
    if (error instanceof ApiError && (NO_STREAM.has(error.status) || error.code === 'not_an_event_stream')) {
      session.fallback = `event stream: ${error.status} ${error.code}`;
      startPolling(session);
      return;
    }
    const wait = Math.min(RETRY_MAX_MS, RETRY_MS * 2 ** session.failures);
    session.failures += 1;
    setLive(session, `reconnecting in ${wait / 1000} s (${error instanceof Error ? error.message : error})`);
    session.retry = setTimeout(() => {
      session.retry = null;
      if (session === current && !document.hidden) void openStream(session);
    }, wait);
  }
}

/**
 * A Server-Sent Events parser: feed it decoded text as it arrives, in chunks
 * cut anywhere; it returns the event name and data of each message the text
 * completed (data lines joined with "\n"). Lines end in CRLF, LF or CR;
 * comment lines (the heartbeat) and `id:` are skipped: `id:` repeats the
 * event's seq, which its data carries.
 * @returns {(text: string) => Array<{ event: string, data: string }>}
 */
function sseParser() {
  let buffer = '';
  let event = '';
  /** @type {string[]} */
  let data = [];
  return (text) => {
    /** @type {Array<{ event: string, data: string }>} */
    const messages = [];
    buffer += text;
    const eol = /\r\n|\r|\n/g;
    let start = 0;
    for (let m = eol.exec(buffer); m; m = eol.exec(buffer)) {
      // A CR that ends the text may be the first half of a CRLF: wait for the next chunk.
      if (m[0] === '\r' && m.index === buffer.length - 1) break;
      const line = buffer.slice(start, m.index);
      start = eol.lastIndex;
      if (line === '') {
        if (data.length > 0) messages.push({ event, data: data.join('\n') });
        event = '';
        data = [];
      } else if (line === 'data' || line.startsWith('data:')) {
        const value = line.slice(5);
        data.push(value.startsWith(' ') ? value.slice(1) : value);
      } else if (line.startsWith('event:')) {
        const value = line.slice(6);
        event = value.startsWith(' ') ? value.slice(1) : value;
      }
    }
    buffer = buffer.slice(start);
    return messages;
  };
}

/**
 * New events, from the stream or a poll: rows at the end, the view following
 * them when it was at the bottom, the compaction history refreshed by a
 * compaction event.
 * @param {OpenSession} session @param {StoredEvent[]} events @param {number} [headSeq] the head a poll reported
 */
function received(session, events, headSeq = 0) {
  const fresh = events.filter((e) => e.seq > session.headSeq);
  const head = fresh.reduce((max, e) => Math.max(max, e.seq), headSeq);
  if (session !== current || head <= session.headSeq) return;
  const timeline = $('timeline');
  const atBottom = timeline.scrollTop + timeline.clientHeight >= timeline.scrollHeight - ROW_HEIGHT;
  for (const e of fresh) addEvent(session, e);
  session.headSeq = head;
  updateHead();
  if (atBottom) timeline.scrollTop = timeline.scrollHeight;
  renderTimeline();
  if (fresh.some((e) => e.type.startsWith('compaction.'))) void loadCompactions();
}

// The fallback: the events after the known head every 2 s, an empty page when
// nothing happened. Polling starts with a catch-up poll.
/** @param {OpenSession} session */
function startPolling(session) {
  setLive(session, `live, polling every ${POLL_MS / 1000} s (${session.fallback})`);
  session.timer = setInterval(() => void poll(session), POLL_MS);
  void poll(session);
}

/**
 * One request: the events after the known head (one page; a longer burst's
 * rest loads like any page, when it scrolls into view) and the new head.
 * @param {OpenSession} session
 */
async function poll(session) {
  if (session !== current || session.polling) return;
  session.polling = true;
  try {
    const page = await api(`/v1/sessions/${enc(session.id)}/events?afterSeq=${session.headSeq}&limit=${PAGE}`);
    if (session !== current || !session.timer) return;
    setLive(session, `live, polling every ${POLL_MS / 1000} s (${session.fallback})`);
    received(session, page.events, page.headSeq);
    if (page.nextAfterSeq !== null) void loadCompactions();
  } catch (error) {
    if (session === current && session.timer) setLive(session, `live, polling (last poll failed: ${error instanceof Error ? error.message : error})`);
  } finally {
    session.polling = false;
  }
}

/** @param {OpenSession} session @param {StoredEvent} e */
function addEvent(session, e) {
  session.events.set(e.seq, e);
  if (e.type === 'tool_outputs.pruned') for (const id of callIds(e.data)) session.pruned.add(id);
  if (e.type === 'tool_results.archived') for (const id of callIds(e.data)) session.archived.add(id);
  for (const part of parts(e)) {
    const ref = part.outputRef ?? part.output_ref;
    if (ref && typeof ref.id === 'string') session.refs.set(ref.id, `${part.name ?? 'tool'} · seq ${e.seq}`);
  }
}

/** @param {any} data @returns {string[]} */
function callIds(data) {
  const ids = data?.callIds ?? data?.call_ids ?? [];
  return Array.isArray(ids) ? ids.filter((x) => typeof x === 'string') : [];
}

/** @param {StoredEvent} e @returns {any[]} */
function parts(e) {
  const p = e.data?.message?.parts;
  return Array.isArray(p) ? p : [];
}

// ---------------------------------------------------------------- timeline (virtualized)

/** One line about an event, for its row. */
/** @param {StoredEvent} e */
function summarize(e) {
  const d = e.data ?? {};
  switch (e.type) {
    case 'message.added': {
      const m = d.message ?? {};
      const bits = parts(e).map((p) => {
        if (p.type === 'text' || p.type === 'reasoning') return String(p.text ?? '');
        if (p.type === 'tool_call') return `→ ${p.name}(${JSON.stringify(p.input ?? {})})`;
        if (p.type === 'tool_result') return `← ${p.name ?? p.callId}${p.outputRef ? ` ref=${p.outputRef.id}` : ''} ${typeof p.output === 'string' ? p.output : ''}`;
        return `[${p.type}]`;
      });
      return `${m.role ?? '?'}: ${bits.join(' ')}`;
    }
    case 'step.finished':
      return `usage in=${num(d.usage?.input_tokens)} out=${num(d.usage?.output_tokens)}${d.finishReason ? ` ${d.finishReason}` : ''}`;
    case 'compaction.requested':
      return `marker: ${d.reason ?? ''}${d.auto ? ' (auto)' : ''}`;
    case 'compaction.completed':
      return `pivot: covers ${d.coveredFromSeq ?? 1}..${d.coveredThroughSeq}, tokens ${num(d.tokensBefore)} → ${num(d.tokensAfter)} (${d.strategy}, ${d.model})`;
    case 'compaction.failed':
      return `attempt ${d.attempt ?? ''}: ${d.error?.message ?? d.error ?? ''}`;
    case 'tool_outputs.pruned':
      return `pruned ${callIds(d).length} results, ${num(d.tokensFreed ?? d.tokens_freed)} tokens freed`;
    case 'tool_results.archived':
      return `archived ${callIds(d).length} results`;
    default:
      return JSON.stringify(d);
  }
}

/** @param {OpenSession} session @param {StoredEvent} e */
function markClasses(session, e) {
  const classes = [];
  if (e.type === 'compaction.completed') classes.push('pivot');
  if (e.type === 'tool_outputs.pruned') classes.push('pruned');
  if (e.type === 'tool_results.archived') classes.push('archived');
  for (const p of parts(e)) {
    if (p.type !== 'tool_result') continue;
    if (session.pruned.has(p.callId)) classes.push('pruned');
    if (session.archived.has(p.callId)) classes.push('archived');
  }
  if (session.covered.some((r) => e.seq >= r.fromSeq && e.seq <= r.throughSeq)) classes.push('covered');
  if (session.hits.has(e.seq)) classes.push('hit');
  return classes;
}

/** @type {HTMLElement[]} */
let rowPool = [];

function renderTimeline() {
  const session = current;
  if (!session) return;
  const timeline = $('timeline');
  const spacer = $('timeline-spacer');
  const first = Math.max(1, Math.floor(timeline.scrollTop / ROW_HEIGHT) + 1 - OVERSCAN);
  const last = Math.min(session.headSeq, Math.ceil((timeline.scrollTop + timeline.clientHeight) / ROW_HEIGHT) + OVERSCAN);
  const count = Math.max(0, last - first + 1);
  while (rowPool.length < count) {
    const row = el('div', { className: 'row' }, [el('span', { className: 'seq' }), el('span', { className: 'time' }), el('span', { className: 'type' }), el('span', { className: 'text' })]);
    row.addEventListener('click', () => select(Number(row.dataset.seq)));
    rowPool.push(row);
    spacer.appendChild(row);
  }
  let missing = 0;
  for (let i = 0; i < rowPool.length; i++) {
    const row = rowPool[i];
    if (i >= count) {
      row.hidden = true;
      delete row.dataset.seq;
      continue;
    }
    const seq = first + i;
    const e = session.events.get(seq);
    row.hidden = false;
    row.dataset.seq = String(seq);
    row.style.top = `${(seq - 1) * ROW_HEIGHT}px`;
    const [seqCell, timeCell, typeCell, textCell] = /** @type {HTMLElement[]} */ (Array.from(row.children));
    seqCell.textContent = String(seq);
    if (e) {
      row.className = ['row', ...markClasses(session, e), seq === session.selected ? 'selected' : ''].join(' ').trim();
      timeCell.textContent = new Date(e.createdAt).toLocaleTimeString();
      timeCell.title = e.createdAt;
      typeCell.textContent = e.type;
      textCell.textContent = summarize(e).slice(0, 300);
    } else {
      if (!missing) missing = seq;
      row.className = `row loading${session.hits.has(seq) ? ' hit' : ''}${seq === session.selected ? ' selected' : ''}`;
      timeCell.textContent = '';
      typeCell.textContent = 'loading…';
      textCell.textContent = '';
    }
  }
  if (missing) void loadPage(session, missing);
}

/** Loads the page of events starting at `seq`, once. @param {OpenSession} session @param {number} seq */
async function loadPage(session, seq) {
  const start = Math.floor((seq - 1) / PAGE) * PAGE + 1;
  if (session.loading.has(start)) return;
  session.loading.add(start);
  try {
    const page = await api(`/v1/sessions/${enc(session.id)}/events?afterSeq=${start - 1}&limit=${PAGE}`);
    for (const e of page.events) addEvent(session, e);
    if (session === current) {
      renderTimeline();
      if (session.selected !== null && session.selected >= start && session.selected < start + PAGE) showEvent(session.selected);
    }
  } catch (error) {
    showError(error);
  } finally {
    // A failed page is retried when it comes into view again.
    session.loading.delete(start);
  }
}

$('timeline').addEventListener('scroll', () => renderTimeline(), { passive: true });
window.addEventListener('resize', () => renderTimeline());

/** Selects an event and scrolls its row into view (into the middle with `centre`: a search hit, with what surrounds it). @param {number} seq @param {boolean} [centre] */
function select(seq, centre = false) {
  const session = current;
  if (!session || !Number.isInteger(seq) || seq < 1 || seq > session.headSeq) return;
  session.selected = seq;
  const timeline = $('timeline');
  const top = (seq - 1) * ROW_HEIGHT;
  if (centre) timeline.scrollTop = Math.max(0, top - Math.floor((timeline.clientHeight - ROW_HEIGHT) / 2));
  else if (top < timeline.scrollTop) timeline.scrollTop = top;
  else if (top + ROW_HEIGHT > timeline.scrollTop + timeline.clientHeight) timeline.scrollTop = top + ROW_HEIGHT - timeline.clientHeight;
  renderTimeline();
  showEvent(seq);
}

/** @param {number} seq */
function showEvent(seq) {
  const session = current;
  if (!session) return;
  const e = session.events.get(seq);
  $('event-context').hidden = false;
  if (!e) {
    $('event-heading').textContent = `seq ${seq} · loading…`;
    $('event-detail').textContent = '';
    $('event-refs').replaceChildren();
    return;
  }
  $('event-heading').textContent = `seq ${e.seq} · ${e.type} · ${e.createdAt}`;
  // origin: where a fork's inherited event came from, when the API reports it.
  $('event-detail').textContent = JSON.stringify({ id: e.id, type: e.type, ...(e.origin ? { origin: e.origin } : {}), data: e.data }, null, 2);
  const refs = [];
  for (const p of parts(e)) {
    const ref = p.outputRef ?? p.output_ref;
    if (ref && typeof ref.id === 'string') refs.push(linkButton(`Open tool output ${ref.id}`, () => void openRef(ref.id)));
  }
  $('event-refs').replaceChildren(...refs);
}

$('step-prev').addEventListener('click', () => select((current?.selected ?? 2) - 1));
$('step-next').addEventListener('click', () => select((current?.selected ?? 0) + 1));
$('jump').addEventListener('click', () => select(Number(/** @type {HTMLInputElement} */ ($('jump-seq')).value)));
// Arrow keys (or j/k) step through the timeline wherever the focus is, except in a form field.
document.addEventListener('keydown', (event) => {
  if (!current || current.tab !== 'timeline' || $('session-view').hidden) return;
  const target = /** @type {HTMLElement | null} */ (event.target);
  if (target && ['INPUT', 'SELECT', 'TEXTAREA'].includes(target.tagName)) return;
  if (event.key === 'ArrowDown' || event.key === 'j') select((current?.selected ?? 0) + 1);
  else if (event.key === 'ArrowUp' || event.key === 'k') select((current?.selected ?? 2) - 1);
  else return;
  event.preventDefault();
});
$('event-context').addEventListener('click', () => {
  if (!current?.selected) return;
  /** @type {HTMLInputElement} */ ($('ctx-at')).value = String(current.selected);
  selectTab('context');
  void loadContext();
});

// ---------------------------------------------------------------- search inside the open session

/**
 * The open session's search (GET /v1/sessions/{id}/search): its hits are
 * listed and marked in the timeline; a new search jumps to the best hit, a
 * click to any. The answer says how far the index reaches.
 */
const sessionFind = createSearch({
  route: () => (current ? `/v1/sessions/${enc(current.id)}/search` : null),
  list: $('session-find-results'),
  more: $('session-find-more'),
  status: $('session-find-count'),
  showSession: false,
  api,
  showError,
  clearError,
  onHit: (hit) => {
    if (!current || current.id !== hit.sessionId) return;
    /** @type {HTMLInputElement} */ ($('jump-seq')).value = String(hit.seq);
    select(hit.seq, true);
  },
  onAnswer: (answer, reset) => {
    const session = current;
    if (!session || answer.hits.some((h) => h.sessionId !== session.id)) return;
    // A new search's hits replace the marks; a refused one left them as they were.
    if (reset) session.hits.clear();
    for (const hit of answer.hits) session.hits.add(hit.seq);
    renderTimeline();
  },
});

/** @param {boolean} jump whether to select the best hit */
async function searchSession(jump) {
  const session = current;
  if (!session) return;
  const q = /** @type {HTMLInputElement} */ ($('session-find-q')).value.trim();
  if (!q) {
    session.hits.clear();
    sessionFind.clear();
    renderTimeline();
    return;
  }
  const answer = await sessionFind.search(q);
  const best = answer?.hits[0];
  if (jump && best && session === current) {
    /** @type {HTMLInputElement} */ ($('jump-seq')).value = String(best.seq);
    select(best.seq, true);
    $('session-find-results').querySelector('.hit')?.classList.add('current');
  }
}

$('session-find-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void searchSession(true);
});
$('session-find-clear').addEventListener('click', () => {
  /** @type {HTMLInputElement} */ ($('session-find-q')).value = '';
  void searchSession(false);
});

// ---------------------------------------------------------------- tabs

/** @param {string} tab */
function selectTab(tab) {
  if (current) current.tab = tab;
  for (const button of document.querySelectorAll('.tabs button')) {
    button.setAttribute('aria-selected', String(/** @type {HTMLElement} */ (button).dataset.tab === tab));
  }
  for (const name of ['timeline', 'context', 'compactions', 'outputs']) $(`tab-${name}`).hidden = name !== tab;
  if (tab === 'timeline') renderTimeline();
  if (tab === 'outputs') renderKnownRefs();
}

for (const button of document.querySelectorAll('.tabs button')) {
  button.addEventListener('click', () => {
    const tab = /** @type {HTMLElement} */ (button).dataset.tab ?? 'timeline';
    selectTab(tab);
    if (tab === 'context' && $('ctx-messages').childElementCount === 0) void loadContext();
    if (tab === 'compactions') void loadCompactions();
  });
}

// ---------------------------------------------------------------- what the model sees

/** Counts context reads: only the latest one's answer is shown, however the answers are ordered. */
let contextReads = 0;

async function loadContext() {
  const session = current;
  if (!session) return;
  clearError();
  const format = /** @type {HTMLSelectElement} */ ($('ctx-format')).value;
  const at = /** @type {HTMLInputElement} */ ($('ctx-at')).value.trim();
  const read = ++contextReads;
  try {
    const ctx = await api(`/v1/sessions/${enc(session.id)}/context?format=${enc(format)}${at ? `&atSeq=${enc(at)}` : ''}`);
    if (session !== current || read !== contextReads) return;
    renderTokens(ctx);
    renderMessages(ctx);
  } catch (error) {
    if (read === contextReads) showError(error);
  }
}

/** @param {any} ctx */
function renderTokens(ctx) {
  const t = ctx.tokens ?? {};
  // The bar's full width is the usable window (limit minus the output reserve), else the window.
  const scale = t.usable || t.limit || 0;
  const fill = $('token-fill');
  const threshold = $('token-threshold');
  if (scale > 0) {
    fill.style.width = `${Math.min(100, (100 * (t.estimated ?? 0)) / scale)}%`;
    fill.classList.toggle('over', typeof t.threshold === 'number' && t.estimated >= t.threshold);
    threshold.hidden = typeof t.threshold !== 'number';
    threshold.style.left = `${Math.min(100, (100 * (t.threshold ?? 0)) / scale)}%`;
  } else {
    fill.style.width = '0';
    threshold.hidden = true;
  }
  const where = ctx.atSeq === null || ctx.atSeq === undefined ? `head (seq ${num(ctx.headSeq)})` : `seq ${num(ctx.atSeq)} of ${num(ctx.headSeq)}`;
  const pct = scale > 0 ? ` (${((100 * (t.estimated ?? 0)) / scale).toFixed(1)}% of usable)` : '';
  $('ctx-tokens').textContent =
    `${ctx.format} at ${where}: ${num(t.estimated)} tokens${pct} · usable ${num(t.usable)} · window ${t.limit === 0 ? 'unlimited' : num(t.limit)} · ` +
    `compaction threshold ${num(t.threshold)} · basis ${t.basis ?? '?'} · pivot ${ctx.pivotSeq ?? 'none'} · ${ctx.messages?.length ?? 0} messages`;
}

/** Renders any format's messages generically: a role, then each part or block. @param {any} ctx */
function renderMessages(ctx) {
  const out = [];
  if (ctx.system !== undefined) out.push(messageCard('system', '', [['system', typeof ctx.system === 'string' ? ctx.system : JSON.stringify(ctx.system, null, 2)]]));
  for (const m of Array.isArray(ctx.messages) ? ctx.messages : []) {
    const role = String(m.role ?? m.type ?? 'item');
    const kind = m.metadata?.kind ? String(m.metadata.kind) : m.id ? String(m.id) : '';
    /** @type {[string, string][]} */
    const blocks = [];
    const content = m.parts ?? m.content;
    if (typeof content === 'string') blocks.push(['text', content]);
    else if (Array.isArray(content)) for (const p of content) blocks.push(block(p));
    else {
      const { role: _r, type: _t, ...rest } = m;
      blocks.push([String(m.type ?? 'item'), JSON.stringify(rest, null, 2)]);
    }
    if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls) blocks.push([`tool call ${c.function?.name ?? ''}`, `${c.id}: ${c.function?.arguments ?? ''}`]);
    if (m.tool_call_id) blocks.unshift(['tool_call_id', String(m.tool_call_id)]);
    out.push(messageCard(role, kind, blocks));
  }
  $('ctx-messages').replaceChildren(...out);
}

/** @param {any} p @returns {[string, string]} */
function block(p) {
  if (typeof p === 'string') return ['text', p];
  const type = String(p.type ?? 'part');
  if (typeof p.text === 'string') return [type, p.text];
  if (type === 'tool_call') return [`tool_call ${p.name}`, `${p.callId}: ${JSON.stringify(p.input ?? {})}`];
  if (type === 'tool_use') return [`tool_use ${p.name}`, `${p.id}: ${JSON.stringify(p.input ?? {})}`];
  if (type === 'tool_result') {
    const body = typeof p.output === 'string' ? p.output : typeof p.content === 'string' ? p.content : JSON.stringify(p.content ?? p.output ?? p, null, 2);
    const ref = p.outputRef?.id ? ` ref=${p.outputRef.id}` : '';
    return [`tool_result ${p.name ?? p.callId ?? p.tool_use_id ?? ''}${ref}`, body];
  }
  return [type, JSON.stringify(p, null, 2)];
}

/** @param {string} role @param {string} kind @param {[string, string][]} blocks */
function messageCard(role, kind, blocks) {
  const card = el('div', { className: 'message' }, [el('span', { className: 'role', text: role }), el('span', { className: 'kind', text: kind })]);
  for (const [label, text] of blocks) {
    card.appendChild(el('div', { className: 'part-label', text: label }));
    card.appendChild(el('pre', { className: 'pre', text }));
  }
  return card;
}

$('ctx-load').addEventListener('click', () => void loadContext());
$('ctx-format').addEventListener('change', () => void loadContext());
$('ctx-head').addEventListener('click', () => {
  /** @type {HTMLInputElement} */ ($('ctx-at')).value = '';
  void loadContext();
});

// ---------------------------------------------------------------- compactions

async function loadCompactions() {
  const session = current;
  if (!session) return;
  try {
    /** @type {any[]} */
    const all = [];
    /** @type {any[]} */
    const rewrites = [];
    /** @type {any} */
    let ratios = null;
    let after = 0;
    for (;;) {
      const page = await api(`/v1/sessions/${enc(session.id)}/compactions?afterSeq=${after}&limit=100&include=record`);
      all.push(...page.compactions);
      rewrites.push(...(page.cache?.rewrites ?? []));
      ratios ??= page.cache ?? null;
      if (page.nextAfterSeq === null || page.nextAfterSeq === undefined) break;
      after = page.nextAfterSeq;
    }
    if (session !== current) return;
    session.covered = all.filter((c) => c.status === 'completed' && c.range?.throughSeq).map((c) => ({ fromSeq: c.range.fromSeq ?? 1, throughSeq: c.range.throughSeq }));
    renderTimeline();
    renderCacheCosts(ratios, rewrites);
    renderCompactions(all);
  } catch (error) {
    showError(error);
  }
}

/**
 * What a rewrite cost in prompt cache (docs/compaction.md section 17).
 * @param {{ invalidatedTokens: number | null, rewriteCost: number | null, breakEvenSteps: number | null, repaidAfterSteps: number | null }} cost
 */
function cacheText(cost) {
  if (cost.invalidatedTokens === null) return 'cache: no step before it';
  const repaid = cost.repaidAfterSteps !== null ? `repaid after ${num(cost.repaidAfterSteps)} steps` : cost.breakEvenSteps !== null ? `repays after ${num(cost.breakEvenSteps)} steps` : 'never repaid';
  return `cache: ${num(cost.invalidatedTokens)} invalidated · cost ${num(cost.rewriteCost ?? 0)} · ${repaid}`;
}

/** @param {number | null} ratio */
const pct = (ratio) => (ratio === null || ratio === undefined ? '—' : `${(100 * ratio).toFixed(1)}%`);

/**
 * The session's prompt-cache hit ratios and what each prune and archive cost
 * (compactions carry theirs on their cards).
 * @param {any} ratios @param {any[]} rewrites
 */
function renderCacheCosts(ratios, rewrites) {
  const box = $('compactions-cache');
  if (!ratios) {
    box.replaceChildren();
    return;
  }
  const summary = el('p', {
    text:
      `prompt cache: hit ratio ${pct(ratios.hitRatio)} over ${num(ratios.steps)} steps · ` +
      `${pct(ratios.hitRatioSinceRewrite)} over the ${num(ratios.stepsSinceRewrite)} since the latest rewrite`,
  });
  const rows = rewrites.map((r) =>
    el('div', { className: 'figures' }, [
      el('span', { text: `${r.kind} at seq ${r.seq}` }),
      el('span', { text: `removed ${num(r.removedTokens)}` }),
      el('span', { text: cacheText(r) }),
    ]),
  );
  box.replaceChildren(summary, ...rows);
}

/** @param {any[]} all */
function renderCompactions(all) {
  if (all.length === 0) {
    $('compactions-list').replaceChildren(el('p', { className: 'muted', text: 'No compactions in this session.' }));
    return;
  }
  $('compactions-list').replaceChildren(
    ...all
      .slice()
      .reverse()
      .map((c) => {
        const figures = el('div', { className: 'figures' }, [
          el('span', { text: `status ${c.status}` }),
          el('span', { text: `reason ${c.reason ?? '?'}${c.auto ? ' (auto)' : ''}` }),
          el('span', { text: `strategy ${c.strategy ?? '—'}` }),
          el('span', { text: `model ${c.model ?? '—'}` }),
          el('span', { text: `tokens ${num(c.tokensBefore)} → ${num(c.tokensAfter)}` }),
          el('span', { text: `saved ${num(c.tokensSaved)}` }),
          el('span', { text: c.range ? `covers seq ${c.range.fromSeq ?? 1}..${c.range.throughSeq}` : '' }),
          el('span', { text: c.messagesCompacted !== undefined ? `${num(c.messagesCompacted)} messages compacted` : '' }),
          el('span', { text: typeof c.durationMs === 'number' ? `${num(c.durationMs)} ms` : '' }),
          el('span', { text: c.cache ? cacheText(c.cache) : '' }),
        ]);
        const card = el('div', { className: 'card' }, [el('h3', { text: `Compaction at marker seq ${c.markerSeq}${c.completedSeq ? `, pivot seq ${c.completedSeq}` : ''}` }), figures]);
        if (c.retention !== undefined && c.retention !== null) {
          card.appendChild(el('div', { className: 'part-label', text: 'retention' }));
          card.appendChild(el('pre', { className: 'pre', text: retentionText(c.retention) }));
        }
        if (c.instructions) card.appendChild(el('p', { text: `instructions: ${c.instructions}` }));
        if (Array.isArray(c.failures) && c.failures.length > 0) card.appendChild(el('pre', { className: 'pre', text: `failures: ${JSON.stringify(c.failures, null, 2)}` }));
        const actions = el('div', { className: 'toolbar' });
        // Before: the view just before the pivot landed (the marker's, if none did); after: the view at the pivot.
        const before = c.completedSeq ? c.completedSeq - 1 : c.markerSeq;
        actions.appendChild(linkButton('Context before', () => contextAt(before)));
        if (c.completedSeq) {
          actions.appendChild(linkButton('Context after', () => contextAt(c.completedSeq)));
          actions.appendChild(linkButton('Show pivot in timeline', () => {
            selectTab('timeline');
            select(c.completedSeq);
          }));
        }
        card.appendChild(actions);
        if (typeof c.summary === 'string') {
          card.appendChild(el('div', { className: 'part-label', text: 'summary' }));
          card.appendChild(el('pre', { className: 'pre', text: c.summary }));
        }
        if (typeof c.retain === 'string' && c.retain) {
          card.appendChild(el('div', { className: 'part-label', text: 'retain' }));
          card.appendChild(el('pre', { className: 'pre', text: c.retain }));
        }
        if (c.record && typeof c.record === 'object') card.appendChild(recordDetails(c.record));
        return card;
      }),
  );
}

/** The structured summary record, folded: how many items per section, the whole record on demand. @param {Record<string, unknown>} record */
function recordDetails(record) {
  const sections = Object.entries(record)
    .filter(([, items]) => Array.isArray(items))
    .map(([name, items]) => `${name} ${/** @type {unknown[]} */ (items).length}`);
  const details = el('details', { className: 'record' }, [el('summary', { text: `summary record: ${sections.join(' · ')}` })]);
  details.appendChild(el('pre', { className: 'pre', text: JSON.stringify(record, null, 2) }));
  return details;
}

/** The retention figure: the share of the head's critical facts the new context kept. @param {any} r */
function retentionText(r) {
  if (typeof r !== 'object') return String(r);
  const pct = (/** @type {unknown} */ x) => (typeof x === 'number' ? `${(x * 100).toFixed(1)}%` : '—');
  const lines = [`retention ${pct(r.ratio)} (${num(r.kept)} of ${num(r.critical)} critical facts; summarizer alone ${pct(r.summarizerRatio)}; carried forward ${num(r.carried)})`];
  if (Array.isArray(r.missing) && r.missing.length > 0) lines.push('missing:', ...r.missing.map((/** @type {unknown} */ m) => `  - ${String(m)}`));
  return lines.join('\n');
}

/** @param {number} seq */
function contextAt(seq) {
  /** @type {HTMLInputElement} */ ($('ctx-at')).value = String(seq);
  selectTab('context');
  void loadContext();
}

// ---------------------------------------------------------------- tool outputs

function renderKnownRefs() {
  const session = current;
  if (!session) return;
  const items = Array.from(session.refs.entries()).map(([id, where]) => el('span', {}, [linkButton(id, () => void openRef(id)), el('span', { className: 'muted', text: `(${where})` })]));
  $('known-refs').replaceChildren(...(items.length ? [el('span', { className: 'muted', text: 'Refs in loaded events: ' }), ...items] : []));
}

/** @param {string} ref */
async function openRef(ref) {
  /** @type {HTMLInputElement} */ ($('ref-id')).value = ref;
  /** @type {HTMLInputElement} */ ($('ref-offset')).value = '1';
  selectTab('outputs');
  await readRef();
}

async function readRef() {
  clearError();
  const ref = /** @type {HTMLInputElement} */ ($('ref-id')).value.trim();
  const offset = Number(/** @type {HTMLInputElement} */ ($('ref-offset')).value) || 1;
  const limit = Number(/** @type {HTMLInputElement} */ ($('ref-limit')).value) || 200;
  if (!ref) return;
  try {
    const page = await api(`/v1/tool-outputs/${enc(ref)}?offset=${offset}&limit=${limit}`);
    const r = page.ref ?? {};
    const end = page.offset + page.lineCount - 1;
    $('ref-info').textContent = `${r.id ?? ref}: lines ${num(page.offset)}–${num(end)} of ${num(page.totalLines)} · ${num(r.byteSize ?? r.byte_size)} bytes`;
    $('ref-lines').textContent = page.lines;
    const next = /** @type {HTMLButtonElement} */ ($('ref-next'));
    next.disabled = page.nextOffset === null;
    next.dataset.offset = String(page.nextOffset ?? '');
  } catch (error) {
    showError(error);
  }
}

async function grepRef() {
  clearError();
  const ref = /** @type {HTMLInputElement} */ ($('ref-id')).value.trim();
  const pattern = /** @type {HTMLInputElement} */ ($('grep-pattern')).value;
  const icase = /** @type {HTMLInputElement} */ ($('grep-icase')).checked;
  if (!ref || !pattern) return;
  try {
    const result = await api(`/v1/tool-outputs/${enc(ref)}/grep?pattern=${enc(pattern)}&context=1&limit=200${icase ? '&ignoreCase=true' : ''}`);
    const matches = Array.isArray(result.matches) ? result.matches : [];
    const heading = el('p', { text: `${matches.length} match${matches.length === 1 ? '' : 'es'} for /${pattern}/${result.partial ? ` (stopped: ${result.partial.reason})` : ''}` });
    const rows = matches.map((/** @type {any} */ m) => {
      const div = el('div', { className: 'grep-match' });
      for (const line of m.before ?? []) div.appendChild(el('div', { className: 'ctx', text: typeof line === 'string' ? line : `${line.line}: ${line.text}` }));
      div.appendChild(el('div', {}, [el('span', { className: 'lineno', text: String(m.line) }), el('span', { text: m.text })]));
      for (const line of m.after ?? []) div.appendChild(el('div', { className: 'ctx', text: typeof line === 'string' ? line : `${line.line}: ${line.text}` }));
      div.addEventListener('click', () => {
        /** @type {HTMLInputElement} */ ($('ref-offset')).value = String(m.line);
        void readRef();
      });
      return div;
    });
    $('grep-results').replaceChildren(heading, ...rows);
  } catch (error) {
    showError(error);
  }
}

$('ref-read').addEventListener('click', () => void readRef());
$('ref-next').addEventListener('click', () => {
  const next = /** @type {HTMLButtonElement} */ ($('ref-next')).dataset.offset;
  if (!next) return;
  /** @type {HTMLInputElement} */ ($('ref-offset')).value = next;
  void readRef();
});
$('grep-run').addEventListener('click', () => void grepRef());
$('grep-pattern').addEventListener('keydown', (event) => {
  if (event.key === 'Enter') void grepRef();
});

// ---------------------------------------------------------------- start

if (apiKey()) void openSessions();
else show('sign-in');
