// @ts-check
// Full-text search in the inspector: across the tenant's sessions
// (GET /v1/search) and inside the open session (GET /v1/sessions/{id}/search),
// the same hits on both. A snippet is untrusted text: its highlights are built
// as text nodes and <mark> elements, never parsed as HTML.

import { api } from './api.js';
import { clearError, el, showError } from './dom.js';
import { num } from './format.js';

/**
 * @typedef {{
 *   sessionId: string, title?: string | null, seq: number, part: number, eventType: string,
 *   role?: string | null, partType?: string | null, toolName?: string | null, createdAt: string, score: number,
 *   snippet: { text: string, highlights: unknown },
 * }} Hit
 */
/** @typedef {{ hits: Hit[], nextCursor: string | null, capped?: boolean, headSeq?: number, indexedThroughSeq?: number }} SearchAnswer */

/** Hits per page (the API's default; it allows 1-100). */
export const SEARCH_PAGE = 20;

/**
 * The snippet as nodes: its text, with each `[start, end)` range in a <mark>.
 * Offsets are UTF-16 code units, a JavaScript string's indexes, so `slice`
 * cuts them as the server meant. Ranges out of order, overlapping or out of
 * bounds are sorted, trimmed or dropped: the text is always shown whole.
 * @param {string} text @param {unknown} highlights @returns {Node[]}
 */
export function markedSnippet(text, highlights) {
  /** @type {[number, number][]} */
  const ranges = [];
  for (const r of Array.isArray(highlights) ? highlights : []) {
    if (!Array.isArray(r) || !Number.isInteger(r[0]) || !Number.isInteger(r[1])) continue;
    const start = Math.max(0, r[0]);
    const end = Math.min(text.length, r[1]);
    if (start < end) ranges.push([start, end]);
  }
  ranges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  /** @type {Node[]} */
  const nodes = [];
  let at = 0;
  for (const [s, e] of ranges) {
    const start = Math.max(s, at);
    if (start >= e) continue;
    if (start > at) nodes.push(document.createTextNode(text.slice(at, start)));
    nodes.push(el('mark', { text: text.slice(start, e) }));
    at = e;
  }
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}

/** What the hit is: the role (or the event type for summaries, pins, the system prompt), the part's type, the tool. @param {Hit} hit */
export function hitKind(hit) {
  const bits = [hit.role ? String(hit.role) : String(hit.eventType)];
  if (hit.partType && hit.partType !== 'text') bits.push(String(hit.partType));
  if (hit.toolName) bits.push(String(hit.toolName));
  return bits.join(' · ');
}

/**
 * One search box and its list of hits, a page at a time through `nextCursor`.
 * Only the latest search's answers are shown, however they are ordered; a
 * refused search shows its problem and keeps the list as it was.
 * @param {{
 *   route: () => string | null,
 *   list: HTMLElement, more: HTMLButtonElement, status: HTMLElement,
 *   showSession: boolean,
 *   onHit: (hit: Hit, q: string) => void,
 *   onAnswer?: (answer: SearchAnswer, reset: boolean) => void,
 * }} options
 */
export function createSearch({ route, list, more, status, showSession, onHit, onAnswer }) {
  const state = { q: '', route: '', hits: /** @type {Hit[]} */ ([]), cursor: /** @type {string | null} */ (null), capped: false, note: '', reads: 0 };

  function render() {
    list.replaceChildren(...state.hits.map((hit) => hitItem(hit)));
    list.hidden = state.q === '';
    more.hidden = state.cursor === null;
    if (!state.q) {
      status.textContent = '';
      return;
    }
    const n = state.hits.length;
    const found = n === 0 ? `No hits for “${state.q}”` : `${num(n)} hit${n === 1 ? '' : 's'} for “${state.q}”`;
    const rest = state.cursor !== null ? ', more on the server' : '';
    const capped = state.capped ? ' (ranked among the first matches only: add a word)' : '';
    status.textContent = `${found}${rest}${capped}${state.note}`;
  }

  /** @param {Hit} hit */
  function hitItem(hit) {
    const head = el('div', { className: 'hit-head' });
    if (showSession) {
      head.appendChild(el('span', { className: 'hit-title', text: hit.title || '(untitled)' }));
      head.appendChild(el('span', { className: 'hit-session', text: hit.sessionId }));
    }
    head.appendChild(el('span', { className: 'hit-seq', text: `seq ${hit.seq}` }));
    head.appendChild(el('span', { className: 'hit-kind', text: hitKind(hit) }));
    head.appendChild(el('span', { className: 'hit-time muted', text: new Date(hit.createdAt).toLocaleString(), title: hit.createdAt }));
    const snippet = el('div', { className: 'snippet' }, markedSnippet(String(hit.snippet?.text ?? ''), hit.snippet?.highlights));
    const item = el('div', { className: 'hit' }, [head, snippet]);
    item.tabIndex = 0;
    item.dataset.session = hit.sessionId;
    item.dataset.seq = String(hit.seq);
    const open = () => {
      for (const other of list.querySelectorAll('.hit.current')) other.classList.remove('current');
      item.classList.add('current');
      onHit(hit, state.q);
    };
    item.addEventListener('click', open);
    item.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter') return;
      event.preventDefault();
      open();
    });
    return item;
  }

  /**
   * A new search (reset) or the next page of the current one.
   * @param {string} [q] the words, for a new search
   * @returns {Promise<SearchAnswer | null>} the answer, or null when it was refused or superseded
   */
  async function load(q) {
    const reset = q !== undefined;
    const words = reset ? q.trim() : state.q;
    const path = reset ? route() : state.route;
    if (!words || !path || (!reset && state.cursor === null)) return null;
    clearError();
    const read = ++state.reads;
    const params = new URLSearchParams({ q: words, limit: String(SEARCH_PAGE) });
    if (!reset && state.cursor) params.set('cursor', state.cursor);
    try {
      /** @type {SearchAnswer} */
      const answer = await api(`${path}?${params}`);
      if (read !== state.reads) return null;
      if (reset) Object.assign(state, { q: words, route: path, hits: [] });
      state.hits.push(...answer.hits);
      state.cursor = answer.nextCursor ?? null;
      state.capped = answer.capped === true;
      state.note = typeof answer.indexedThroughSeq === 'number' && typeof answer.headSeq === 'number' && answer.indexedThroughSeq < answer.headSeq
        ? ` · indexed through seq ${num(answer.indexedThroughSeq)} of ${num(answer.headSeq)}: later events are not found yet`
        : '';
      render();
      onAnswer?.(answer, reset);
      return answer;
    } catch (error) {
      if (read === state.reads) showError(error);
      return null;
    }
  }

  function clear() {
    state.reads += 1;
    Object.assign(state, { q: '', route: '', hits: [], cursor: null, capped: false, note: '' });
    render();
  }

  more.addEventListener('click', () => void load());
  render();
  return { search: (/** @type {string} */ q) => load(q), clear, state };
}
