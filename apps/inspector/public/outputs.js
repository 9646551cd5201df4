// @ts-check
// The tool-output view: a stored output read a line range at a time, grepped
// on the server, and the refs the loaded events mention.

import { api, enc } from './api.js';
import { $, clearError, el, linkButton, showError } from './dom.js';
import { num } from './format.js';
import { selectTab, whenTabShows } from './navigation.js';
import { current } from './state.js';

function renderKnownRefs() {
  const session = current;
  if (!session) return;
  const items = Array.from(session.refs.entries()).map(([id, where]) => el('span', {}, [linkButton(id, () => void openRef(id)), el('span', { className: 'muted', text: `(${where})` })]));
  $('known-refs').replaceChildren(...(items.length ? [el('span', { className: 'muted', text: 'Refs in loaded events: ' }), ...items] : []));
}

/** What a newly opened session starts with. */
export function clearOutputs() {
  $('ref-lines').textContent = '';
  $('ref-info').textContent = '';
  $('grep-results').replaceChildren();
}

/** @param {string} ref */
export async function openRef(ref) {
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

whenTabShows('outputs', renderKnownRefs);
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
