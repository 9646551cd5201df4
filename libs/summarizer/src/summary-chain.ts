import { setTimeout as sleep } from 'node:timers/promises';
import {
  buildCompletedData,
  buildKeepLastTurnsFallback,
  buildSummarizerRequest,
  checkRetention,
  CompactionCompletion,
  CompactionConfig,
  CompactionPlan,
  CompactionReason,
  decideAfterFailure,
  exceedsTarget,
  HeuristicResult,
  KEEP_LAST_TURNS,
  Message,
  NewEvent,
  parseSummaryResponse,
  prefixWithRetention,
  SummaryFailureKind,
  SummarySource,
  summarySources,
  summarizeHeuristically,
  textsAfterPivot,
  ToolOutputs,
  trimSummarizerInputForOverflow,
} from '@app/domain';
import { HeuristicRequestExtras } from './heuristic.summarizer';
import { Summarizer, SummarizerError, SummarizerLookup, SummaryRequest } from './summarizer';

export interface SummaryChainInput {
  plan: CompactionPlan;
  marker: { seq: number; auto: boolean; reason: CompactionReason; instructions?: string | null };
  config: CompactionConfig;
  session: { model: string; system: string | null };
  /** The session's token figure when planned (the view's estimate). */
  tokensBefore: number;
  /** What the provider counts beyond the view's estimate, learnt on the view being compacted (ViewTokens.overhead). */
  overhead?: number;
  /** Usable tokens of the session's window (evaluateOverflow); null = unlimited. */
  usable: number | null;
  /** Aborts the whole chain (worker shutdown, job cancelled): the chain rethrows instead of falling back. */
  signal?: AbortSignal;
  /**
   * Full tool outputs of the window (the head and the kept messages) from the
   * tool-output cache, by call id (or output ref id): whole texts, or digests
   * streamed with ToolOutputScanner. Results without an entry are read from
   * their stored message. The kept results' hidden errors are carried forward.
   */
  outputs?: ToolOutputs;
}

export interface SummaryChainResult {
  completion: CompactionCompletion;
  /** One per failed try, with the step taken (retry, trim, the next source). */
  failures: NewEvent<'compaction.failed'>[];
}

export interface SummaryChainSettings {
  /** Upper bound of one call; a session's compaction.timeoutMs can only lower it. */
  timeoutMs: number;
  /** Backoff before retrying the same summarizer, doubled per retry. */
  retryBackoffMs: number;
}

type Attempt = { ok: true; summary: string; retain: string | null; model: string } | { ok: false; kind: SummaryFailureKind; message: string; retryable: boolean };

/** Whether the summary should come with a `<retain>` block (seed 000's strategy, or retain settings given). */
const wantsRetain = (config: CompactionConfig) =>
  config.strategy === 'retain-summary' || config.retainPrompt !== null || config.retainDirectives.length > 0;

/**
 * The summary of a plan's head, with the fallback chain of DESIGN.md section
 * 6: the configured LLM (retried with backoff on errors and timeouts, its
 * head trimmed oldest-first when its own input overflows), then the
 * heuristic summary, then keep-last-turns, which cannot fail. Each failed try
 * becomes a compaction.failed event; nothing here writes anything.
 */
export class SummaryChain {
  constructor(
    private readonly summarizers: SummarizerLookup,
    private readonly settings: SummaryChainSettings,
  ) {}

  async run(input: SummaryChainInput): Promise<SummaryChainResult> {
    const started = performance.now();
    const { plan, config, marker } = input;
    // The record and the head's critical facts, whatever summarizer answers: read once, from the head as written.
    const heuristic = summarizeHeuristically({
      head: plan.sourceHead,
      previous: plan.previousRecord,
      previousSummary: plan.previousSummary,
      outputs: input.outputs,
      budgetTokens: plan.summaryBudgetTokens,
      strategy: config.strategy,
      retain: wantsRetain(config),
      instructions: marker.instructions,
      todoTools: config.todoTools,
    });
    const fullHead = plan.head.map((item) => item.message);
    const failures: NewEvent<'compaction.failed'>[] = [];
    let source: SummarySource = summarySources(config)[0];
    let head: Message[] = fullHead;
    let trimmed = 0;
    let attempt = 0;
    let sourceAttempt = 0;
    for (;;) {
      attempt++;
      sourceAttempt++;
      const result = await this.attempt(source, input, source === 'llm' ? head : fullHead, heuristic);
      let failure: { kind: SummaryFailureKind; message: string };
      if (result.ok) {
        const completion = this.complete(input, source, result, heuristic, performance.now() - started);
        if (source === KEEP_LAST_TURNS || !exceedsTarget(completion, config, input.usable)) return { completion, failures };
        failure = {
          kind: 'over_target',
          message: `the context after compaction would be ${completion.tokensAfter} tokens, above ${config.targetRatio} of the ${input.usable} usable`,
        };
      } else {
        failure = { kind: result.kind, message: result.message };
      }
      // Doubling the trimmed count keeps the number of calls logarithmic in the head's length.
      const nextTrim = trimmed === 0 ? 1 : trimmed * 2;
      const decision = decideAfterFailure({
        markerSeq: marker.seq,
        attempt,
        source,
        // A failure that cannot heal (a refused key, an unconfigured provider) moves on at once.
        sourceAttempt: !result.ok && !result.retryable ? config.maxAttempts : sourceAttempt,
        failure,
        config,
        canTrim: trimSummarizerInputForOverflow(fullHead, nextTrim).head.length > 0,
      });
      failures.push(decision.event);
      const next = decision.next ?? { source: KEEP_LAST_TURNS, trimHead: false };
      if (next.trimHead) {
        trimmed = nextTrim;
        head = trimSummarizerInputForOverflow(fullHead, trimmed).head;
      } else if (next.source === source) {
        await sleep(this.settings.retryBackoffMs * 2 ** (sourceAttempt - 1), undefined, { signal: input.signal });
      }
      if (next.source !== source) sourceAttempt = 0;
      source = next.source;
    }
  }

