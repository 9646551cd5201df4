// @ts-check
// A session's events as the page holds them: what loading one records in the
// open session (prune and archive marks, tool-output refs) and the one line a
// timeline row says of it.

import { num } from './format.js';

/** @typedef {import('./state.js').StoredEvent} StoredEvent */
/** @typedef {import('./state.js').OpenSession} OpenSession */

/** Events per read of GET /events. */
export const EVENTS_PAGE = 500;

/** @param {OpenSession} session @param {StoredEvent} e */
export function addEvent(session, e) {
  session.events.set(e.seq, e);
  if (e.type === 'tool_outputs.pruned') for (const id of callIds(e.data)) session.pruned.add(id);
  if (e.type === 'tool_results.archived') for (const id of callIds(e.data)) session.archived.add(id);
  for (const part of parts(e)) {
    const ref = part.outputRef ?? part.output_ref;
    if (ref && typeof ref.id === 'string') session.refs.set(ref.id, `${part.name ?? 'tool'} · seq ${e.seq}`);
  }
}

/** @param {any} data @returns {string[]} */
function callIds(data) {
  const ids = data?.callIds ?? data?.call_ids ?? [];
  return Array.isArray(ids) ? ids.filter((x) => typeof x === 'string') : [];
}

/** @param {StoredEvent} e @returns {any[]} */
export function parts(e) {
  const p = e.data?.message?.parts;
  return Array.isArray(p) ? p : [];
}

/** One line about an event, for its row. @param {StoredEvent} e */
export function summarize(e) {
  const d = e.data ?? {};
  switch (e.type) {
    case 'message.added': {
      const m = d.message ?? {};
      const bits = parts(e).map((p) => {
        if (p.type === 'text' || p.type === 'reasoning') return String(p.text ?? '');
        if (p.type === 'tool_call') return `→ ${p.name}(${JSON.stringify(p.input ?? {})})`;
        if (p.type === 'tool_result') return `← ${p.name ?? p.callId}${p.outputRef ? ` ref=${p.outputRef.id}` : ''} ${typeof p.output === 'string' ? p.output : ''}`;
        return `[${p.type}]`;
      });
      return `${m.role ?? '?'}: ${bits.join(' ')}`;
    }
    case 'step.finished':
      return `usage in=${num(d.usage?.input_tokens)} out=${num(d.usage?.output_tokens)}${d.finishReason ? ` ${d.finishReason}` : ''}`;
    case 'compaction.requested':
      return `marker: ${d.reason ?? ''}${d.auto ? ' (auto)' : ''}`;
    case 'compaction.completed':
      return `pivot: covers ${d.coveredFromSeq ?? 1}..${d.coveredThroughSeq}, tokens ${num(d.tokensBefore)} → ${num(d.tokensAfter)} (${d.strategy}, ${d.model})`;
    case 'compaction.failed':
      return `attempt ${d.attempt ?? ''}: ${d.error?.message ?? d.error ?? ''}`;
    case 'tool_outputs.pruned':
      return `pruned ${callIds(d).length} results, ${num(d.tokensFreed ?? d.tokens_freed)} tokens freed`;
    case 'tool_results.archived':
      return `archived ${callIds(d).length} results`;
    default:
      return JSON.stringify(d);
  }
}
