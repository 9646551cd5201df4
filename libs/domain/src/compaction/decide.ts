/**
 * What a compaction appends: the completion (at most once per marker, never
 * on a stale plan), the failures and fallbacks on the way, the auto-continue
 * message; and the compaction state the session shows.
 */
import type {
  CompactionCompletedData,
  CompactionFailedData,
  CompactionReason,
  CompactionRequestedData,
  Message,
  NewEvent,
  StoredEvent,
} from '../events';
import type { CompactionConfig, CompactionStrategy } from '../config/types';
import { AUTO_CONTINUE_KIND, AUTO_CONTINUE_TEXT } from '../placeholders';
import { usageTotal } from '../view/tokens';
import { requestPointAfter, usageMeasuredSeq } from '../view/usage-measure';
import { LoopGuardCompletion, shouldSuppressAutoCompaction } from './overflow-policy';
import type { CompactionPlan, NothingToCompact, TailInfo } from './plan';
import type { Retention } from './fact-retention';
import type { SummaryRecord } from './heuristic/summary-record';
import { EvictedItem, evictionReceipt } from './heuristic/summary-eviction';
import { approxMessagesTokens } from '../tokens/message-tokens';

/** Strategy recorded when no summary could be made. */
export const KEEP_LAST_TURNS = 'keep-last-turns';

/** compaction.completed data as this module writes it: the contract fields plus what retries and the loop guard need. */
export interface CompactionCompletion extends CompactionCompletedData {
  auto: boolean;
  reason: CompactionReason;
  /** The pivot the plan was made on (null: none); a result on an older pivot is stale. */
  basePivotMarkerSeq: number | null;
  tail: TailInfo;
  /** The summary record carried to the next compaction; absent when none was made. */
  record?: SummaryRecord;
  /** The retention check's figures for the committed summary. */
  retention?: Retention;
  /** What left the record at this compaction (bounded receipt); absent when nothing did. */
  evicted?: EvictedItem[];
}

export interface CompletionInput {
  marker: { seq: number; auto: boolean; reason: CompactionReason };
  plan: CompactionPlan;
  strategy: CompactionStrategy | typeof KEEP_LAST_TURNS;
  prefix: Message[];
  summary: string;
  retain: string | null;
  /** The summarizer's model, or 'heuristic'. */
  model: string;
  durationMs: number;
  /** The session's token figure when planned (last usage + estimate); defaults to the plan's own estimate. */
  tokensBefore?: number;
  /** The summary record to carry forward (summarizeHeuristically's `record`). */
  record?: SummaryRecord | null;
  /** The retention check's result (prefixWithRetention). */
  retention?: Retention | null;
  /** The overhead learnt on the view being compacted (ViewTokens.overhead): the new view's figure until a step measures it. */
  overhead?: number;
  /** The items this compaction evicted from the record (summarizeHeuristically's `evictedItems`). */
  evicted?: readonly EvictedItem[];
}

/** The completion's data; tokensAfter is tokensBefore minus what the pivot covers plus the new prefix. */
export function buildCompletedData(input: CompletionInput): CompactionCompletion {
  const { marker, plan } = input;
  const tokensBefore = input.tokensBefore ?? plan.coveredTokens + plan.keptTokens;
  return {
    markerSeq: marker.seq,
    coveredThroughSeq: plan.coveredThroughSeq,
    summary: input.summary,
    ...(input.retain ? { retain: input.retain } : {}),
    prefix: input.prefix,
    strategy: input.strategy,
    model: input.model,
    tokensBefore,
    tokensAfter: Math.max(0, tokensBefore - plan.coveredTokens) + approxMessagesTokens(input.prefix),
    messagesCompacted: plan.messagesCompacted,
    durationMs: input.durationMs,
    auto: marker.auto,
    reason: marker.reason,
    basePivotMarkerSeq: plan.basePivotMarkerSeq,
    tail: plan.tail,
    ...(input.record ? { record: input.record } : {}),
    ...(input.retention ? { retention: input.retention } : {}),
    ...(input.evicted?.length ? { evicted: evictionReceipt(input.evicted) } : {}),
    ...(plan.pinsAtCut.length > 0 ? { pins: plan.pinsAtCut } : {}),
    ...(input.overhead ? { overhead: input.overhead } : {}),
  };
}

