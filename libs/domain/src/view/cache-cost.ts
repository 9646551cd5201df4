/**
 * What each rewrite of the context cost in prompt cache, measured from the
 * usage the steps report (docs/compaction.md "What a rewrite cost").
 *
 * A fold over a slim trace of the log (CacheTraceEvent: the steps' usage, the
 * messages' token estimates and tool call ids, the rewrites' figures), in seq
 * order. Prices are Anthropic's, in units of an uncached input token:
 * a cache write 1.25, a cache read 0.1.
 *
 * - cachedPrefixTokens: the last step before the rewrite's
 *   cache_read_tokens + cache_creation_tokens, what the provider held cached
 *   when the rewrite landed (null without such a step).
 * - invalidatedTokens: the part of it from the rewrite's first changed
 *   position on. A compaction replaces everything after the system prompt:
 *   the whole cached prefix. A prune changes the earliest pruned result (its
 *   call too with clearInputs), an archive the earliest archived call: the
 *   logged estimates of the messages from that one up to the step, capped at
 *   the cached prefix; the whole cached prefix when the message is not found.
 * - removedTokens: compaction tokensBefore - tokensAfter; prune tokensFreed;
 *   archive its tokensFreed when present, else the estimates of the archived
 *   results' messages minus the digest's (its text, chars / 4).
 * - rewriteCost: what the next step pays extra, the invalidated tokens that
 *   remain written again at 1.25 instead of read at 0.1:
 *   max(0, invalidated - removed) x 1.15.
 * - savingPerStep: every later step no longer reads the removed tokens:
 *   removed x 0.1.
 * - breakEvenSteps: ceil(rewriteCost / savingPerStep) (null when nothing was
 *   removed); repaidAfterSteps: that number once as many steps followed the
 *   rewrite, else null. Steps are counted up to the next compaction (which
 *   replaces what an earlier rewrite removed).
 * - hitRatio: sum of cache_read over sum of prompt tokens (input + cache
 *   read + cache creation) of every step; hitRatioSinceRewrite: the same over
 *   the steps after the latest rewrite. Null without prompt tokens.
 */
import type { StoredEvent, Usage } from '../events';
import { tokensOfChars } from '../tokens';

/** Prices relative to an uncached input token (Anthropic's). */
export const CACHE_PRICES = { uncached: 1, cacheWrite: 1.25, cacheRead: 0.1 } as const;

export type RewriteKind = 'compaction' | 'prune' | 'archive';

/** One event of the log as the fold needs it. */
export type CacheTraceEvent =
  | { seq: number; type: 'step.finished'; usage: Usage; contextSeq?: number }
  /** A message: its token estimate, and the call ids of its tool_call and tool_result parts. */
  | { seq: number; type: 'message.added'; tokens: number; calls: readonly string[]; results: readonly string[] }
  | { seq: number; type: 'compaction.completed'; tokensBefore: number; tokensAfter: number }
  | { seq: number; type: 'tool_outputs.pruned'; callIds: readonly string[]; tokensFreed: number; clearInputs?: boolean }
  | { seq: number; type: 'tool_results.archived'; callIds: readonly string[]; tokensFreed?: number; digestTokens: number };

export interface RewriteCacheCost {
  seq: number;
  kind: RewriteKind;
  cachedPrefixTokens: number | null;
  invalidatedTokens: number | null;
  removedTokens: number;
  rewriteCost: number | null;
  savingPerStep: number;
  breakEvenSteps: number | null;
  stepsSince: number;
  repaidAfterSteps: number | null;
}

export interface CacheRatios {
  hitRatio: number | null;
  hitRatioSinceRewrite: number | null;
  steps: number;
  stepsSinceRewrite: number;
  lastRewriteSeq: number | null;
}

export interface CacheReport extends CacheRatios {
  rewrites: RewriteCacheCost[];
}

const promptTokens = (usage: Usage) => usage.input_tokens + (usage.cache_read_tokens ?? 0) + (usage.cache_creation_tokens ?? 0);
const cachedTokens = (usage: Usage) => (usage.cache_read_tokens ?? 0) + (usage.cache_creation_tokens ?? 0);
const ratio = (read: number, prompt: number) => (prompt > 0 ? Math.round((read / prompt) * 10_000) / 10_000 : null);
// Integer arithmetic in hundredths of a token: (write - read) = 115, read = 10.
const EXTRA_WRITE_CENTS = Math.round((CACHE_PRICES.cacheWrite - CACHE_PRICES.cacheRead) * 100);
const READ_CENTS = Math.round(CACHE_PRICES.cacheRead * 100);

