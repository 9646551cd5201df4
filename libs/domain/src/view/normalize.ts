import { Part, ToolCallPart, ToolResultPart } from '../events';
import { ABORTED_TOOL_RESULT } from '../placeholders';
import { PairRepairs, PendingMode, PendingToolCall, ViewEntry } from './types';

/**
 * Pair normalization (invariant 6, Codex's rule) over the whole view, every
 * render: each call keeps exactly one result, placed right after the call's
 * assistant message; results without a call, second results and repeated
 * call ids are dropped; unanswered calls get the synthetic `aborted` result.
 * The calls of a trailing assistant message with no answer yet are pending.
 */
export interface NormalizeOptions {
  pending: PendingMode;
  /** Seq of the newest turn.aborted: a trailing message before it is aborted, not pending. */
  lastAbortSeq: number;
}

export interface NormalizedView {
  entries: ViewEntry[];
  pendingToolCalls: PendingToolCall[];
  repairs: PairRepairs;
}

interface Slot {
  part: ToolResultPart;
  /** The entry the result came from; null for a synthetic result. */
  source: ViewEntry | null;
}

export function normalizePairs(entries: readonly ViewEntry[], options: NormalizeOptions): NormalizedView {
  const repairs: PairRepairs = { abortedCallIds: [], droppedResultCallIds: [], droppedCallIds: [] };
  const calls = firstCalls(entries);
  const results = firstResults(entries, calls, repairs);
  const owner = pendingOwner(entries, options.lastAbortSeq);
  const pendingToolCalls = owner
    ? owner.message.parts
        .filter((part): part is ToolCallPart => isFirstCall(part, calls) && !results.has(part.callId))
        .map(({ callId, name }) => ({ callId, name }))
    : [];
  const omitted = new Set(options.pending === 'omit' ? pendingToolCalls.map((call) => call.callId) : []);
  const ids = new UniqueIds();

  const out: ViewEntry[] = [];
  for (const entry of entries) {
    // Tool messages are dissolved: results are re-emitted after their calls; other parts have no encoding there.
    if (entry.message.role === 'tool') continue;
    const kept = entry.message.parts.filter((part) => keepInPlace(part, entry, calls, omitted, repairs));
    if (kept.length === 0) continue;
    out.push(kept.length === entry.message.parts.length ? entry : withParts(entry, kept, entry.message.id));
    const slots = kept
      .filter((part): part is ToolCallPart => part.type === 'tool_call')
      .map((call) => results.get(call.callId) ?? abortedSlot(call, repairs));
    out.push(...resultEntries(entry, slots, ids));
  }
  return { entries: out, pendingToolCalls, repairs };
}

/** The first call per id, from assistant messages only: a call elsewhere has no provider encoding. */
function firstCalls(entries: readonly ViewEntry[]): Map<string, ToolCallPart> {
  const calls = new Map<string, ToolCallPart>();
  for (const { message } of entries) {
    if (message.role !== 'assistant') continue;
    for (const part of message.parts) {
      if (part.type === 'tool_call' && !calls.has(part.callId)) calls.set(part.callId, part);
    }
  }
  return calls;
}

function isFirstCall(part: Part, calls: ReadonlyMap<string, ToolCallPart>): part is ToolCallPart {
  return part.type === 'tool_call' && calls.get(part.callId) === part;
}

/** The first result per called id, wherever it sits (it will be moved after its call). */
function firstResults(
  entries: readonly ViewEntry[],
  calls: ReadonlyMap<string, ToolCallPart>,
  repairs: PairRepairs,
): Map<string, Slot> {
  const results = new Map<string, Slot>();
  for (const entry of entries) {
    for (const part of entry.message.parts) {
      if (part.type !== 'tool_result') continue;
      if (calls.has(part.callId) && !results.has(part.callId)) results.set(part.callId, { part, source: entry });
      else repairs.droppedResultCallIds.push(part.callId);
    }
  }
  return results;
}

/**
 * The trailing assistant message whose unanswered calls are pending: only
 * tool messages follow it, and no turn.aborted came after it.
 */
function pendingOwner(entries: readonly ViewEntry[], lastAbortSeq: number): ViewEntry | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (entry.message.role === 'tool') continue;
    return entry.message.role === 'assistant' && entry.seq > lastAbortSeq ? entry : null;
  }
  return null;
}

/** Text, reasoning and files stay; results move; calls stay only as the first of their id and not omitted. */
function keepInPlace(
  part: Part,
  entry: ViewEntry,
  calls: ReadonlyMap<string, ToolCallPart>,
  omitted: ReadonlySet<string>,
  repairs: PairRepairs,
): boolean {
  if (part.type === 'tool_result') return false;
  if (part.type !== 'tool_call') return true;
  if (entry.message.role !== 'assistant' || !isFirstCall(part, calls)) {
    repairs.droppedCallIds.push(part.callId);
    return false;
  }
  return !omitted.has(part.callId);
}

function abortedSlot(call: ToolCallPart, repairs: PairRepairs): Slot {
  repairs.abortedCallIds.push(call.callId);
  const part: ToolResultPart = {
    type: 'tool_result',
    callId: call.callId,
    name: call.name,
    output: ABORTED_TOOL_RESULT,
    isError: true,
  };
  return { part, source: null };
}

/**
 * Tool messages for one assistant message's results, in call order. Runs of
 * results from the same logged message stay one message; a logged message
 * reused whole keeps its id and stored tokens.
 */
function resultEntries(owner: ViewEntry, slots: readonly Slot[], ids: UniqueIds): ViewEntry[] {
  const runs: Array<{ source: ViewEntry | null; parts: ToolResultPart[] }> = [];
  for (const { part, source } of slots) {
    const last = runs.at(-1);
    if (last && last.source === source) last.parts.push(part);
    else runs.push({ source, parts: [part] });
  }
  return runs.map(({ source, parts }) => {
    if (!source) {
      const message = { id: `aborted-${parts[0].callId}`, role: 'tool' as const, parts, metadata: { kind: 'synthetic' } };
      return { message, seq: owner.seq, origin: 'synthetic' as const };
    }
    const id = ids.claim(source.message.id);
    const whole = parts.length === source.message.parts.length && parts.every((p, i) => p === source.message.parts[i]);
    return whole && id === source.message.id ? source : withParts(source, parts, id);
  });
}

function withParts(entry: ViewEntry, parts: Part[], id: string): ViewEntry {
  return { message: { ...entry.message, id, parts }, seq: entry.seq, origin: entry.origin };
}

/** A tool message split across calls keeps its id once; later pieces get `#2`, `#3`. */
class UniqueIds {
  private readonly uses = new Map<string, number>();

  claim(id: string): string {
    const n = (this.uses.get(id) ?? 0) + 1;
    this.uses.set(id, n);
    return n === 1 ? id : `${id}#${n}`;
  }
}
