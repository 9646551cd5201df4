// @ts-check
// DOM helpers shared by the inspector's modules. Everything they build from
// data is text: textContent and element nodes, never HTML.

/** @template {HTMLElement} T @param {string} id @returns {T} */
export function $(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return /** @type {T} */ (el);
}

/**
 * @param {string} tag
 * @param {{ className?: string, text?: string, title?: string }} [options]
 * @param {Node[]} [children]
 */
export function el(tag, options = {}, children = []) {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  if (options.text !== undefined) node.textContent = options.text;
  if (options.title !== undefined) node.title = options.title;
  for (const child of children) node.appendChild(child);
  return node;
}

/** @param {string} text @param {() => void} onClick */
export function linkButton(text, onClick) {
  const b = /** @type {HTMLButtonElement} */ (el('button', { className: 'link', text }));
  b.type = 'button';
  b.addEventListener('click', onClick);
  return b;
}

/** The page's error line. @param {unknown} error */
export function showError(error) {
  $('error').textContent = error instanceof Error ? error.message : String(error);
}
export function clearError() {
  $('error').textContent = '';
}