/**
 * What a rewrite that invalidates `invalidated` cached tokens and removes
 * `removed` of them costs once and saves per later step (the price model
 * above); null figures when nothing is known of the cache. The rule that
 * lets prune and archive rewrite (rewrite-policy.ts) prices a planned
 * rewrite with it too.
 */
export function rewritePrice(
  invalidated: number | null,
  removed: number,
): Pick<RewriteCacheCost, 'rewriteCost' | 'savingPerStep' | 'breakEvenSteps'> {
  const costCents = invalidated === null ? null : Math.max(0, invalidated - removed) * EXTRA_WRITE_CENTS;
  const savingCents = removed * READ_CENTS;
  return {
    rewriteCost: costCents === null ? null : costCents / 100,
    savingPerStep: savingCents / 100,
    breakEvenSteps: costCents === null || savingCents === 0 ? null : Math.ceil(costCents / savingCents),
  };
}

interface Open {
  report: RewriteCacheCost;
}

/** The fold: every rewrite's figures and the session's hit ratios. Events in seq order. */
export function cacheReport(trace: Iterable<CacheTraceEvent>): CacheReport {
  const messages: Array<{ seq: number; tokens: number }> = [];
  const callSeq = new Map<string, number>();
  const resultSeq = new Map<string, number>();
  const resultTokens = new Map<string, { seq: number; tokens: number }>();
  const rewrites: RewriteCacheCost[] = [];
  let open: Open[] = [];
  let lastStep: { seq: number; usage: Usage; contextSeq?: number } | null = null;
  let read = 0;
  let prompt = 0;
  let steps = 0;
  let readSince = 0;
  let promptSince = 0;
  let stepsSince = 0;
  let lastRewriteSeq: number | null = null;

  const tokensFrom = (fromSeq: number, step: { seq: number; contextSeq?: number }) => {
    const through = Math.min(step.contextSeq ?? step.seq - 1, step.seq - 1);
    return messages.reduce((sum, m) => (m.seq >= fromSeq && m.seq <= through ? sum + m.tokens : sum), 0);
  };

  const rewrite = (seq: number, kind: RewriteKind, removed: number, firstChanged: number | null) => {
    const cachedPrefix = lastStep ? cachedTokens(lastStep.usage) : null;
    let invalidated: number | null = null;
    if (cachedPrefix !== null && lastStep) {
      invalidated = kind === 'compaction' || firstChanged === null ? cachedPrefix : Math.min(cachedPrefix, tokensFrom(firstChanged, lastStep));
    }
    const removedTokens = Math.max(0, removed);
    const priced = rewritePrice(invalidated, removedTokens);
    const report: RewriteCacheCost = {
      seq,
      kind,
      cachedPrefixTokens: cachedPrefix,
      invalidatedTokens: invalidated,
      removedTokens,
      ...priced,
      stepsSince: 0,
      repaidAfterSteps: priced.breakEvenSteps === 0 ? 0 : null,
    };
    rewrites.push(report);
    // A compaction replaces what every earlier rewrite removed: their counts stop here.
    if (kind === 'compaction') open = [];
    open.push({ report });
    lastRewriteSeq = seq;
    readSince = 0;
    promptSince = 0;
    stepsSince = 0;
  };

  const earliest = (ids: readonly string[], map: Map<string, number>, also?: Map<string, number>) => {
    let min: number | null = null;
    for (const id of ids) {
      for (const seq of [map.get(id), also?.get(id)]) if (seq !== undefined && (min === null || seq < min)) min = seq;
    }
    return min;
  };

  for (const event of trace) {
    switch (event.type) {
      case 'message.added':
        messages.push({ seq: event.seq, tokens: event.tokens });
        for (const id of event.calls) if (!callSeq.has(id)) callSeq.set(id, event.seq);
        for (const id of event.results) {
          if (!resultSeq.has(id)) resultSeq.set(id, event.seq);
          resultTokens.set(id, { seq: event.seq, tokens: event.tokens });
        }
        break;
      case 'step.finished': {
        const usage = event.usage;
        steps += 1;
        stepsSince += 1;
        read += usage.cache_read_tokens ?? 0;
        readSince += usage.cache_read_tokens ?? 0;
        prompt += promptTokens(usage);
        promptSince += promptTokens(usage);
        lastStep = event;
        for (const { report } of open) {
          report.stepsSince += 1;
          if (report.repaidAfterSteps === null && report.breakEvenSteps !== null && report.stepsSince >= report.breakEvenSteps) {
            report.repaidAfterSteps = report.breakEvenSteps;
          }
        }
        break;
      }
      case 'compaction.completed':
        rewrite(event.seq, 'compaction', event.tokensBefore - event.tokensAfter, null);
        break;
      case 'tool_outputs.pruned':
        rewrite(event.seq, 'prune', event.tokensFreed, earliest(event.callIds, resultSeq, event.clearInputs ? callSeq : undefined));
        break;
      case 'tool_results.archived': {
        const removed =
          event.tokensFreed ??
          [...new Map(event.callIds.flatMap((id) => (resultTokens.has(id) ? [resultTokens.get(id)!] : [])).map((m) => [m.seq, m.tokens])).values()].reduce(
            (sum, tokens) => sum + tokens,
            0,
          ) - event.digestTokens;
        rewrite(event.seq, 'archive', removed, earliest(event.callIds, callSeq, resultSeq));
        break;
      }
    }
  }
  return {
    hitRatio: ratio(read, prompt),
    hitRatioSinceRewrite: lastRewriteSeq === null ? ratio(read, prompt) : ratio(readSince, promptSince),
    steps,
    stepsSinceRewrite: lastRewriteSeq === null ? steps : stepsSince,
    lastRewriteSeq,
    rewrites,
  };
}

