import { Usage } from '../events';
import { countTokens, estimateMessageTokensAs, tokenizerFor } from '../models';
import { IgnoredUsage, ViewEntry, ViewTokens } from './types';
import { MeasuredUsage } from './usage-measure';

/** DESIGN 6: what a step's usage says the context held. */
export function usageTotal(usage: Usage): number {
  return usage.input_tokens + (usage.cache_creation_tokens ?? 0) + (usage.cache_read_tokens ?? 0) + usage.output_tokens;
}

/** A usage figure further than this factor from the view's own estimate, either way, is recorded but not trusted (issue 12). */
export const USAGE_TRUST_FACTOR = 2;

export interface ViewTokensInput {
  entries: readonly ViewEntry[];
  system?: string;
  systemTokens?: number;
  model: string;
  usage: MeasuredUsage | null;
  /**
   * The pivot's own seq or the newest prune/archive, whichever is later: a
   * usage that measured the view before it counted what the model no longer sees.
   */
  staleThroughSeq: number;
}

/**
 * The last trustworthy usage plus the estimates of every message after it;
 * without one, an estimate of the whole view. A usage is not trusted when it
 * measured the view before the latest pivot or rewrite (`stale`), or when it
 * is more than USAGE_TRUST_FACTOR away from the view's own estimate of what
 * it measured (`disagrees`: a provider counting tools the log never sees, a
 * client reporting another call's figure); the figure is then the estimate.
 * Logged messages use their stored estimate; only what the view made
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
  const estimate = (ignoredUsage: IgnoredUsage | null): ViewTokens => ({
    estimated: whole,
    basis: 'estimate',
    usageSeq: null,
    usageTokens: 0,
    estimatedTokens: whole,
    wholeEstimate: whole,
    ignoredUsage,
  });
  if (!usage) return estimate(null);

  const { step } = usage;
  const usageTokens = usageTotal(step.data.usage);
  if (usage.measuredSeq < input.staleThroughSeq) return estimate({ seq: step.seq, tokens: usageTokens, reason: 'stale' });
  const estimatedTokens = sum(entries.filter((entry) => entry.seq > step.seq));
  const own = whole - estimatedTokens;
  if (usageTokens > own * USAGE_TRUST_FACTOR || usageTokens * USAGE_TRUST_FACTOR < own) {
    return estimate({ seq: step.seq, tokens: usageTokens, reason: 'disagrees' });
  }
  return {
    estimated: usageTokens + estimatedTokens,
    basis: 'usage+estimate',
    usageSeq: step.seq,
    usageTokens,
    estimatedTokens,
    wholeEstimate: whole,
    ignoredUsage: null,
  };
}

/**
 * An upper bound of the view's figure now and after any later rewrite (a
 * prune or a pivot may turn a trusted usage stale, and the figure into the
 * estimate): the larger of the two. What boundAfterGrowth starts from.
 */
export function viewTokenBound(tokens: ViewTokens): number {
  return Math.max(tokens.estimated, tokens.wholeEstimate);
}
