/**
 * The session event log: event types, message parts and the stored envelope.
 * Types are stable and past tense; a shape change bumps `v` inside `data`.
 */

export type Role = 'system' | 'user' | 'assistant' | 'tool';
export const ROLES: readonly Role[] = ['system', 'user', 'assistant', 'tool'];

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ReasoningPart {
  type: 'reasoning';
  text: string;
}

/** Media or a document: a URL or small inline base64 `data`. */
export interface FilePart {
  type: 'file';
  mediaType: string;
  url?: string;
  data?: string;
  filename?: string;
}

export interface ToolCallPart {
  type: 'tool_call';
  callId: string;
  name: string;
  input: unknown;
}

/** Reference to the whole output kept in the tool-output store (seed 000, ToolOutputRef). */
export interface ToolOutputRef {
  id: string;
  byte_size: number;
  line_count: number;
  sha256?: string;
}

export interface ToolResultPart {
  type: 'tool_result';
  callId: string;
  name: string;
  /** The in-context view of the output (possibly truncated). */
  output: string;
  outputRef?: ToolOutputRef;
  truncated?: boolean;
  isError?: boolean;
  /** Media the tool returned (screenshots...); dropped from the view when pruned. */
  attachments?: FilePart[];
}

export type Part = TextPart | ReasoningPart | FilePart | ToolCallPart | ToolResultPart;
export type PartType = Part['type'];
export const PART_TYPES: readonly PartType[] = ['text', 'reasoning', 'file', 'tool_call', 'tool_result'];

/** Routing metadata (seed 001): unset flags mean visible. */
export interface MessageMetadata {
  agentVisible?: boolean;
  userVisible?: boolean;
  kind?: string;
  [key: string]: unknown;
}

export interface Message {
  id: string;
  role: Role;
  parts: Part[];
  metadata?: MessageMetadata;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_tokens?: number;
  cache_read_tokens?: number;
}

export type CompactionReason = 'threshold' | 'manual' | 'overflow' | 'finish_length' | 'cache_cold';

export interface SessionCreatedData {
  model: string;
  system?: string;
  config: Record<string, unknown>;
  metadata: Record<string, unknown>;
}
export interface MessageAddedData {
  message: Message;
}
export interface StepFinishedData {
  usage: Usage;
  finishReason?: string;
  /**
   * The `headSeq` of the context the call was sent with (GET /context reports
   * it): the usage measured the view at that seq. Without it the service
   * infers the seq (usageMeasuredSeq).
   */
  contextSeq?: number;
}
export interface TurnAbortedData {
  reason?: string;
}
export interface ContextOverflowedData {
  error?: string;
}
export interface CompactionRequestedData {
  auto: boolean;
  reason: CompactionReason;
  instructions?: string;
}
export interface CompactionCompletedData {
  markerSeq: number;
  /** Events with seq <= this are replaced by `prefix` in the model view. */
  coveredThroughSeq: number;
  summary: string;
  retain?: string;
  /**
   * Exactly what the model sees before the window (after the system prompt):
   * the strategy's retain block, summary, and for the Codex-style rebuild the
   * earlier user messages. The view is strategy-agnostic because of this.
   */
  prefix: Message[];
  strategy: string;
  model: string;
  tokensBefore: number;
  tokensAfter: number;
  messagesCompacted: number;
  durationMs: number;
  /** The pins in force at coveredThroughSeq: the window after the pivot folds its pin events onto them. Absent = none. */
  pins?: Pin[];
  /** The overhead (ViewTokens.overhead) learnt on the view it replaced, carried until a step measures the new one. Absent = 0. */
  overhead?: number;
  [key: string]: unknown;
}
export interface CompactionFailedData {
  markerSeq: number;
  attempt: number;
  error: string;
  fallback: string;
}
/** Results of `callIds` render as a placeholder from here on (the event's time is the "compacted" time). */
export interface ToolOutputsPrunedData {
  callIds: string[];
  tokensFreed: number;
  policy: Record<string, unknown>;
  /** Anthropic's clear_tool_inputs: the calls' inputs are replaced too. */
  clearInputs?: boolean;
  [key: string]: unknown;
}
/**
 * The pairs of `callIds` (call and result) leave the model view; `digest`, if
 * any, is shown at this event's position instead (seed 001's tool_summary).
 */
