/**
 * The window as the compaction code reads it: the view's fold (agent-visible
 * messages, prunes and archives applied) with a token figure for each, and
 * where a cut may fall.
 */
import type { Message, StoredEvent } from '../events';
import { isUserTurn } from '../prune/tool-exchanges';
import { foldWindow } from '../view/fold';
import { approxMessageTokens } from '../tokens/message-tokens';

export interface WindowMessage {
  seq: number;
  /** As the model reads it: pruned outputs are placeholders, archived pairs are gone. */
  message: Message;
  tokens: number;
}

export interface WindowView {
  messages: WindowMessage[];
  /** The latest user turn or turn.aborted: no call before it can still be answered. */
  lastInterruptionSeq: number;
}

/** Where a user turn starts: a real user message (service-made ones carry userVisible=false). */
export const isTurnStart = (item: WindowMessage) => isUserTurn(item.message);

/** Window events (seq order) folded; entries the fold rewrote are estimated again. */
export function compactionWindow(events: readonly StoredEvent[]): WindowView {
  const fold = foldWindow(events);
  const messages = fold.entries.map(({ seq, message, tokens }) => ({ seq, message, tokens: tokens ?? approxMessageTokens(message) }));
  const lastTurn = messages.filter(isTurnStart).pop()?.seq ?? 0;
  return { messages, lastInterruptionSeq: Math.max(lastTurn, fold.lastAbortSeq) };
}

const countAtMost = (sorted: readonly number[], value: number) => {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (sorted[mid] <= value) low = mid + 1;
    else high = mid;
  }
  return low;
};

/**
 * Whether a cut after seq `c` (events ≤ c summarized) is settled: no call at
 * or before c is answered after c, and no call at or before c is still in
 * flight. A call with no result that a later user turn or turn.aborted left
 * behind is settled: nothing will answer it, and the summarizer input drops it.
 */
export function settledCutChecker(items: readonly WindowMessage[], interruptedAfter: number): (cut: number) => boolean {
  const callSeq = new Map<string, number>();
  const resultSeq = new Map<string, number>();
  for (const { seq, message } of items) {
    for (const part of message.parts) {
      if (part.type === 'tool_call') callSeq.set(part.callId, seq);
      else if (part.type === 'tool_result' && !resultSeq.has(part.callId)) resultSeq.set(part.callId, seq);
    }
  }
  // Each call blocks the cuts in [call, answer): the result's seq, or forever while in flight.
  const starts: number[] = [];
  const ends: number[] = [];
  for (const [callId, from] of callSeq) {
    const answered = resultSeq.get(callId);
    if (answered !== undefined && answered > from) {
      starts.push(from);
      ends.push(answered);
    } else if (answered === undefined && interruptedAfter <= from) {
      starts.push(from);
    }
  }
  starts.sort((a, b) => a - b);
  ends.sort((a, b) => a - b);
  return (cut) => countAtMost(starts, cut) - countAtMost(ends, cut) === 0;
}
