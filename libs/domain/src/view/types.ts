import { Message, StoredEvent } from '../events';

/** What to do with the calls of a trailing assistant message that have no result yet. */
export type PendingMode = 'abort' | 'omit';

export interface ViewOptions {
  /** `abort` (default) answers pending calls with the synthetic aborted result; `omit` leaves the calls out. */
  pending?: PendingMode;
  /** Tool output above this (estimated) is trimmed, oldest first; see defaultContextBudgetTokens. */
  contextBudgetTokens: number;
  /** Trims in steps (ToolOutputConfig.trimStep); 0 or absent: seed 000's trim. */
  trimStep?: number;
}

export interface BuildModelViewInput {
  /** The session's system prompt. */
  system?: string;
  /** The system prompt's token estimate, when the caller keeps one (spares estimating it per read). */
  systemTokens?: number;
  /** The latest completed compaction at or before the view's seq, or null. */
  pivot: StoredEvent<'compaction.completed'> | null;
  /** The window in seq order; events covered by the pivot are ignored if passed. */
  events: readonly StoredEvent[];
  /** The session's model: its tokenizer estimates what the log has no stored figure for. */
  model: string;
  options: ViewOptions;
}

/** One message of the view and where it came from. */
export interface ViewEntry {
  message: Message;
  /**
   * Where the entry sits in the log: its event's seq; for prefix messages the
   * pivot's coveredThroughSeq; for the pins the newest pin.added (the
   * coveredThroughSeq when the pivot carried them all); for synthetic
   * results their call's seq.
   */
  seq: number;
  /** The stored estimate, kept only while the message is exactly as logged. */
  tokens?: number;
  origin: 'prefix' | 'pins' | 'log' | 'synthetic';
}

export interface PendingToolCall {
  callId: string;
  name: string;
}

/** What pair normalization changed, for clients debugging a transcript. */
export interface PairRepairs {
  /** Calls answered with the synthetic aborted result. */
  abortedCallIds: string[];
  /** Results dropped: no call in the view, or a second result for a call. */
  droppedResultCallIds: string[];
  /** Calls dropped: a repeated call id, or a call outside an assistant message. */
  droppedCallIds: string[];
}

export interface ViewTokens {
  /** The context's size in tokens, as best known. */
  estimated: number;
  /** `usage+estimate`: provider usage of a step that saw this context, plus estimates of what came after. */
  basis: 'usage+estimate' | 'estimate';
  /** The step.finished the figure starts from, or null. */
  usageSeq: number | null;
  /** input + cache_creation + cache_read + output of that step (0 without one). */
  usageTokens: number;
  /** The estimated part of `estimated`. */
  estimatedTokens: number;
  /** The estimate of the whole view whatever the basis: what the figure falls back to (plus the overhead) when the usage stops being trusted. */
  wholeEstimate: number;
  /** What the next step is expected to add (the last step's output and the input before it, from their stored estimates): 0 before two steps. */
  expectedGrowth: number;
  /** What the provider counts beyond the view's estimate (tool definitions, framing, images), learnt from its usage; 0 until a usage says more. */
  overhead: number;
  /** The newest step's usage when it was recorded but not trusted, and why; null when trusted or absent. */
  ignoredUsage: IgnoredUsage | null;
}

export interface IgnoredUsage {
  /** The step.finished. */
  seq: number;
  tokens: number;
  /** `stale`: it measured the view before the latest pivot, prune or archive. */
  reason: 'stale';
}

/** Where a message of the view came from and what it counts in the view's figure. */
export interface ViewSource {
  seq: number;
  origin: ViewEntry['origin'];
  tokens: number;
}

export interface ModelView {
  system?: string;
  /** Normalized messages after the system prompt: what every renderer starts from. */
  messages: Message[];
  /** One per message, in the same order. */
  sources: ViewSource[];
  pendingToolCalls: PendingToolCall[];
  pivotSeq: number | null;
  coveredThroughSeq: number;
  repairs: PairRepairs;
  /** Results shown as the trim placeholder this time (view-time budget). */
  trimmedCallIds: string[];
  /** Estimated tool output the view still carries in full (what the budget measures). */
  toolOutputTokens: number;
  contextBudgetTokens: number;
  tokens: ViewTokens;
}
