// @ts-check
// Opening and closing one session: its header and lineage, each view reset,
// the prune and archive marks loaded whole, and the live stream started.

import { api, enc } from './api.js';
import { clearCompactions, loadCompactions } from './compactions.js';
import { clearContext } from './context.js';
import { $, clearError, el, linkButton, showError } from './dom.js';
import { addEvent, EVENTS_PAGE } from './events.js';
import { forkOrigin } from './format.js';
import { startLive, stopLive, updateHead } from './live.js';
import { selectTab, show } from './navigation.js';
import { clearOutputs } from './outputs.js';
import { sessionFind } from './session-search.js';
import { current, setCurrent } from './state.js';
import { clearTimeline, renderTimeline, select } from './timeline.js';

/** @typedef {import('./state.js').OpenSession} OpenSession */

export function closeSession() {
  if (current) stopLive(current);
  setCurrent(null);
}

/** @param {string} id */
export async function openSession(id) {
  closeSession();
  clearError();
  let state;
  try {
    state = await api(`/v1/sessions/${enc(id)}`);
  } catch (error) {
    showError(error);
    return;
  }
  /** @type {OpenSession} */
  const session = {
    id, headSeq: state.headSeq, events: new Map(), loading: new Set(), selected: null,
    pruned: new Set(), archived: new Set(), covered: [], refs: new Map(), tab: 'timeline',
    live: 'connecting', stream: null, retry: null, failures: 0, fallback: null, timer: null, polling: false,
    hits: new Set(),
  };
  setCurrent(session);
  show('session');
  $('session-title').textContent = id;
  const title = state.metadata && typeof state.metadata.title === 'string' ? ` · ${state.metadata.title}` : '';
  $('session-info').textContent = `${state.model}${title}${state.archivedAt ? ` · archived ${new Date(state.archivedAt).toLocaleString()}` : ''}`;
  const origin = forkOrigin(state);
  $('session-lineage').replaceChildren(...(origin ? [el('span', { className: 'muted', text: 'fork of' }), linkButton(origin.sessionId, () => void openSession(origin.sessionId)), el('span', { className: 'muted', text: origin.atSeq !== null ? `at seq ${origin.atSeq}` : '' })] : []));
  clearTimeline();
  clearContext();
  clearCompactions();
  clearOutputs();
  /** @type {HTMLInputElement} */ ($('session-find-q')).value = '';
  sessionFind.clear();
  updateHead(session);
  selectTab('timeline');
  renderTimeline();
  void loadCompactions();
  void loadMarks(session);
  startLive(session);
}

/**
 * A search hit's session, its timeline at the hit's seq (centred, selected,
 * marked); the session's own search runs the same words, so its other hits
 * are listed and marked too.
 * @param {string} id @param {number} seq @param {string} q
 */
export async function openSessionAt(id, seq, q) {
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
      const page = await api(`/v1/sessions/${enc(session.id)}/events?types=tool_outputs.pruned,tool_results.archived&afterSeq=${after}&limit=${EVENTS_PAGE}`);
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
