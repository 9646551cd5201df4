// @ts-check
// The search inside the open session, its hits marked in the timeline.

import { enc } from './api.js';
import { $ } from './dom.js';
import { createSearch } from './search.js';
import { current } from './state.js';
import { renderTimeline, select } from './timeline.js';

/**
 * The open session's search (GET /v1/sessions/{id}/search): its hits are
 * listed and marked in the timeline; a new search jumps to the best hit, a
 * click to any. The answer says how far the index reaches.
 */
export const sessionFind = createSearch({
  route: () => (current ? `/v1/sessions/${enc(current.id)}/search` : null),
  list: $('session-find-results'),
  more: $('session-find-more'),
  status: $('session-find-count'),
  showSession: false,
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
