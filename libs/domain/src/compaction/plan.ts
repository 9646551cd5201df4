/**
 * Where a compaction cuts: the head to summarize, the tail kept verbatim, and
 * the seq the new pivot covers through.
 */
import type { CompactionCompletedData, Message, Pin, StoredEvent } from '../events';
import { foldPins } from '../pins/pins';
import { withoutRewound } from '../view/rewind';
import type { CompactionConfig } from '../config/types';
import { parseSummaryRecord, SummaryRecord } from './heuristic/summary-record';
import { approxMessagesTokens } from '../tokens/message-tokens';
import { compactionWindow, isTurnStart, settledCutChecker, WindowMessage } from './window';

export interface PlanInput {
  /** Events after the current pivot in seq order, including any appended after the marker. */
  events: readonly StoredEvent[];
  /** The current pivot (the latest compaction.completed), or null. */
  pivot: CompactionCompletedData | null;
  markerSeq: number;
  config: CompactionConfig;
  /** Usable tokens of the context (evaluateOverflow); null = unlimited. Sizes the tail. */
  usable: number | null;
}

export interface TailInfo {
  /** Seq of the first message kept before the marker; null when everything up to the cut is summarized. */
  fromSeq: number | null;
  turns: number;
  messages: number;
  tokens: number;
  /** The tail's token budget; null = none. */
  budget: number | null;
  /** OpenCode's fallback: the tail did not fit (or was everything), so all settled messages are summarized. */
  summarizeAll: boolean;
}

export interface CompactionPlan {
  kind: 'plan';
  markerSeq: number;
  /** The pivot this plan was made on; a result is stale once another pivot lands. */
  basePivotMarkerSeq: number | null;
  /** Events with seq <= this leave the window. At most markerSeq: what arrives meanwhile stays after the pivot. */
  coveredThroughSeq: number;
  head: WindowMessage[];
  tail: TailInfo;
  messagesCompacted: number;
  /** Tokens the pivot takes out of the view: the previous prefix and the head. */
  coveredTokens: number;
  /** The built-in summary's budget for this window (summaryBudgetTokens). */
  summaryBudgetTokens: number;
  /** Tokens left after the cut: the tail and everything after the marker. */
  keptTokens: number;
  previousSummary: string | null;
  previousPrefix: Message[];
  /** The current pivot's summary record (compaction.completed `data.record`), null when it stored none. */
  previousRecord: SummaryRecord | null;
  /**
   * The head as written, for summarizers that read everything: every
   * agent-visible message up to the cut, with pruned outputs whole and
   * archived pairs in place (the digests that replaced them left out).
   */
  sourceHead: Message[];
  /** What stays in the window after the cut, as the model reads it: the tail and everything after the marker. */
  keptMessages: Message[];
  /** The pins in force now: shown verbatim after the new prefix too, so what they hold counts as kept. */
  pins: Pin[];
  /** The pins in force at coveredThroughSeq, which the new pivot carries (its window folds the later pin events). */
  pinsAtCut: Pin[];
}

export interface NothingToCompact {
  kind: 'nothing';
  markerSeq: number;
  reason: 'empty_window' | 'no_settled_cut';
}

const sumTokens = (items: readonly WindowMessage[]) => items.reduce((sum, item) => sum + item.tokens, 0);

/** Share of the after-compaction allowance the built-in summary may take (the tail gets the rest). */
export const SUMMARY_SHARE_OF_AFTER = 0.3;
/** The built-in summary never gets less than this, however small the window. */
export const MIN_SUMMARY_BUDGET = 500;

/** The trigger's token threshold for `usable` (evaluateOverflow's formula), or null when unlimited. */
function thresholdOf(config: CompactionConfig, usable: number | null): number | null {
  if (usable === null) return null;
  const scaled = Math.floor(usable * config.thresholdRatio);
  return config.trigger.type === 'ratio' && config.trigger.tokenLimit !== null ? Math.min(scaled, config.trigger.tokenLimit) : scaled;
}

/** Tokens the context may hold after a compaction (maxTokensAfterRatio of the trigger), or null when uncapped. */
function afterAllowance(config: CompactionConfig, usable: number | null): number | null {
  const threshold = thresholdOf(config, usable);
  return threshold === null || config.maxTokensAfterRatio === null ? null : Math.floor(threshold * config.maxTokensAfterRatio);
}

/**
 * The built-in summary's budget: summaryMaxTokens, or less in a small
 * window, where it takes at most SUMMARY_SHARE_OF_AFTER of what the context
 * may hold after the compaction (never under MIN_SUMMARY_BUDGET).
 */
export function summaryBudgetTokens(config: CompactionConfig, usable: number | null): number {
  const allowance = afterAllowance(config, usable);
  if (allowance === null) return config.summaryMaxTokens;
  return Math.min(config.summaryMaxTokens, Math.max(MIN_SUMMARY_BUDGET, Math.floor(allowance * SUMMARY_SHARE_OF_AFTER)));
}

/**
 * The tail's token budget: OpenCode's clamp of usable, or seed 001's
 * keepRecentTokens clamped to half the limit, and within a target (seed 003)
 * with room left for the summary; and, with maxTokensAfterRatio, within
 * that share of the trigger less the summary's budget, so a compaction
 * always frees the rest.
 */
