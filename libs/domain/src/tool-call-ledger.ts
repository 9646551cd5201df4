import { invalid } from './errors';
import { NewEvent, ToolResultPart } from './events';

/** What the store knows of a session's tool calls referenced by a batch. */
export interface KnownToolCall {
  callId: string;
  name: string;
  answered: boolean;
}

export interface ToolCallLedgerChanges {
  /** Calls issued by this batch. */
  issued: Array<{ callId: string; name: string; eventIndex: number }>;
  /** Calls this batch answers, with the batch index of the answering event. */
  answered: Array<{ callId: string; eventIndex: number }>;
}

/** Whether the batch carries tool results (their outputs go to the tool-output store, under the session's settings). */
export function hasToolResults(events: readonly NewEvent[]): boolean {
  return events.some((e) => e.type === 'message.added' && e.data.message.parts.some((part) => part.type === 'tool_result'));
}

/** Call ids a batch mentions, so the store can fetch just those. */
export function referencedCallIds(events: readonly NewEvent[]): string[] {
  const ids = new Set<string>();
  for (const e of events) {
    if (e.type !== 'message.added') continue;
    for (const p of e.data.message.parts) if (p.type === 'tool_call' || p.type === 'tool_result') ids.add(p.callId);
  }
  return [...ids];
}

/**
 * The calls a batch answers without issuing them, as the ledger has to hold
 * them (issued, not answered) for the batch to pass: what an append decided
 * before reading the ledger assumes, and its statement then checks. Each
 * takes the name its result gives, else `nameOf`'s (what the caller saw
 * issued); undefined when a result has neither, since the ledger's name
 * would fill it.
 */
export function assumedOpenCalls(events: readonly NewEvent[], nameOf: (callId: string) => string | undefined): KnownToolCall[] | undefined {
  const issued = new Set<string>();
  const answered = new Map<string, string | undefined>();
  for (const e of events) {
    if (e.type !== 'message.added') continue;
    for (const p of e.data.message.parts) {
      if (p.type === 'tool_call') issued.add(p.callId);
      else if (p.type === 'tool_result' && !issued.has(p.callId)) answered.set(p.callId, p.name || answered.get(p.callId) || nameOf(p.callId));
    }
  }
  const calls: KnownToolCall[] = [];
  for (const [callId, name] of answered) {
    if (name === undefined) return undefined;
    calls.push({ callId, name, answered: false });
  }
  return calls;
}

/**
 * Enforces, at write time, the pairing the model view relies on: a call id is
 * issued once per session, a result answers an issued call, and only once.
 * Fills a result's missing tool name from its call.
 */
export function applyToolCallLedger(events: readonly NewEvent[], known: readonly KnownToolCall[]): ToolCallLedgerChanges {
  const calls = new Map(known.map((k) => [k.callId, { ...k }]));
  const changes: ToolCallLedgerChanges = { issued: [], answered: [] };
  events.forEach((event, eventIndex) => {
    if (event.type !== 'message.added') return;
    event.data.message.parts.forEach((part, partIndex) => {
      const path = `$.events[${eventIndex}].data.message.parts[${partIndex}].callId`;
      if (part.type === 'tool_call') {
        if (calls.has(part.callId)) {
          throw invalid('duplicate_tool_call_id', `tool call id ${part.callId} was already issued in this session`, { path });
        }
        calls.set(part.callId, { callId: part.callId, name: part.name, answered: false });
        changes.issued.push({ callId: part.callId, name: part.name, eventIndex });
      } else if (part.type === 'tool_result') {
        const call = calls.get(part.callId);
        if (!call) throw invalid('unknown_tool_call', `tool result answers call ${part.callId}, which was never issued`, { path });
        if (call.answered) throw invalid('duplicate_tool_result', `tool call ${part.callId} already has a result`, { path });
        call.answered = true;
        (part as ToolResultPart).name ||= call.name;
        changes.answered.push({ callId: part.callId, eventIndex });
      }
    });
  });
  return changes;
}
