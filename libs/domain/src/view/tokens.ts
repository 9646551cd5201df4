import { StoredEvent, Usage } from '../events';
import { countTokens, estimateMessageTokensAs, tokenizerFor } from '../models';
import { ViewEntry, ViewTokens } from './types';

/** DESIGN 6: what a step's usage says the context held. */
export function usageTotal(usage: Usage): number {
  return usage.input_tokens + (usage.cache_creation_tokens ?? 0) + (usage.cache_read_tokens ?? 0) + usage.output_tokens;
}

export interface ViewTokensInput {
  entries: readonly ViewEntry[];
  system?: string;
  systemTokens?: number;
  model: string;
  usage: StoredEvent<'step.finished'> | null;
  /**
   * The pivot's own seq or the newest prune/archive, whichever is later: a
   * step at or before it measured a context the model no longer sees.
   */
  staleThroughSeq: number;
}

/**
 * The last trustworthy usage plus the estimates of every message after it;
 * without one, an estimate of the whole view. Logged messages use their
 * stored estimate; only what the view made (placeholders, synthetic results,
 * the prefix) is estimated now, by ceil(chars/4): running a tokenizer over
 * hundreds of rewritten messages on every read costs tens of milliseconds.
 */
export function viewTokens(input: ViewTokensInput): ViewTokens {
  const { entries, model, usage } = input;
  const entryTokens = (entry: ViewEntry) => entry.tokens ?? estimateMessageTokensAs(entry.message, 'approx');
  const sum = (list: readonly ViewEntry[]) => list.reduce((total, entry) => total + entryTokens(entry), 0);

  if (usage && usage.seq > input.staleThroughSeq) {
    const usageTokens = usageTotal(usage.data.usage);
    const estimatedTokens = sum(entries.filter((entry) => entry.seq > usage.seq));
    return {
      estimated: usageTokens + estimatedTokens,
      basis: 'usage+estimate',
      usageSeq: usage.seq,
      usageTokens,
      estimatedTokens,
    };
  }
  const systemTokens = input.systemTokens ?? countTokens(input.system ? [input.system] : [], tokenizerFor(model));
  const estimatedTokens = systemTokens + sum(entries);
  return { estimated: estimatedTokens, basis: 'estimate', usageSeq: null, usageTokens: 0, estimatedTokens };
}
