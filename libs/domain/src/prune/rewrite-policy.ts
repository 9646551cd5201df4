/**
 * Rewrites that pay for themselves (docs/compaction.md): when prune and
 * archive may clear outputs, given what the clearing would cost the
 * provider's prompt cache. The jobs' own rules (OpenCode's minimum,
 * Anthropic's clear_at_least, seed 001's cutoff) choose what to clear; this
 * decides whether to clear it now.
 */
import type { CacheRewriteRule } from '../config/types';
import type { StoredEvent } from '../events';
import { rewritePrice } from '../view/cache-cost';
import { estimateTokens, inputText } from '../tokens/chars';
import type { PruneDecision } from './prune-decision';
import type { ArchiveDecision } from './select-archive';

/** Why a planned prune or archive waits. */
export const REWRITE_DEFERRALS = [
  /** A compaction marker is pending: its pivot drops these outputs with everything else, in one rewrite. */
  'compaction_pending',
  /** The view is over the compaction trigger: the compaction comes first, for the same reason. */
  'compaction_due',
  /** A prune or archive already rewrote the prefix since the latest pivot: the next one waits for the compaction. */
  'once_per_interval',
  /** Its cache rewrite would not be repaid before the compaction that drops these outputs anyway. */
  'not_repaid',
] as const;
export type RewriteDeferral = (typeof REWRITE_DEFERRALS)[number];

/** A run's planned clearing as one rewrite of the prefix (archive and prune commit together). */
export interface PlannedRewrite {
  /** The first message the rewrite changes: the prefix the provider cached is lost from there on. */
  firstChangedSeq: number | null;
  /** Prompt tokens it removes: the prune's tokensFreed plus the archived outputs and inputs. */
  removedTokens: number;
  /** Tokens of the current view from firstChangedSeq on: what the next call writes to the cache again. */
  invalidatedTokens: number;
}

/** Where the session stands when the rewrite is planned. */
export interface RewriteMoment {
  compactionPending: boolean;
  /** The view is over the compaction trigger (OverflowEvaluation.overflow). */
  compactionDue: boolean;
  /** The view's token figure and the trigger threshold; null threshold when no automatic compaction will come. */
  figure: number;
  threshold: number | null;
  /** What the next step is expected to add (ViewTokens.expectedGrowth). */
  expectedGrowth: number;
}

export interface RewriteVerdict {
  apply: boolean;
  /** Set when it waits. */
  deferral: RewriteDeferral | null;
  removedTokens: number;
  invalidatedTokens: number;
  /** Steps of saving until the rewrite is repaid (cache-cost.ts prices); null when it removes nothing. */
  breakEvenSteps: number | null;
  /** Steps until the view, once cleared, grows back to the threshold; null when unbounded (no threshold, no growth). */
  stepsLeft: number | null;
}

/** Message seqs holding each call's tool_call and tool_result parts, in the given events. */
function messageSeqs(events: readonly StoredEvent[]): { calls: Map<string, number>; results: Map<string, number> } {
  const calls = new Map<string, number>();
  const results = new Map<string, number>();
  for (const event of events) {
    if (event.type !== 'message.added') continue;
    for (const part of event.data.message.parts) {
      if (part.type === 'tool_call' && !calls.has(part.callId)) calls.set(part.callId, event.seq);
      else if (part.type === 'tool_result' && !results.has(part.callId)) results.set(part.callId, event.seq);
    }
  }
  return { calls, results };
}

/**
 * The clearing a run would commit, priced on the view it changes: `sources`
 * are the current view's entries (ModelView.sources). An archive changes
 * its earliest call, a prune its earliest result (its call too with
 * clearInputs). Null when the run clears nothing.
 */
export function planRewrite(
  events: readonly StoredEvent[],
  sources: ReadonlyArray<{ seq: number; origin: string; tokens: number }>,
  planned: { archive: ArchiveDecision | null; prune: PruneDecision | null },
): PlannedRewrite | null {
  const { archive, prune } = planned;
  if (!archive && !prune) return null;
  const { calls, results } = messageSeqs(events);
  const seqs: number[] = [];
  for (const id of archive?.callIds ?? []) seqs.push(...[calls.get(id), results.get(id)].filter((seq): seq is number => seq !== undefined));
  for (const id of prune?.callIds ?? []) {
    seqs.push(...[results.get(id), prune!.clearInputs ? calls.get(id) : undefined].filter((seq): seq is number => seq !== undefined));
  }
  const firstChangedSeq = seqs.length > 0 ? Math.min(...seqs) : null;
  const archived = (archive?.pairs ?? []).reduce((sum, pair) => sum + estimateTokens(pair.result.output) + estimateTokens(inputText(pair.input)), 0);
  const invalidatedTokens = sources.reduce(
    (sum, source) => (firstChangedSeq === null || (source.origin === 'log' && source.seq >= firstChangedSeq) ? sum + source.tokens : sum),
    0,
  );
  return { firstChangedSeq, removedTokens: archived + (prune?.tokensFreed ?? 0), invalidatedTokens };
}

/** Whether a prune or archive landed after the latest pivot in `events` (a window read). */
export function rewroteSincePivot(events: readonly StoredEvent[]): boolean {
  let since = 0;
  for (const event of events) if (event.type === 'compaction.completed') since = event.seq;
  return events.some((event) => event.seq > since && (event.type === 'tool_outputs.pruned' || event.type === 'tool_results.archived'));
}

/**
 * Rule `pay-off`, in order: wait while a compaction is pending or due (it
 * rewrites everything once, and its pivot drops these outputs); at most
 * one prune or archive between two compactions (a second would rewrite,
 * again, the prefix the first one just had the provider write: the cost
 * recurs before it is repaid); and only when the rewrite is repaid
 * (breakEvenSteps, the saving of reading fewer tokens at every later step
 * against writing the rest of the prefix again) within the steps left
 * before the view, once cleared, grows back to the threshold. Without an
 * automatic compaction to come (threshold null) only the repayment counts,
 * with unbounded steps: the job's own minimum decides. Rule `always`: the
 * jobs' own rules alone.
 */
export function judgeRewrite(rule: CacheRewriteRule, planned: PlannedRewrite, moment: RewriteMoment, rewroteInInterval: boolean): RewriteVerdict {
  const { removedTokens, invalidatedTokens } = planned;
  const { breakEvenSteps } = rewritePrice(invalidatedTokens, removedTokens);
  const growth = moment.expectedGrowth;
  const stepsLeft =
    moment.threshold === null || growth <= 0 ? null : Math.max(0, Math.floor((moment.threshold - (moment.figure - removedTokens)) / growth));
  const verdict = (deferral: RewriteDeferral | null): RewriteVerdict => ({
    apply: deferral === null,
    deferral,
    removedTokens,
    invalidatedTokens,
    breakEvenSteps,
    stepsLeft,
  });
  if (rule === 'always') return verdict(null);
  if (moment.compactionPending) return verdict('compaction_pending');
  if (moment.compactionDue) return verdict('compaction_due');
  if (moment.threshold !== null && rewroteInInterval) return verdict('once_per_interval');
  if (breakEvenSteps !== null && stepsLeft !== null && breakEvenSteps > stepsLeft) return verdict('not_repaid');
  return verdict(null);
}
