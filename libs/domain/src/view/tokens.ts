import { Usage } from '../events';
import { tokenizerFor } from '../models';
import { countTokens, estimateMessageTokensAs } from '../tokens';
import { IgnoredUsage, ViewEntry, ViewTokens } from './types';
import { EntryRewrite } from './fold';
import { MeasuredUsage } from './usage-measure';

/** DESIGN 6: what a step's usage says the context held. */
export function usageTotal(usage: Usage): number {
  return usage.input_tokens + (usage.cache_creation_tokens ?? 0) + (usage.cache_read_tokens ?? 0) + usage.output_tokens;
}

export interface ViewTokensInput {
  entries: readonly ViewEntry[];
  system?: string;
  systemTokens?: number;
  model: string;
  usage: MeasuredUsage | null;
  /** The pivot's own seq (0 without one): a usage that measured the view before it cannot tell this view's overhead. */
  pivotSeq: number;
  /** The overhead the pivot carried from the view it replaced (compaction.completed.overhead). */
  pivotOverhead: number;
  /** The newest prune or archive after the pivot: a usage that measured the view before it counted what the model no longer sees. */
  lastRewriteSeq: number;
  /** What prunes and archives took out of the window's entries (foldWindow). */
  rewrites: readonly EntryRewrite[];
  /** The entries before the view-time trim: what a step was sent may have been trimmed only by what came after it. */
  measuredEntries?: readonly ViewEntry[];
  /** foldWindow's lastStepGrowth. */
  lastStepGrowth?: number | null;
}

/**
 * The session's token figure. A step's usage is the provider's own count of
 * the view it measured, tool definitions, framing and images included, so it
 * is trusted whatever its size against the estimate; the figure is that
 * usage plus the estimates of every message after it. A usage measured
 * before the latest pivot, prune or archive counted what the model no longer
 * sees (`stale`): the figure is then the estimate of the whole view plus the
 * overhead, what the provider counts beyond the estimate. The overhead is
 * learnt from the newest usage measured after the pivot (its input count
 * minus the estimate of the view it was sent, rebuilt across later prunes,
 * archives and trims), else carried by the pivot from the view it replaced;
 * never below 0. Logged messages use their stored estimate; only what the view made
 * (placeholders, synthetic results, the prefix, the pins) is estimated now,
 * by ceil(chars/4): running a tokenizer over hundreds of rewritten messages
 * on every read costs tens of milliseconds.
 */
export function viewTokens(input: ViewTokensInput): ViewTokens {
  const { entries, model, usage } = input;
  const entryTokens = (entry: ViewEntry) => entry.tokens ?? estimateMessageTokensAs(entry.message, 'approx');
  const sum = (list: readonly ViewEntry[]) => list.reduce((total, entry) => total + entryTokens(entry), 0);
  const systemTokens = input.systemTokens ?? countTokens(input.system ? [input.system] : [], tokenizerFor(model));
  const whole = systemTokens + sum(entries);
  const expectedGrowth = input.lastStepGrowth ?? 0;
  const estimate = (overhead: number, ignoredUsage: IgnoredUsage | null): ViewTokens => ({
    estimated: whole + overhead,
    basis: 'estimate',
    usageSeq: null,
    usageTokens: 0,
    estimatedTokens: whole,
    wholeEstimate: whole,
    overhead,
    expectedGrowth,
    ignoredUsage,
  });
  if (!usage || usage.measuredSeq < input.pivotSeq) {
    return estimate(input.pivotOverhead, usage ? { seq: usage.step.seq, tokens: usageTotal(usage.step.data.usage), reason: 'stale' } : null);
  }

  const { step, measuredSeq } = usage;
  const usageTokens = usageTotal(step.data.usage);
  // The overhead is learnt on the input side: the view the step was sent with, as it was then (before later rewrites and
  // view-time trims), against the provider's input count; the output (hidden reasoning included) is no overhead.
  const undone = input.rewrites.filter((rewrite) => rewrite.seq <= measuredSeq && rewrite.rewriteSeq > measuredSeq);
  const undoneSeqs = new Set(undone.map((rewrite) => rewrite.seq));
  const sent =
    systemTokens +
    sum((input.measuredEntries ?? entries).filter((entry) => entry.seq <= measuredSeq && !(entry.origin === 'log' && undoneSeqs.has(entry.seq)))) +
    undone.reduce((total, rewrite) => total + rewrite.tokensBefore, 0);
  const overhead = Math.max(0, usageTokens - step.data.usage.output_tokens - sent);
  if (measuredSeq < input.lastRewriteSeq) return estimate(overhead, { seq: step.seq, tokens: usageTokens, reason: 'stale' });
  const estimatedTokens = sum(entries.filter((entry) => entry.seq > step.seq));
  return {
    estimated: usageTokens + estimatedTokens,
    basis: 'usage+estimate',
    usageSeq: step.seq,
    usageTokens,
    estimatedTokens,
    wholeEstimate: whole,
    overhead,
    expectedGrowth,
    ignoredUsage: null,
  };
}

/**
 * An upper bound of the view's figure now and after any later rewrite (a
 * prune or a pivot may turn a trusted usage stale, and the figure into the
 * estimate plus the overhead): the larger of the two. What boundAfterGrowth
 * starts from.
 */
export function viewTokenBound(tokens: ViewTokens): number {
  return Math.max(tokens.estimated, tokens.wholeEstimate + tokens.overhead);
}
