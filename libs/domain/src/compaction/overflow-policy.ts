/**
 * When the context must shrink (DESIGN.md section 6): the preset's trigger over
 * the model's limits, the events that force a compaction, and the loop guard.
 */
import type { CompactionReason } from '../events';
import type { ModelLimits } from '../models/model-registry';
import type { CompactionConfig } from '../config/types';

export type OverflowReason =
  /** compaction.enabled=false. */
  | 'disabled'
  /** compaction.auto=false: the figures are still computed, for the session state. */
  | 'auto_off'
  /** limit.context = 0 and no fallback of the trigger applies. */
  | 'unlimited'
  | 'threshold'
  /** Seed 001's last fallback: too many visible messages. */
  | 'message_count'
  /** Below the threshold but within the cold-cache margin of it, after an idle gap (cache timing `cache-aware`). */
  | 'cache_cold'
  | 'below_threshold';

export interface OverflowEvaluation {
  overflow: boolean;
  reason: OverflowReason;
  /** Tokens the context may use (null: unlimited, or counted in messages). */
  usable: number | null;
  /** The figure that triggers: tokens, or messages for 'message_count'. */
  threshold: number | null;
  /** How full: total / usable (messages / maxMessages when counting messages); null when unlimited. */
  ratio: number | null;
}

export interface OverflowInput {
  /**
   * The provider's last usage total (view's usageTotal) plus an estimate of
   * what came after it, or an estimate alone; and what the next step is
   * expected to add (ViewTokens.expectedGrowth), so the compaction is asked
   * for one step before the view would cross the threshold.
   */
  tokens: { total: number; expectedGrowth?: number };
  limits: ModelLimits;
  config: CompactionConfig;
  /** Visible messages in the window; only seed 001's last fallback counts them. */
  messageCount?: number;
  /**
   * The provider's cache went cold before this check (coldCacheMargin): a
   * figure within this share below the threshold overflows too, with reason
   * `cache_cold`. 0 or absent: the threshold alone.
   */
  coldMargin?: number;
}

type Budget = { usable: number } | { maxMessages: number } | null;

/** The usable tokens under the configured trigger; null = unlimited. */
function budgetOf({ trigger }: CompactionConfig, limits: ModelLimits): Budget {
  switch (trigger.type) {
    case 'ratio':
      if (limits.context === 0) return null;
      return { usable: limits.input ?? limits.context - trigger.outputReserve };
    case 'reserved': {
      if (limits.context === 0) return null;
      const maxOutput = Math.min(limits.output || trigger.outputCap, trigger.outputCap);
      const reserved = trigger.reserved ?? Math.min(trigger.buffer, maxOutput);
      return { usable: limits.input ? limits.input - reserved : limits.context - maxOutput };
    }
    case 'reserve-chain':
      if (limits.context > 0) return { usable: limits.input ?? limits.context - trigger.reserveTokens };
      if (trigger.maxTokens > 0) return { usable: trigger.maxTokens };
      return trigger.maxMessages > 0 ? { maxMessages: trigger.maxMessages } : null;
  }
}

/** At most this share of the usable window counts as the next step's growth: one huge output must not make every later view look full. */
export const EXPECTED_GROWTH_MAX_SHARE = 0.25;

/** The expected growth the trigger adds to the view's figure. */
export function expectedGrowthWithin(expectedGrowth: number, usable: number): number {
  return Math.min(expectedGrowth, Math.floor(usable * EXPECTED_GROWTH_MAX_SHARE));
}

