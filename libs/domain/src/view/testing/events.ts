import {
  CompactionCompletedData,
  EventDataByType,
  EventType,
  Message,
  MessageMetadata,
  Part,
  Role,
  StoredEvent,
  TextPart,
  ToolCallPart,
  ToolResultPart,
} from '../../events';
import { estimateMessageTokens } from '../../tokens';
import { viewAt } from '../model-view';
import { ModelView, ViewOptions } from '../types';

/** Builders for given/when/then tests over plain event arrays (unit and e2e). */

/** A model with no local tokenizer: estimates are ceil(chars / 4), cheap and easy to reason about. */
export const TEST_MODEL = 'claude-sonnet-4-5';

/** An event before the store gives it a seq and an id. */
export type EventDraft = { [T in EventType]: { type: T; data: EventDataByType[T] } }[EventType];

export const text = (body: string): TextPart => ({ type: 'text', text: body });

export const call = (callId: string, name = 'bash', input: unknown = { cmd: callId }): ToolCallPart => ({
  type: 'tool_call',
  callId,
  name,
  input,
});

export const result = (callId: string, output = `output of ${callId}`, extra: Partial<ToolResultPart> = {}): ToolResultPart => ({
  type: 'tool_result',
  callId,
  name: 'bash',
  output,
  ...extra,
});

export function msg(id: string, role: Role, parts: Part[], metadata?: MessageMetadata): Message {
  return metadata ? { id, role, parts, metadata } : { id, role, parts };
}

export const added = (message: Message): EventDraft => ({ type: 'message.added', data: { message } });

const asParts = (parts: Array<string | Part>): Part[] => parts.map((p) => (typeof p === 'string' ? text(p) : p));

export const user = (id: string, body: string, metadata?: MessageMetadata) => added(msg(id, 'user', [text(body)], metadata));
export const system = (id: string, body: string) => added(msg(id, 'system', [text(body)]));
export const assistant = (id: string, ...parts: Array<string | Part>) => added(msg(id, 'assistant', asParts(parts)));
export const tool = (id: string, ...results: ToolResultPart[]) => added(msg(id, 'tool', results));
export const hidden = (message: Message): EventDraft =>
  added({ ...message, metadata: { ...message.metadata, agentVisible: false } });

export const usage = (input: number, output: number, cache: { creation?: number; read?: number } = {}, contextSeq?: number): EventDraft => ({
  type: 'step.finished',
  data: {
    usage: {
      input_tokens: input,
      output_tokens: output,
      cache_creation_tokens: cache.creation ?? 0,
      cache_read_tokens: cache.read ?? 0,
    },
    ...(contextSeq !== undefined ? { contextSeq } : {}),
  },
});

export const pinned = (pinId: string, body: string): EventDraft => ({ type: 'pin.added', data: { pinId, text: body } });
export const unpinned = (pinId: string): EventDraft => ({ type: 'pin.removed', data: { pinId } });

export const aborted = (): EventDraft => ({ type: 'turn.aborted', data: { reason: 'user' } });

export const rewound = (toSeq: number): EventDraft => ({ type: 'session.rewound', data: { toSeq } });

export const pruned = (callIds: string[], clearInputs = false): EventDraft => ({
  type: 'tool_outputs.pruned',
  data: { callIds, tokensFreed: 0, policy: {}, ...(clearInputs ? { clearInputs } : {}) },
});

export const archived = (callIds: string[], digest: Message | null): EventDraft => ({
  type: 'tool_results.archived',
  data: { callIds, digest },
});

export const compacted = (
  coveredThroughSeq: number,
  prefix: Message[],
  extra: Partial<CompactionCompletedData> = {},
): EventDraft => ({
  type: 'compaction.completed',
  data: {
    markerSeq: coveredThroughSeq,
    coveredThroughSeq,
    summary: 'summary',
    prefix,
    strategy: 'test',
    model: TEST_MODEL,
    tokensBefore: 0,
    tokensAfter: 0,
    messagesCompacted: 0,
    durationMs: 0,
    ...extra,
  },
});

/** The message an event shows, whose estimate the service stores with it. */
function eventMessage(draft: EventDraft): Message | null {
  if (draft.type === 'message.added') return draft.data.message;
  return draft.type === 'tool_results.archived' ? draft.data.digest : null;
}

/** Stores drafts as the service does: seq 1..n, ids, a fixed clock, each message's estimate computed once. */
export function storeEvents(drafts: readonly EventDraft[], model = TEST_MODEL): StoredEvent[] {
  return drafts.map((draft, i) => {
    const message = eventMessage(draft);
    const seq = i + 1;
    return {
      ...draft,
      seq,
      id: `e${seq}`,
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
      tokens: message ? estimateMessageTokens(message, model) : 0,
    } as StoredEvent;
  });
}


/** Given these events, when the context is read (at the head), then this view. */
export function viewOf(
  drafts: readonly EventDraft[],
  options: Partial<ViewOptions> & { system?: string; systemTokens?: number } = {},
): ModelView {
  const { system, systemTokens, ...viewOptions } = options;
  const events = storeEvents(drafts);
  return viewAt(events, events.length, {
    system,
    systemTokens,
    model: TEST_MODEL,
    options: { contextBudgetTokens: 60_000, ...viewOptions },
  });
}
