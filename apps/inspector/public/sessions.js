// @ts-check
// The tenant's sessions: the server's search (GET /v1/sessions: metadata
// containment and title, newest activity first), a page per "Load more".

import { api } from './api.js';
import { $, clearError, el, showError } from './dom.js';
import { num, stateOf, titleOf } from './format.js';
import { show } from './navigation.js';
import { closeSession, openSession } from './session.js';

/** @typedef {import('./format.js').SessionRow} SessionRow */

const SESSIONS_PAGE = 50;

/**
 * The rows loaded, a page at a time through nextCursor.
 * @type {{ rows: SessionRow[], cursor: string | null, loadedAll: boolean, query: string }}
 */
const sessions = { rows: [], cursor: null, loadedAll: false, query: '' };

/** What signing out leaves: nothing loaded. */
export function forgetSessions() {
  sessions.rows = [];
  sessions.cursor = null;
}

export async function openSessions() {
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