/**
 * Seed 003: the context after compaction must fit targetRatio of usable, else
 * the keep-last-turns fallback. The provider's overhead (tool definitions) is
 * left out of the comparison: no summary can shrink it, and falling back
 * would drop the head without one.
 */
export function exceedsTarget(data: CompactionCompletedData, config: CompactionConfig, usable: number | null): boolean {
  return config.targetRatio !== null && usable !== null && data.tokensAfter - (data.overhead ?? 0) > usable * config.targetRatio;
}

export function autoContinueEvent(markerSeq: number): NewEvent<'message.added'> {
  const id = `cmp-${markerSeq}-continue`;
  return {
    id,
    type: 'message.added',
    data: {
      message: {
        id,
        role: 'user',
        parts: [{ type: 'text', text: AUTO_CONTINUE_TEXT }],
        metadata: { userVisible: false, kind: AUTO_CONTINUE_KIND },
      },
    },
  };
}

export interface CommitState {
  /** Marker seq of the current pivot (the latest compaction.completed), or null. */
  latestCompletedMarkerSeq: number | null;
}

/**
 * The events that commit a result, or [] when its marker is already
 * completed or superseded, or a newer pivot landed after it was planned:
 * retries and double runs commit once. Appends the auto-continue message
 * after an automatic compaction when the config asks for it.
 */
export function decideCompletion(state: CommitState, data: CompactionCompletion, config: CompactionConfig): NewEvent[] {
  const latest = state.latestCompletedMarkerSeq;
  if (latest !== null && data.markerSeq <= latest) return [];
  if (data.basePivotMarkerSeq !== latest) return [];
  const completed: NewEvent = { id: `cmp-${data.markerSeq}-completed`, type: 'compaction.completed', data };
  return config.autoContinue && data.auto ? [completed, autoContinueEvent(data.markerSeq)] : [completed];
}

/** Where a summary comes from, in fallback order. */
export type SummarySource = 'llm' | 'heuristic' | typeof KEEP_LAST_TURNS;

/** LLM (when configured), then the heuristic, then no summary at all. */
export function summarySources(config: CompactionConfig): SummarySource[] {
  return config.summarizer === 'heuristic' ? ['heuristic', KEEP_LAST_TURNS] : ['llm', 'heuristic', KEEP_LAST_TURNS];
}

export type SummaryFailureKind = 'error' | 'timeout' | 'empty' | 'oversized' | 'over_target' | 'input_overflow';

export interface FailureInput {
  markerSeq: number;
  /** Summarizer calls for this marker so far, this one included (1-based). */
  attempt: number;
  source: SummarySource;
  /** Calls of this source so far, this one included. */
  sourceAttempt: number;
  failure: { kind: SummaryFailureKind; message: string };
  config: CompactionConfig;
  /** Whether the head still has items to drop (input_overflow). */
  canTrim: boolean;
}

export interface FailureDecision {
  event: NewEvent<'compaction.failed'>;
  /** What to run next; null gives the marker up (state `failed`). */
  next: { source: SummarySource; trimHead: boolean } | null;
}

/**
 * After a failed summary: an input that overflows the summarizer's window
 * loses its oldest head item and retries (Codex); errors and timeouts retry
 * the same source up to maxAttempts; anything else, or too many tries, moves
 * to the next source. Each failure is recorded with the step taken.
 */
export function decideAfterFailure(input: FailureInput): FailureDecision {
  const { markerSeq, attempt, source, failure, config } = input;
  const sources = summarySources(config);
  let next: FailureDecision['next'];
  let fallback: string;
  if (failure.kind === 'input_overflow' && input.canTrim) {
    next = { source, trimHead: true };
    fallback = 'trim';
  } else if ((failure.kind === 'error' || failure.kind === 'timeout') && input.sourceAttempt < config.maxAttempts) {
    next = { source, trimHead: false };
    fallback = 'retry';
  } else {
    const following = sources[sources.indexOf(source) + 1];
    next = following ? { source: following, trimHead: false } : null;
    fallback = following ?? 'none';
  }
  const data: CompactionFailedData = { markerSeq, attempt, error: `${failure.kind}: ${failure.message}`, fallback };
  return { event: { id: `cmp-${markerSeq}-failed-${attempt}`, type: 'compaction.failed', data }, next };
}

