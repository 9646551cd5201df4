import { Message, StoredEvent, ToolResultPart } from '../events';
import { withoutRewound } from '../view/rewind';

/** A tool result with the input of the call it answers. */
export interface ToolPair {
  /** The call's input; undefined when the call is not in the model view. */
  input: unknown;
  result: ToolResultPart;
}

/** A tool pair the model currently sees, in full or as the pruned placeholder. */
export interface ToolExchange extends ToolPair {
  pruned: boolean;
  /** Real user turns after the result (OpenCode protects those with fewer than `protectTurns`). */
  userTurnsAfter: number;
}

/**
 * A turn the user started. Synthetic user messages the service adds (tool
 * digests, auto-continue) carry userVisible=false and do not count, so they
 * cannot shrink the protected window.
 */
export function isUserTurn(message: Message): boolean {
  return message.role === 'user' && message.metadata?.userVisible !== false;
}

/** Events after this seq are the model's window: the latest compaction's `coveredThroughSeq`. */
function pivotSeq(events: readonly StoredEvent[]): number {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event.type === 'compaction.completed') return event.data.coveredThroughSeq;
  }
  return Number.NEGATIVE_INFINITY;
}

/**
 * The tool results in the model view, oldest first: after the pivot, not
 * archived, not in a hidden (agentVisible=false) message nor one a rewind took
 * out. Expects `events` in seq order, as the store returns them.
 */
export function toolExchangesInView(events: readonly StoredEvent[]): ToolExchange[] {
  const since = pivotSeq(events);
  const pruned = new Set<string>();
  const archived = new Set<string>();
  const inputs = new Map<string, unknown>();
  const results: Array<{ result: ToolResultPart; turnsBefore: number }> = [];
  let turns = 0;
  for (const event of withoutRewound(events)) {
    if (event.seq <= since) continue;
    if (event.type === 'tool_outputs.pruned') event.data.callIds.forEach((id) => pruned.add(id));
    else if (event.type === 'tool_results.archived') event.data.callIds.forEach((id) => archived.add(id));
    else if (event.type === 'message.added' && event.data.message.metadata?.agentVisible !== false) {
      const message = event.data.message;
      if (isUserTurn(message)) turns++;
      for (const part of message.parts) {
        if (part.type === 'tool_call') inputs.set(part.callId, part.input);
        else if (part.type === 'tool_result') results.push({ result: part, turnsBefore: turns });
      }
    }
  }
  return results
    .filter(({ result }) => !archived.has(result.callId))
    .map(({ result, turnsBefore }) => ({
      input: inputs.get(result.callId),
      result,
      pruned: pruned.has(result.callId),
      userTurnsAfter: turns - turnsBefore,
    }));
}