export interface ToolResultsArchivedData {
  callIds: string[];
  digest: Message | null;
  [key: string]: unknown;
}
export interface SessionConfigChangedData {
  patch: Record<string, unknown>;
}
/** Pinned text: shown verbatim right after the pivot's prefix in every view, never summarized (POST .../pins). */
export interface PinAddedData {
  pinId: string;
  text: string;
}
export interface PinRemovedData {
  pinId: string;
}
/**
 * POST .../rewind: from here on the view no longer shows what clients
 * appended after `toSeq` (the log keeps it; a view at an earlier seq, and a
 * fork taken there, still show it).
 */
export interface SessionRewoundData {
  toSeq: number;
}
/**
 * A client's own record (an agent framework's checkpoint, a transcript
 * entry): kept in the log with its seq, exported, forked and rewound like any
 * client event, and never part of the model view.
 */
export interface RecordAddedData {
  /** What the record is, for its reader: `langgraph.checkpoint`, `claude.entry`… */
  kind: string;
  value: unknown;
}
/** A pin in force, with the seq of its pin.added. */
export interface Pin {
  pinId: string;
  text: string;
  seq: number;
}

export interface EventDataByType {
  'session.created': SessionCreatedData;
  'message.added': MessageAddedData;
  'step.finished': StepFinishedData;
  'turn.aborted': TurnAbortedData;
  'context.overflowed': ContextOverflowedData;
  'compaction.requested': CompactionRequestedData;
  'compaction.completed': CompactionCompletedData;
  'compaction.failed': CompactionFailedData;
  'tool_outputs.pruned': ToolOutputsPrunedData;
  'tool_results.archived': ToolResultsArchivedData;
  'session.config_changed': SessionConfigChangedData;
  'pin.added': PinAddedData;
  'pin.removed': PinRemovedData;
  'session.rewound': SessionRewoundData;
  'record.added': RecordAddedData;
}

export type EventType = keyof EventDataByType;

export const EVENT_TYPES: readonly EventType[] = [
  'session.created',
  'message.added',
  'step.finished',
  'turn.aborted',
  'context.overflowed',
  'compaction.requested',
  'compaction.completed',
  'compaction.failed',
  'tool_outputs.pruned',
  'tool_results.archived',
  'session.config_changed',
  'pin.added',
  'pin.removed',
  'session.rewound',
  'record.added',
];

/**
 * The types a client may append; the rest are written by the service itself.
 * Pins are service events: POST/DELETE .../pins check the budget and the
 * pin's existence under the session lock, which a raw append would skip.
 */
export const CLIENT_EVENT_TYPES: readonly EventType[] = [
  'message.added',
  'step.finished',
  'turn.aborted',
  'context.overflowed',
  'compaction.requested',
  'record.added',
];

/** An event before the store assigns its seq. */
export type NewEvent<T extends EventType = EventType> = T extends EventType
  ? { id: string; type: T; data: EventDataByType[T] }
  : never;

/** An event as stored: gap-free `seq` per session, assigned under the session row lock. */
export type StoredEvent<T extends EventType = EventType> = T extends EventType
  ? {
      seq: number;
      id: string;
      type: T;
      data: EventDataByType[T];
      createdAt: Date;
      /** Token estimate of the event's message, computed once at append time (0 for non-messages). */
      tokens: number;
    }
  : never;

export function isEventOfType<T extends EventType>(
  event: { type: EventType },
  type: T,
): event is StoredEvent<T> {
  return event.type === type;
}