/** Whether the context overflows the preset's trigger, with the figures the session state shows. */
export function evaluateOverflow(input: OverflowInput): OverflowEvaluation {
  const { config, limits, tokens } = input;
  const budget = budgetOf(config, limits);
  const gate: OverflowReason | null = !config.enabled ? 'disabled' : !config.auto ? 'auto_off' : null;
  if (budget === null) return { overflow: false, reason: gate ?? 'unlimited', usable: null, threshold: null, ratio: null };
  if ('maxMessages' in budget) {
    const count = input.messageCount ?? 0;
    const over = count >= budget.maxMessages;
    return {
      overflow: over && gate === null,
      reason: gate ?? (over ? 'message_count' : 'below_threshold'),
      usable: null,
      threshold: budget.maxMessages,
      ratio: count / budget.maxMessages,
    };
  }
  const usable = Math.max(0, budget.usable);
  const scaled = Math.floor(usable * config.thresholdRatio);
  const threshold = config.trigger.type === 'ratio' && config.trigger.tokenLimit !== null ? Math.min(scaled, config.trigger.tokenLimit) : scaled;
  const growth = config.anticipateGrowth ? expectedGrowthWithin(tokens.expectedGrowth ?? 0, usable) : 0;
  const over = tokens.total + growth >= threshold;
  const cold = !over && (input.coldMargin ?? 0) > 0 && tokens.total + growth >= Math.floor(threshold * (1 - input.coldMargin!));
  return {
    overflow: (over || cold) && gate === null,
    reason: gate ?? (over ? 'threshold' : cold ? 'cache_cold' : 'below_threshold'),
    usable,
    threshold,
    ratio: usable > 0 ? tokens.total / usable : null,
  };
}

/**
 * The cold-cache margin the trigger applies to an append at `at` that
 * follows an event at `previousAt`: the cache setting's coldMargin when the
 * timing is `cache-aware` and the gap is longer than the provider's cache
 * lifetime (the prefix expired, so the next call writes it whole whether
 * or not a compaction rewrites it first), else 0. A warm cache keeps the
 * trigger as configured: the compaction waits until the view needs it.
 */
export function coldCacheMargin(
  cache: { timing: 'cache-aware' | 'threshold'; lifetimeSeconds: number; coldMargin: number },
  previousAt: Date | null,
  at: Date,
): number {
  if (cache.timing !== 'cache-aware' || previousAt === null) return 0;
  return at.getTime() - previousAt.getTime() > cache.lifetimeSeconds * 1000 ? cache.coldMargin : 0;
}

/** Finish reasons meaning the reply hit its length limit (OpenAI Chat and the AI SDK `length`, Anthropic `max_tokens`, Responses `max_output_tokens`). */
const LENGTH_FINISH = new Set(['length', 'max_tokens', 'max_output_tokens']);

/** Appends that grow the view: the threshold is checked after them too, not only after a step. */
export const VIEW_GROWTH_TYPES: ReadonlySet<string> = new Set(['message.added', 'pin.added']);

/**
 * Why the event just appended asks for an automatic compaction, or null.
 * `context.overflowed` and a length-limited step force one even with
 * auto=false (the client hit the wall); enabled=false stops them all. A step
 * or an append that grows the view asks when the view is over the threshold.
 */
export function compactionReasonFor(
  event: { type: string; data: unknown },
  evaluation: OverflowEvaluation,
): Exclude<CompactionReason, 'manual'> | null {
  if (evaluation.reason === 'disabled') return null;
  if (event.type === 'context.overflowed') return 'overflow';
  if (event.type === 'step.finished') {
    const finishReason = (event.data as { finishReason?: string }).finishReason;
    if (finishReason !== undefined && LENGTH_FINISH.has(finishReason)) return 'finish_length';
  } else if (!VIEW_GROWTH_TYPES.has(event.type)) {
    return null;
  }
  if (!evaluation.overflow) return null;
  return evaluation.reason === 'cache_cold' ? 'cache_cold' : 'threshold';
}

/** What was appended since a view was last checked, from stored figures only (no event data but the last step's usage). */
export interface GrowthSince {
  /** Stored estimates of the events since (eventTokens: what each adds to the view). */
  tokens: number;
  /** The newest step since, if any: its usage total and the stored estimates of the events after it. */
  lastUsage: { total: number; tokensAfter: number } | null;
}

