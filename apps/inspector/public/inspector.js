// @ts-check
// The session inspector's entry: signing in and out, and the first view.
// Native ES modules, one per job, with no framework and no build step beyond
// a type check (apps/inspector/tsconfig.json). Everything that comes from
// events is untrusted: it is rendered with textContent, never as HTML.

import { api, ApiError, apiKey, forgetKey, keepKey, onUnauthorized } from './api.js';
import { $ } from './dom.js';
import { clearFind } from './find.js';
import { show } from './navigation.js';
import { closeSession } from './session.js';
import { forgetSessions, openSessions } from './sessions.js';

function signOut() {
  forgetKey();
  closeSession();
  forgetSessions();
  clearFind();
  show('sign-in');
}

$('sign-in-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($('api-key'));
  const key = input.value.trim();
  $('sign-in-error').textContent = '';
  try {
    await api('/v1/sessions?limit=1', key);
    keepKey(key);
    input.value = '';
    await openSessions();
  } catch (error) {
    $('sign-in-error').textContent = error instanceof ApiError && error.status === 401 ? 'That key was not accepted.' : String(error instanceof Error ? error.message : error);
  }
});
$('sign-out').addEventListener('click', signOut);
onUnauthorized(signOut);

if (apiKey()) void openSessions();
else show('sign-in');
