// @ts-check
// The open session's timeline: one row per seq, only the rows in view in the
// DOM (a pool reused as it scrolls), pages of events loaded as they come into
// view; the selected event's detail beside it.

import { api, enc } from './api.js';
import { contextAt } from './context.js';
import { $, el, linkButton, showError } from './dom.js';
import { addEvent, EVENTS_PAGE, parts, summarize } from './events.js';
import { whenTabShows } from './navigation.js';
import { openRef } from './outputs.js';
import { current } from './state.js';

/** @typedef {import('./state.js').StoredEvent} StoredEvent */
/** @typedef {import('./state.js').OpenSession} OpenSession */

export const ROW_HEIGHT = 24;
const OVERSCAN = 20;

/** What a newly opened session starts with: nothing selected, the top in view. */
export function clearTimeline() {
  $('event-detail').textContent = '';
  $('event-heading').textContent = 'Select an event';
  $('event-refs').replaceChildren();
  $('event-context').hidden = true;
  /** @type {HTMLInputElement} */ ($('jump-seq')).value = '';
  $('timeline').scrollTop = 0;
}

/** A row per seq up to the head. @param {OpenSession} session */
export function resizeTimeline(session) {
  $('timeline-spacer').style.height = `${session.headSeq * ROW_HEIGHT}px`;
  /** @type {HTMLInputElement} */ ($('jump-seq')).max = String(session.headSeq);
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

export function renderTimeline() {
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
  const start = Math.floor((seq - 1) / EVENTS_PAGE) * EVENTS_PAGE + 1;
  if (session.loading.has(start)) return;
  session.loading.add(start);
  try {
    const page = await api(`/v1/sessions/${enc(session.id)}/events?afterSeq=${start - 1}&limit=${EVENTS_PAGE}`);
    for (const e of page.events) addEvent(session, e);
    if (session === current) {
      renderTimeline();
      if (session.selected !== null && session.selected >= start && session.selected < start + EVENTS_PAGE) showEvent(session.selected);
    }
  } catch (error) {
    showError(error);
  } finally {
    // A failed page is retried when it comes into view again.
    session.loading.delete(start);
  }
}

/** Selects an event and scrolls its row into view (into the middle with `centre`: a search hit, with what surrounds it). @param {number} seq @param {boolean} [centre] */
export function select(seq, centre = false) {
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
  if (current?.selected) contextAt(current.selected);
});
$('timeline').addEventListener('scroll', () => renderTimeline(), { passive: true });
window.addEventListener('resize', () => renderTimeline());
whenTabShows('timeline', renderTimeline);
