// @ts-check
// What the model sees: the open session's context in a chosen format, at the
// head or at a seq, with its tokens against the window.

import { api, enc } from './api.js';
import { $, clearError, el, showError } from './dom.js';
import { num } from './format.js';
import { selectTab, tabButton } from './navigation.js';
import { current } from './state.js';

/** Counts context reads: only the latest one's answer is shown, however the answers are ordered. */
let contextReads = 0;

async function loadContext() {
  const session = current;
  if (!session) return;
  clearError();
  const format = /** @type {HTMLSelectElement} */ ($('ctx-format')).value;
  const at = /** @type {HTMLInputElement} */ ($('ctx-at')).value.trim();
  const read = ++contextReads;
  try {
    const ctx = await api(`/v1/sessions/${enc(session.id)}/context?format=${enc(format)}${at ? `&atSeq=${enc(at)}` : ''}`);
    if (session !== current || read !== contextReads) return;
    renderTokens(ctx);
    renderMessages(ctx);
  } catch (error) {
    if (read === contextReads) showError(error);
  }
}

/** @param {any} ctx */
function renderTokens(ctx) {
  const t = ctx.tokens ?? {};
  // The bar's full width is the usable window (limit minus the output reserve), else the window.
  const scale = t.usable || t.limit || 0;
  const fill = $('token-fill');
  const threshold = $('token-threshold');
  if (scale > 0) {
    fill.style.width = `${Math.min(100, (100 * (t.estimated ?? 0)) / scale)}%`;
    fill.classList.toggle('over', typeof t.threshold === 'number' && t.estimated >= t.threshold);
    threshold.hidden = typeof t.threshold !== 'number';
    threshold.style.left = `${Math.min(100, (100 * (t.threshold ?? 0)) / scale)}%`;
  } else {
    fill.style.width = '0';
    threshold.hidden = true;
  }
  const where = ctx.atSeq === null || ctx.atSeq === undefined ? `head (seq ${num(ctx.headSeq)})` : `seq ${num(ctx.atSeq)} of ${num(ctx.headSeq)}`;
  const pct = scale > 0 ? ` (${((100 * (t.estimated ?? 0)) / scale).toFixed(1)}% of usable)` : '';
  $('ctx-tokens').textContent =
    `${ctx.format} at ${where}: ${num(t.estimated)} tokens${pct} · usable ${num(t.usable)} · window ${t.limit === 0 ? 'unlimited' : num(t.limit)} · ` +
    `compaction threshold ${num(t.threshold)} · basis ${t.basis ?? '?'} · pivot ${ctx.pivotSeq ?? 'none'} · ${ctx.messages?.length ?? 0} messages`;
}

/** Renders any format's messages generically: a role, then each part or block. @param {any} ctx */
function renderMessages(ctx) {
  const out = [];
  if (ctx.system !== undefined) out.push(messageCard('system', '', [['system', typeof ctx.system === 'string' ? ctx.system : JSON.stringify(ctx.system, null, 2)]]));
  for (const m of Array.isArray(ctx.messages) ? ctx.messages : []) {
    const role = String(m.role ?? m.type ?? 'item');
    const kind = m.metadata?.kind ? String(m.metadata.kind) : m.id ? String(m.id) : '';
    /** @type {[string, string][]} */
    const blocks = [];
    const content = m.parts ?? m.content;
    if (typeof content === 'string') blocks.push(['text', content]);
    else if (Array.isArray(content)) for (const p of content) blocks.push(block(p));
    else {
      const { role: _r, type: _t, ...rest } = m;
      blocks.push([String(m.type ?? 'item'), JSON.stringify(rest, null, 2)]);
    }
    if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls) blocks.push([`tool call ${c.function?.name ?? ''}`, `${c.id}: ${c.function?.arguments ?? ''}`]);
    if (m.tool_call_id) blocks.unshift(['tool_call_id', String(m.tool_call_id)]);
    out.push(messageCard(role, kind, blocks));
  }
  $('ctx-messages').replaceChildren(...out);
}

/** @param {any} p @returns {[string, string]} */
function block(p) {
  if (typeof p === 'string') return ['text', p];
  const type = String(p.type ?? 'part');
  if (typeof p.text === 'string') return [type, p.text];
  if (type === 'tool_call') return [`tool_call ${p.name}`, `${p.callId}: ${JSON.stringify(p.input ?? {})}`];
  if (type === 'tool_use') return [`tool_use ${p.name}`, `${p.id}: ${JSON.stringify(p.input ?? {})}`];
  if (type === 'tool_result') {
    const body = typeof p.output === 'string' ? p.output : typeof p.content === 'string' ? p.content : JSON.stringify(p.content ?? p.output ?? p, null, 2);
    const ref = p.outputRef?.id ? ` ref=${p.outputRef.id}` : '';
    return [`tool_result ${p.name ?? p.callId ?? p.tool_use_id ?? ''}${ref}`, body];
  }
  return [type, JSON.stringify(p, null, 2)];
}

/** @param {string} role @param {string} kind @param {[string, string][]} blocks */
function messageCard(role, kind, blocks) {
  const card = el('div', { className: 'message' }, [el('span', { className: 'role', text: role }), el('span', { className: 'kind', text: kind })]);
  for (const [label, text] of blocks) {
    card.appendChild(el('div', { className: 'part-label', text: label }));
    card.appendChild(el('pre', { className: 'pre', text }));
  }
  return card;
}

/** What a newly opened session starts with. */
export function clearContext() {
  $('ctx-messages').replaceChildren();
  $('ctx-tokens').textContent = '';
  /** @type {HTMLInputElement} */ ($('ctx-at')).value = '';
}

/** The context at a seq, in its tab. @param {number} seq */
export function contextAt(seq) {
  /** @type {HTMLInputElement} */ ($('ctx-at')).value = String(seq);
  selectTab('context');
  void loadContext();
}

tabButton('context').addEventListener('click', () => {
  if ($('ctx-messages').childElementCount === 0) void loadContext();
});
$('ctx-load').addEventListener('click', () => void loadContext());
$('ctx-format').addEventListener('change', () => void loadContext());
$('ctx-head').addEventListener('click', () => {
  /** @type {HTMLInputElement} */ ($('ctx-at')).value = '';
  void loadContext();
});