  private async attempt(source: SummarySource, input: SummaryChainInput, head: readonly Message[], heuristic: HeuristicResult): Promise<Attempt> {
    if (source === KEEP_LAST_TURNS) return { ok: true, summary: input.plan.previousSummary ?? '', retain: null, model: 'none' };
    const { config, plan, marker } = input;
    const summarizer = source === 'llm' ? this.summarizers.get(config.summarizer) : this.summarizers.heuristic;
    if (!summarizer) {
      return { ok: false, kind: 'error', message: `the ${config.summarizer} summarizer is not configured on this server`, retryable: false };
    }
    const request: SummaryRequest & HeuristicRequestExtras = {
      prompt: buildSummarizerRequest({
        head,
        previousSummary: plan.previousSummary,
        previousRecord: plan.previousRecord,
        pins: plan.pins,
        config,
        instructions: marker.instructions,
        sessionSystem: input.session.system,
        outputs: input.outputs,
      }),
      head,
      previousSummary: plan.previousSummary,
      instructions: marker.instructions ?? null,
      retain: wantsRetain(config),
      maxTokens: config.summaryMaxTokens,
      precomputed: heuristic,
    };
    const model = summarizer === this.summarizers.heuristic ? 'heuristic' : (config.model ?? input.session.model);
    const timeoutMs = Math.min(config.timeoutMs, this.settings.timeoutMs);
    let text: string;
    try {
      text = await this.call(summarizer, request, model, timeoutMs, input.signal);
    } catch (error) {
      if (input.signal?.aborted) throw error;
      if (error instanceof SummarizerError) {
        // Only the call's own timeout aborts it here: the chain's signal was checked above.
        if (error.kind === 'aborted') return { ok: false, kind: 'timeout', message: `no answer within ${timeoutMs} ms`, retryable: true };
        return { ok: false, kind: error.kind === 'input_overflow' ? 'input_overflow' : 'error', message: error.message, retryable: error.retryable };
      }
      return { ok: false, kind: 'error', message: error instanceof Error ? error.message : String(error), retryable: true };
    }
    const parsed = parseSummaryResponse(text, config.summaryMaxTokens);
    if (!parsed.ok) return { ok: false, kind: parsed.error.code, message: parsed.error.message, retryable: false };
    return { ok: true, summary: parsed.value.summary, retain: parsed.value.retain, model };
  }

  /** One call under its own timeout and the chain's signal; a timeout surfaces as an aborted SummarizerError. */
  private async call(summarizer: Summarizer, request: SummaryRequest, model: string, timeoutMs: number, outer?: AbortSignal): Promise<string> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = outer ? AbortSignal.any([timeout, outer]) : timeout;
    const reply = summarizer.summarize(request, { model, signal });
    // A summarizer that ignores its signal still loses the race; its late outcome is dropped.
    const aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(new SummarizerError('aborted', 'the summarizer call was aborted', true));
      if (signal.aborted) fail();
      else signal.addEventListener('abort', fail, { once: true });
    });
    reply.catch(() => undefined);
    aborted.catch(() => undefined);
    return Promise.race([reply, aborted]);
  }

  /**
   * The completion: the summary after the retention check (missing critical
   * facts carried forward within the budget) and the record to carry. The
   * keep-last-turns fallback keeps the previous prefix and record as they
   * were; its retention figure says what that loses.
   */
  private complete(
    input: SummaryChainInput,
    source: SummarySource,
    result: Extract<Attempt, { ok: true }>,
    heuristic: HeuristicResult,
    durationMs: number,
  ): CompactionCompletion {
    const { plan, config, marker } = input;
    const common = { marker, plan, model: result.model, retain: result.retain, durationMs: Math.round(durationMs), tokensBefore: input.tokensBefore, overhead: input.overhead };
    if (source === KEEP_LAST_TURNS) {
      const prefix = buildKeepLastTurnsFallback(plan);
      const { retention } = checkRetention({
        facts: heuristic.facts,
        summary: '',
        kept: textsAfterPivot(plan, prefix),
        budgetTokens: 0,
      });
      return buildCompletedData({ ...common, strategy: KEEP_LAST_TURNS, prefix, summary: result.summary, record: plan.previousRecord, retention });
    }
    const checked = prefixWithRetention({ plan, summary: result.summary, retain: result.retain, config, facts: heuristic.facts, outputs: input.outputs });
    return buildCompletedData({
      ...common,
      strategy: config.strategy,
      prefix: checked.prefix,
      summary: checked.summary,
      record: heuristic.record,
      retention: checked.retention,
      evicted: heuristic.evictedItems,
    });
  }
}