/** A stored event's trace entry (null for the types the fold ignores); what the store's own reader builds in SQL. */
export function cacheTraceOf(event: StoredEvent): CacheTraceEvent | null {
  switch (event.type) {
    case 'step.finished':
      return { seq: event.seq, type: event.type, usage: event.data.usage, ...(event.data.contextSeq !== undefined ? { contextSeq: event.data.contextSeq } : {}) };
    case 'message.added': {
      const parts = event.data.message.parts;
      return {
        seq: event.seq,
        type: event.type,
        tokens: event.tokens,
        calls: parts.flatMap((part) => (part.type === 'tool_call' ? [part.callId] : [])),
        results: parts.flatMap((part) => (part.type === 'tool_result' ? [part.callId] : [])),
      };
    }
    case 'compaction.completed':
      return { seq: event.seq, type: event.type, tokensBefore: event.data.tokensBefore, tokensAfter: event.data.tokensAfter };
    case 'tool_outputs.pruned':
      return { seq: event.seq, type: event.type, callIds: event.data.callIds, tokensFreed: event.data.tokensFreed, clearInputs: event.data.clearInputs === true };
    case 'tool_results.archived': {
      const freed = event.data.tokensFreed;
      return {
        seq: event.seq,
        type: event.type,
        callIds: event.data.callIds,
        ...(typeof freed === 'number' ? { tokensFreed: freed } : {}),
        digestTokens: tokensOfChars((event.data.digest?.parts ?? []).reduce((sum, part) => sum + ('text' in part ? part.text.length : 0), 0)),
      };
    }
    default:
      return null;
  }
}

/**
 * What the rewrites just committed (`committed`, with their seqs) cost,
 * measured on the log before them: the window they were planned on is
 * enough, since a prune or archive changes nothing before the pivot and the
 * figures need only the last step before them (null when no step since).
 */
export function costsOfCommitted(before: readonly StoredEvent[], committed: ReadonlyArray<{ seq: number; event: { type: string; data: unknown } }>): RewriteCacheCost[] {
  const stored = committed.map(({ seq, event }) => ({ ...event, seq, id: '', createdAt: new Date(0), tokens: 0 }) as StoredEvent);
  const trace = [...before, ...stored].flatMap((event) => cacheTraceOf(event) ?? []);
  const seqs = new Set(committed.map(({ seq }) => seq));
  return cacheReport(trace).rewrites.filter((rewrite) => seqs.has(rewrite.seq));
}

/**
 * The hit ratios the session state shows, from the window it reads anyway
 * (no scan of the log): over the steps after the pivot (`sinceSeq`, 0
 * without one), and since the latest rewrite. The whole session's ratio is
 * on GET /compactions, which scans the log (readCacheTrace).
 */
export function windowCacheRatios(pivotSeq: number | null, events: readonly StoredEvent[]): CacheRatios & { sinceSeq: number } {
  const sinceSeq = pivotSeq ?? 0;
  const { rewrites: _rewrites, ...ratios } = cacheReport(events.flatMap((event) => (event.seq >= sinceSeq ? (cacheTraceOf(event) ?? []) : [])));
  return { ...ratios, sinceSeq };
}