/**
 * An upper bound of a view's figure after growth, from a bound of it at an
 * earlier seq (viewTokenBound) and what was appended since. It holds because
 * an append adds at most its stored estimate to the view (a trim, a prune,
 * a pivot only take away), and a step since may make its usage the figure.
 */
export function boundAfterGrowth(bound: number, since: GrowthSince): number {
  return Math.max(bound + since.tokens, since.lastUsage ? since.lastUsage.total + since.lastUsage.tokensAfter : 0);
}

/**
 * The token figure at or above which growth alone asks for a compaction:
 * Infinity when it never does (compaction or auto off, an unlimited window),
 * null when the trigger counts messages (tokens cannot tell).
 */
export function growthThreshold(limits: ModelLimits, config: CompactionConfig): number | null {
  const evaluation = evaluateOverflow({ tokens: { total: 0 }, limits, config, messageCount: 0 });
  if (evaluation.reason === 'disabled' || evaluation.reason === 'auto_off' || evaluation.reason === 'unlimited') return Number.POSITIVE_INFINITY;
  return evaluation.usable === null ? null : evaluation.threshold;
}

/** Whether a view whose figure is at most `bound` may be over `threshold` (growthThreshold). */
export function mayOverflow(bound: number, threshold: number | null): boolean {
  return threshold === null || bound >= threshold;
}

/** The facts of the latest compaction the loop guard needs. */
export interface LoopGuardCompletion {
  /** The compaction.completed's own seq. */
  seq: number;
  markerSeq: number;
  auto: boolean;
  /** The session's token figure when the compaction was planned. */
  tokensBefore: number;
  /** Its estimate of the figure after the pivot. */
  tokensAfter: number;
}

/** Share of the usable window the view must grow by, once the loop guard tripped, before automatic compaction is tried again. */
export const LOOP_GUARD_REARM_SHARE = 0.1;

/** The loop guard holding automatic compaction back: the figure the stalled compaction left, and the view's figure that re-arms it (null: only a manual compaction does). */
export interface LoopGuardHold {
  after: number;
  resumesAt: number | null;
}

/**
 * The loop guard (OpenCode): an automatic compaction that did not bring the
 * tokens below `ratio` (0.95) of the figure before it is not repeated. It
 * stalled when its own figures say so and, once a step has run on the new
 * context, that first measured total agrees: a step still in flight on the
 * old context when the pivot landed cannot trip it alone. It re-arms by
 * itself once the view has grown by a further LOOP_GUARD_REARM_SHARE of the
 * usable window past that figure (then one more compaction is tried; a
 * stalled one trips the guard again), or at the next pivot (e.g. a manual
 * compaction). Null when it does not hold.
 */
export function loopGuardHold(
  previous: LoopGuardCompletion | null,
  firstTokensAfter: number | null,
  ratio: number,
  usable: number | null,
): LoopGuardHold | null {
  if (!previous?.auto) return null;
  const bound = previous.tokensBefore * ratio;
  const after = firstTokensAfter ?? previous.tokensAfter;
  if (previous.tokensAfter < bound || after < bound) return null;
  return { after, resumesAt: usable ? after + Math.ceil(usable * LOOP_GUARD_REARM_SHARE) : null };
}

/** The reason the session state shows while the loop guard holds at the view's figure now, or null. */
export function shouldSuppressAutoCompaction(
  previous: LoopGuardCompletion | null,
  firstTokensAfter: number | null,
  ratio: number,
  view?: { tokens: number; usable: number | null },
): string | null {
  const hold = loopGuardHold(previous, firstTokensAfter, ratio, view?.usable ?? null);
  if (!hold || (hold.resumesAt !== null && view!.tokens >= hold.resumesAt)) return null;
  return (
    `automatic compaction suspended: the compaction for marker ${previous!.markerSeq} left ${hold.after} tokens, ` +
    `not below ${Math.round(ratio * 100)}% of the ${previous!.tokensBefore} before it; ` +
    (hold.resumesAt !== null ? `it resumes once the context reaches ${hold.resumesAt} tokens, or compact manually` : 'compact manually to resume')
  );
}
