// @ts-check
// Which view of the page shows (sign-in, the sessions, one session) and which
// tab of the session view. A tab's module says what to redraw when it shows.

import { $ } from './dom.js';
import { current } from './state.js';

/** @param {'sign-in' | 'sessions' | 'session'} view */
export function show(view) {
  $('sign-in-view').hidden = view !== 'sign-in';
  $('sessions-view').hidden = view !== 'sessions';
  $('session-view').hidden = view !== 'session';
  $('sign-out').hidden = view === 'sign-in';
  $('tenant-status').textContent = view === 'sign-in' ? '' : 'Signed in (this tab only)';
}

/** @type {Map<string, () => void>} */
const onShow = new Map();

/** What to redraw each time a tab shows. @param {string} tab @param {() => void} redraw */
export function whenTabShows(tab, redraw) {
  onShow.set(tab, redraw);
}

/** @param {string} tab */
export function selectTab(tab) {
  if (current) current.tab = tab;
  for (const button of document.querySelectorAll('.tabs button')) {
    button.setAttribute('aria-selected', String(/** @type {HTMLElement} */ (button).dataset.tab === tab));
  }
  for (const name of ['timeline', 'context', 'compactions', 'outputs']) $(`tab-${name}`).hidden = name !== tab;
  onShow.get(tab)?.();
}

/** The tab's button; what a click loads besides showing it is the tab's module's. @param {string} tab */
export function tabButton(tab) {
  return /** @type {HTMLElement} */ (document.querySelector(`.tabs button[data-tab="${tab}"]`));
}

for (const button of document.querySelectorAll('.tabs button')) {
  button.addEventListener('click', () => selectTab(/** @type {HTMLElement} */ (button).dataset.tab ?? 'timeline'));
}
