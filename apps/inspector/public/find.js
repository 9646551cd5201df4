// @ts-check
// The search across sessions, shown in place of the list of sessions.

import { $ } from './dom.js';
import { createSearch } from './search.js';
import { openSessionAt } from './session.js';

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
  onHit: (hit, q) => void openSessionAt(hit.sessionId, hit.seq, q),
  onAnswer: () => renderFindView(),
});

function renderFindView() {
  const active = find.state.q !== '';
  $('find-view').hidden = !active;
  $('sessions-list').hidden = active;
}

/** Back to the list of sessions, the search box empty. */
export function clearFind() {
  /** @type {HTMLInputElement} */ ($('find-q')).value = '';
  find.clear();
  renderFindView();
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
$('find-clear').addEventListener('click', clearFind);
