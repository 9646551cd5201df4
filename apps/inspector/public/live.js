// @ts-check
// The open session followed live: its event stream (GET /events/stream, Server-Sent Events)
// from the last seq known. EventSource cannot send the Authorization header,
// so the page reads the stream with fetch. A hidden tab holds no stream; shown
// again, it reopens from the last seq, so nothing is missed or repeated. A
// dropped stream reconnects with backoff; a stream refused for good (404: no
// stream here, 409: the session is archived, 429: the tenant's streams are
// all taken, or not an event stream) leaves the open session on polling. A
// stream that ends with an `end` event (access ended) reconnects like a
// dropped one, and the reconnection's refusal says why.

import { api, ApiError, enc, refusal, request } from './api.js';
import { loadCompactions } from './compactions.js';
import { $ } from './dom.js';
import { addEvent, EVENTS_PAGE } from './events.js';
import { num } from './format.js';
import { sseBatches } from './sse.js';
import { current } from './state.js';
import { renderTimeline, resizeTimeline, ROW_HEIGHT } from './timeline.js';

/** @typedef {import('./state.js').StoredEvent} StoredEvent */
/** @typedef {import('./state.js').OpenSession} OpenSession */

const POLL_MS = 2000;
const RETRY_MS = 1000;
const RETRY_MAX_MS = 30_000;
/** Statuses that mean no stream for this session view: poll instead. */
const NO_STREAM = new Set([404, 409, 429]);

/** Starts following the session as the tab allows: nothing while hidden. @param {OpenSession} session */
export function startLive(session) {
  stopLive(session);
  if (document.hidden) setLive(session, 'paused while the tab is hidden');
  else if (session.fallback) startPolling(session);
  else void openStream(session);
}

/** @param {OpenSession} session */
export function stopLive(session) {
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
    for await (const messages of sseBatches(response.body)) {
      if (session.stream !== controller) break;
      // Anything from the server, a heartbeat included, shows the stream healthy again.
      session.failures = 0;
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

/** The timeline's length and the status line, at the head known. @param {OpenSession} session */
export function updateHead(session) {
  resizeTimeline(session);
  liveStatus(session);
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
  updateHead(session);
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
    const page = await api(`/v1/sessions/${enc(session.id)}/events?afterSeq=${session.headSeq}&limit=${EVENTS_PAGE}`);
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