/** Closes a marker with nothing to summarize; the state returns to idle with the reason as last error. */
export function nothingToCompactEvent(nothing: NothingToCompact): NewEvent<'compaction.failed'> {
  const data = { markerSeq: nothing.markerSeq, attempt: 0, error: `nothing_to_compact: ${nothing.reason}`, fallback: 'skipped' };
  return { id: `cmp-${nothing.markerSeq}-skipped`, type: 'compaction.failed', data };
}

/** What the session state needs of its compaction events, folded as they are appended. */
export interface CompactionFacts {
  latestMarker: ({ seq: number } & CompactionRequestedData) | null;
  latestCompletion: LoopGuardCompletion | null;
  /** The first token total measured on the context after the latest completion (a step that saw the pivot). */
  firstTokensAfter: number | null;
  /** The latest failure of the latest marker. */
  lastFailure: CompactionFailedData | null;
  /** Where the client last read the context (requestPointAfter): what tells a late step from one on the new context. */
  requestPoint: number;
}

export const INITIAL_COMPACTION_FACTS: CompactionFacts = {
  latestMarker: null,
  latestCompletion: null,
  firstTokensAfter: null,
  lastFailure: null,
  requestPoint: 0,
};

export function evolveCompactionFacts(facts: CompactionFacts, event: StoredEvent): CompactionFacts {
  const next = { ...facts, requestPoint: requestPointAfter(facts.requestPoint, event) };
  switch (event.type) {
    case 'compaction.requested':
      return { ...next, latestMarker: { seq: event.seq, ...event.data }, lastFailure: null };
    case 'compaction.completed': {
      const { markerSeq, tokensBefore, tokensAfter } = event.data;
      return { ...next, latestCompletion: { seq: event.seq, markerSeq, auto: event.data.auto === true, tokensBefore, tokensAfter }, firstTokensAfter: null };
    }
    case 'compaction.failed':
      return event.data.markerSeq === facts.latestMarker?.seq ? { ...next, lastFailure: event.data } : next;
    case 'step.finished': {
      // A step that measured the view before the pivot (it was in flight, or came late) says nothing about the new context.
      const onNewContext = facts.latestCompletion !== null && usageMeasuredSeq(event, facts.requestPoint) >= facts.latestCompletion.seq;
      return onNewContext && facts.firstTokensAfter === null ? { ...next, firstTokensAfter: usageTotal(event.data.usage) } : next;
    }
    default:
      return next;
  }
}

export type CompactionStateName = 'idle' | 'pending' | 'running' | 'failed';

export interface CompactionState {
  state: CompactionStateName;
  lastError: string | null;
  /** The open marker new requests join, or null. */
  pendingMarkerSeq: number | null;
  /** Why automatic compaction is suspended (loop guard), or null. */
  suppressedReason: string | null;
}

/** Failure fallbacks that close a marker: given up, or nothing to summarize. */
const CLOSING_FALLBACKS = new Set(['none', 'skipped']);

/**
 * The session's compaction state. Only the worker knows a job is running:
 * it holds a lease on the session row naming the marker it compacts
 * (`runningMarkerSeq`); the open marker is `running` while that is it. A
 * marker given up is `failed`, one with nothing to summarize goes back to
 * `idle` with the reason as lastError.
 */
export function deriveCompactionState(
  facts: CompactionFacts,
  options: {
    /** The marker a worker's lease names (null when none, or lapsed). */
    runningMarkerSeq: number | null;
    loopGuardRatio: number;
    /** The view's token figure and usable tokens now: the loop guard re-arms once the view has grown enough. */
    view?: { tokens: number; usable: number | null };
  },
): CompactionState {
  const marker = facts.latestMarker;
  const completedThrough = facts.latestCompletion?.markerSeq ?? Number.NEGATIVE_INFINITY;
  const failure = facts.lastFailure;
  const closed = failure !== null && CLOSING_FALLBACKS.has(failure.fallback);
  const open = marker !== null && marker.seq > completedThrough && !closed;
  const state: CompactionStateName = open
    ? options.runningMarkerSeq === marker.seq
      ? 'running'
      : 'pending'
    : failure?.fallback === 'none' && marker !== null && marker.seq > completedThrough
      ? 'failed'
      : 'idle';
  return {
    state,
    lastError: failure?.error ?? null,
    pendingMarkerSeq: open ? marker.seq : null,
    suppressedReason: shouldSuppressAutoCompaction(facts.latestCompletion, facts.firstTokensAfter, options.loopGuardRatio, options.view),
  };
}