export function tailBudgetTokens(config: CompactionConfig, usable: number | null): number {
  const budgets: number[] = [];
  const allowance = afterAllowance(config, usable);
  if (allowance !== null) budgets.push(Math.max(0, allowance - summaryBudgetTokens(config, usable)));
  if (config.strategy === 'recent-tokens') {
    if (config.keepRecentTokens > 0) {
      budgets.push(usable === null ? config.keepRecentTokens : Math.min(config.keepRecentTokens, Math.floor(usable / 2)));
    }
  } else if (config.tailBudget) {
    const { minTokens, maxTokens, usableRatio } = config.tailBudget;
    budgets.push(usable === null ? maxTokens : Math.min(maxTokens, Math.max(minTokens, Math.floor(usable * usableRatio))));
  }
  if (config.targetRatio !== null && usable !== null) {
    budgets.push(Math.max(0, Math.floor(usable * config.targetRatio) - config.summaryMaxTokens));
  }
  return Math.min(Number.POSITIVE_INFINITY, ...budgets);
}

/** Index of the earliest message the tail may start at, or null when the strategy keeps no tail. */
function tailFloor(eligible: readonly WindowMessage[], config: CompactionConfig): number | null {
  if (config.strategy === 'recent-tokens') {
    if (config.keepRecentTokens > 0) return 0;
    return config.keepRecentMessages > 0 ? Math.max(0, eligible.length - config.keepRecentMessages) : null;
  }
  if (config.retainLastTurns === 0) return null;
  const starts = eligible.flatMap((item, index) => (isTurnStart(item) ? [index] : []));
  return starts.length === 0 ? null : starts[Math.max(0, starts.length - config.retainLastTurns)];
}

/**
 * Chooses the cut. Only messages up to the marker are eligible, and the cut
 * is settled (no call before it answered after it, none in flight). The tail
 * is the strategy's last turns (or recent messages) from the earliest settled
 * start whose suffix fits the budget, as OpenCode splits a turn that does not
 * fit whole; no fitting start, or a tail that would be everything, means
 * summarizing everything settled instead.
 */
export function planCompaction(input: PlanInput): CompactionPlan | NothingToCompact {
  const { pivot, markerSeq, config, usable } = input;
  const base = pivot?.coveredThroughSeq ?? 0;
  // What a rewind took out of the view is neither summarized nor kept.
  const events = withoutRewound(input.events.filter((event) => event.seq > base));
  const { messages: items, lastInterruptionSeq } = compactionWindow(events);
  const eligible = items.filter((item) => item.seq <= markerSeq);
  if (eligible.length === 0) return { kind: 'nothing', markerSeq, reason: 'empty_window' };
  const settled = settledCutChecker(items, lastInterruptionSeq);

  const budget = tailBudgetTokens(config, usable);
  const floor = tailFloor(eligible, config);
  let start: number | null = null;
  if (floor !== null) {
    let suffix = sumTokens(eligible.slice(floor));
    for (let p = floor; p < eligible.length; suffix -= eligible[p].tokens, p++) {
      if (suffix <= budget && (p === 0 || settled(eligible[p].seq - 1))) {
        start = p;
        break;
      }
    }
  }
  const summarizeAll = floor !== null && (start === null || start === 0);
  if (start === 0) start = null;

  let cut: number | null = start !== null ? eligible[start].seq - 1 : null;
  if (cut === null && settled(markerSeq)) cut = markerSeq;
  for (let p = eligible.length - 1; cut === null && p >= 1; p--) {
    if (settled(eligible[p].seq - 1)) cut = eligible[p].seq - 1;
  }
  if (cut === null) return { kind: 'nothing', markerSeq, reason: 'no_settled_cut' };

  const coveredThroughSeq = cut;
  const head = eligible.filter((item) => item.seq <= coveredThroughSeq);
  const kept = items.filter((item) => item.seq > coveredThroughSeq);
  const tail = kept.filter((item) => item.seq <= markerSeq);
  const previousPrefix = pivot?.prefix ?? [];
  const sourceHead = events.flatMap((event) =>
    event.type === 'message.added' && event.seq <= coveredThroughSeq && event.data.message.metadata?.agentVisible !== false
      ? [event.data.message]
      : [],
  );
  return {
    kind: 'plan',
    markerSeq,
    basePivotMarkerSeq: pivot?.markerSeq ?? null,
    coveredThroughSeq,
    head,
    tail: {
      fromSeq: tail[0]?.seq ?? null,
      turns: tail.filter(isTurnStart).length,
      messages: tail.length,
      tokens: sumTokens(tail),
      budget: Number.isFinite(budget) ? budget : null,
      summarizeAll,
    },
    messagesCompacted: head.length,
    coveredTokens: approxMessagesTokens(previousPrefix) + sumTokens(head),
    summaryBudgetTokens: summaryBudgetTokens(config, usable),
    keptTokens: sumTokens(kept),
    previousSummary: pivot?.summary.trim() || null,
    previousPrefix,
    previousRecord: parseSummaryRecord(pivot?.record),
    sourceHead,
    keptMessages: kept.map((item) => item.message),
    pins: foldPins(pivot?.pins ?? [], events),
    pinsAtCut: foldPins(pivot?.pins ?? [], events.filter((event) => event.seq <= coveredThroughSeq)),
  };
}
