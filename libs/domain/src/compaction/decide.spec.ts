import { givenEvents } from '../testing/given';
import { CompactionConfig, PRESETS } from '../config';
import type { StoredEvent } from '../events';
import { AUTO_CONTINUE_TEXT } from '../placeholders';
import {
  buildCompletedData,
  CompactionCompletion,
  CompletionInput,
  decideAfterFailure,
  decideCompletion,
  deriveCompactionState,
  evolveCompactionFacts,
  exceedsTarget,
  FailureInput,
  INITIAL_COMPACTION_FACTS,
  nothingToCompactEvent,
  summarySources,
} from './decide';
import { CompactionPlan, planCompaction } from './plan';
import { eventLog } from './testing/event-log';

const config = (patch: Partial<CompactionConfig> = {}): CompactionConfig => ({ ...PRESETS.opencode.compaction, ...patch });

function planned(): CompactionPlan {
  const log = eventLog();
  log.user('a'.repeat(400)).assistant('b'.repeat(400)).user('c'.repeat(40)).assistant('d'.repeat(40)).user('e').assistant('f');
  const markerSeq = log.marker();
  const plan = planCompaction({ events: log.events, pivot: null, markerSeq, config: config(), usable: 180_000 });
  if (plan.kind !== 'plan') throw new Error(plan.reason);
  return plan;
}

const completionInput = (): CompletionInput => ({
  marker: { seq: 7, auto: true, reason: 'threshold' },
  plan: planned(),
  strategy: 'summary-tail',
  prefix: [{ id: 'p', role: 'assistant', parts: [{ type: 'text', text: 'x'.repeat(40) }] }],
  summary: 'x'.repeat(40),
  retain: null,
  model: 'heuristic',
  durationMs: 12,
});

const completion = (patch: Partial<CompactionCompletion> = {}): CompactionCompletion => ({ ...buildCompletedData(completionInput()), ...patch });

describe('buildCompletedData', () => {
  it('records the cut, the prefix and the token figures before and after', () => {
    const plan = planned();
    expect(plan).toMatchObject({ coveredThroughSeq: 2, coveredTokens: 200, keptTokens: 22 });
    const data = completion();
    expect(data).toMatchObject({
      markerSeq: 7,
      coveredThroughSeq: 2,
      strategy: 'summary-tail',
      model: 'heuristic',
      tokensBefore: 222,
      tokensAfter: 22 + 10,
      messagesCompacted: 2,
      durationMs: 12,
      auto: true,
      reason: 'threshold',
      basePivotMarkerSeq: null,
      tail: { fromSeq: 3, turns: 2 },
    });
    expect(data).not.toHaveProperty('retain');
  });

  it("starts from the session's own figure when given", () => {
    const data = buildCompletedData({
      marker: { seq: 7, auto: false, reason: 'manual' },
      plan: planned(),
      strategy: 'keep-last-turns',
      prefix: [],
      summary: '',
      retain: 'R',
      model: 'heuristic',
      durationMs: 0,
      tokensBefore: 10_000,
    });
    expect(data).toMatchObject({ tokensBefore: 10_000, tokensAfter: 9_800, retain: 'R' });
  });

  it('carries a bounded receipt of what left the record at this compaction, and nothing when nothing did', () => {
    // given 80 evicted items, one of them very long
    const evicted = Array.from({ length: 80 }, (_, i) => ({ section: 'values' as const, text: i === 0 ? 'v'.repeat(500) : `value-${i}` }));
    // when
    const data = buildCompletedData({ ...completionInput(), evicted });
    // then the first 50 are listed, each text clipped to 200 characters
    expect(data.evicted).toHaveLength(50);
    expect(data.evicted![0]).toEqual({ section: 'values', text: `${'v'.repeat(199)}…` });
    expect(data.evicted![49]).toEqual({ section: 'values', text: 'value-49' });
    expect(buildCompletedData({ ...completionInput(), evicted: [] })).not.toHaveProperty('evicted');
    expect(completion()).not.toHaveProperty('evicted');
  });
});

describe('exceedsTarget (seed 003)', () => {
  it('is true only above targetRatio of usable', () => {
    const target = config({ targetRatio: 0.5 });
    expect(exceedsTarget(completion({ tokensAfter: 501 }), target, 1_000)).toBe(true);
    expect(exceedsTarget(completion({ tokensAfter: 500 }), target, 1_000)).toBe(false);
    expect(exceedsTarget(completion({ tokensAfter: 501 }), config(), 1_000)).toBe(false);
    expect(exceedsTarget(completion({ tokensAfter: 501 }), target, null)).toBe(false);
  });

  it("leaves the provider's overhead out: tool definitions no summary can shrink do not force the fallback", () => {
    const target = config({ targetRatio: 0.5 });
    expect(exceedsTarget(completion({ tokensAfter: 800, overhead: 300 }), target, 1_000)).toBe(false);
    expect(exceedsTarget(completion({ tokensAfter: 801, overhead: 300 }), target, 1_000)).toBe(true);
  });
});

describe('decideCompletion', () => {
  it('commits a fresh result, with the auto-continue message after an automatic compaction', () => {
    const data = completion();
    expect(decideCompletion({ latestCompletedMarkerSeq: null }, data, config())).toEqual([
      { id: 'cmp-7-completed', type: 'compaction.completed', data },
      {
        id: 'cmp-7-continue',
        type: 'message.added',
        data: {
          message: {
            id: 'cmp-7-continue',
            role: 'user',
            parts: [{ type: 'text', text: AUTO_CONTINUE_TEXT }],
            metadata: { userVisible: false, kind: 'auto_continue' },
          },
        },
      },
    ]);
  });

  it('adds no auto-continue after a manual compaction or when the config says no', () => {
    expect(decideCompletion({ latestCompletedMarkerSeq: null }, completion({ auto: false }), config())).toHaveLength(1);
    expect(decideCompletion({ latestCompletedMarkerSeq: null }, completion(), config({ autoContinue: false }))).toHaveLength(1);
  });

  it('discards a duplicate (retry, double run) and a superseded marker', () => {
    expect(decideCompletion({ latestCompletedMarkerSeq: 7 }, completion(), config())).toEqual([]);
    expect(decideCompletion({ latestCompletedMarkerSeq: 9 }, completion(), config())).toEqual([]);
  });

  it('discards a result planned on a pivot that is no longer the latest', () => {
    expect(decideCompletion({ latestCompletedMarkerSeq: 3 }, completion(), config())).toEqual([]);
    expect(decideCompletion({ latestCompletedMarkerSeq: 3 }, completion({ basePivotMarkerSeq: 3 }), config())).toHaveLength(2);
  });
});

describe('fallback chain', () => {
  const failure = (patch: Partial<FailureInput>): FailureInput => ({
    markerSeq: 7,
    attempt: 1,
    source: 'llm',
    sourceAttempt: 1,
    failure: { kind: 'error', message: 'HTTP 500' },
    config: config({ summarizer: 'openai', maxAttempts: 3 }),
    canTrim: true,
    ...patch,
  });

  it('goes LLM → heuristic → keep-last-turns, or starts at the heuristic', () => {
    expect(summarySources(config({ summarizer: 'anthropic' }))).toEqual(['llm', 'heuristic', 'keep-last-turns']);
    expect(summarySources(config())).toEqual(['heuristic', 'keep-last-turns']);
  });

  it('retries errors and timeouts up to maxAttempts, then falls back', () => {
    expect(decideAfterFailure(failure({}))).toEqual({
      event: {
        id: 'cmp-7-failed-1',
        type: 'compaction.failed',
        data: { markerSeq: 7, attempt: 1, error: 'error: HTTP 500', fallback: 'retry' },
      },
      next: { source: 'llm', trimHead: false },
    });
    const third = decideAfterFailure(failure({ attempt: 3, sourceAttempt: 3, failure: { kind: 'timeout', message: 'after 120000 ms' } }));
    expect(third.event.data).toEqual({ markerSeq: 7, attempt: 3, error: 'timeout: after 120000 ms', fallback: 'heuristic' });
    expect(third.next).toEqual({ source: 'heuristic', trimHead: false });
  });

  it('falls back at once on an empty or oversized summary', () => {
    expect(decideAfterFailure(failure({ failure: { kind: 'oversized', message: 'too big' } })).next).toEqual({
      source: 'heuristic',
      trimHead: false,
    });
    expect(decideAfterFailure(failure({ source: 'heuristic', failure: { kind: 'empty', message: '' } })).next).toEqual({
      source: 'keep-last-turns',
      trimHead: false,
    });
  });

  it('trims the head while the summarizer input overflows, and falls back when nothing is left', () => {
    const trim = decideAfterFailure(failure({ failure: { kind: 'input_overflow', message: 'context_length_exceeded' } }));
    expect(trim).toMatchObject({ event: { data: { fallback: 'trim' } }, next: { source: 'llm', trimHead: true } });
    const spent = decideAfterFailure(failure({ canTrim: false, failure: { kind: 'input_overflow', message: 'still too long' } }));
    expect(spent.next).toEqual({ source: 'heuristic', trimHead: false });
  });

  it('gives up after the last fallback', () => {
    const last = decideAfterFailure(failure({ source: 'keep-last-turns', failure: { kind: 'over_target', message: 'x' } }));
    expect(last).toMatchObject({ event: { data: { fallback: 'none' } }, next: null });
  });

  it('closes a marker with nothing to compact', () => {
    expect(nothingToCompactEvent({ kind: 'nothing', markerSeq: 4, reason: 'empty_window' })).toEqual({
      id: 'cmp-4-skipped',
      type: 'compaction.failed',
      data: { markerSeq: 4, attempt: 0, error: 'nothing_to_compact: empty_window', fallback: 'skipped' },
    });
  });
});

describe('deriveCompactionState', () => {
  const fold = (events: readonly StoredEvent[]) => events.reduce(evolveCompactionFacts, INITIAL_COMPACTION_FACTS);
  const state = (events: readonly StoredEvent[], runningMarkerSeq: number | null = null) =>
    deriveCompactionState(fold(events), { runningMarkerSeq, loopGuardRatio: 0.95 });

  it('is idle with no marker, pending with one, running while the worker holds it', () => {
    const log = eventLog();
    log.user('hi');
    givenEvents(INITIAL_COMPACTION_FACTS, evolveCompactionFacts, log.events)
      .when((facts) => deriveCompactionState(facts, { runningMarkerSeq: null, loopGuardRatio: 0.95 }))
      .then({ state: 'idle', lastError: null, pendingMarkerSeq: null, suppressedReason: null });
    const marker = log.marker();
    expect(state(log.events)).toMatchObject({ state: 'pending', pendingMarkerSeq: marker });
    expect(state(log.events, marker)).toMatchObject({ state: 'running', pendingMarkerSeq: marker });
    // A lease on an older marker (a run that lost its marker to a newer one) is not this one running.
    expect(state(log.events, marker - 1)).toMatchObject({ state: 'pending', pendingMarkerSeq: marker });
  });

  it('stays pending through fallbacks, fails when given up, and a new marker starts clean', () => {
    const log = eventLog();
    const marker = log.marker();
    log.append('compaction.failed', { markerSeq: marker, attempt: 1, error: 'timeout: slow', fallback: 'heuristic' });
    expect(state(log.events)).toMatchObject({ state: 'pending', lastError: 'timeout: slow' });
    log.append('compaction.failed', { markerSeq: marker, attempt: 2, error: 'empty: nothing', fallback: 'none' });
    expect(state(log.events, marker)).toEqual({ state: 'failed', lastError: 'empty: nothing', pendingMarkerSeq: null, suppressedReason: null });
    const next = log.marker(false, 'manual');
    expect(state(log.events)).toMatchObject({ state: 'pending', lastError: null, pendingMarkerSeq: next });
  });

  it('returns to idle with the reason when there was nothing to compact, or once completed', () => {
    const log = eventLog();
    const marker = log.marker();
    log.append('compaction.failed', nothingToCompactEvent({ kind: 'nothing', markerSeq: marker, reason: 'empty_window' }).data);
    expect(state(log.events)).toMatchObject({ state: 'idle', lastError: 'nothing_to_compact: empty_window', pendingMarkerSeq: null });
    const second = log.marker();
    log.append('compaction.completed', completion({ markerSeq: second }));
    expect(state(log.events)).toMatchObject({ state: 'idle', lastError: null, pendingMarkerSeq: null });
  });

  it('ignores failures of an older marker', () => {
    const log = eventLog();
    const old = log.marker();
    log.marker();
    log.append('compaction.failed', { markerSeq: old, attempt: 1, error: 'late', fallback: 'none' });
    expect(state(log.events)).toMatchObject({ state: 'pending', lastError: null });
  });

  it('shows the loop guard once the first step on the new context confirms it stalled', () => {
    const log = eventLog();
    const marker = log.marker();
    log.append('compaction.completed', completion({ markerSeq: marker, tokensBefore: 100_000, tokensAfter: 99_000 }));
    expect(state(log.events).suppressedReason).toContain('left 99000 tokens');
    log.user('next').step(98_000).step(50_000);
    expect(state(log.events).suppressedReason).toContain('left 98000 tokens');

    const recovered = eventLog();
    const m = recovered.marker();
    recovered.append('compaction.completed', completion({ markerSeq: m, tokensBefore: 100_000, tokensAfter: 99_000 }));
    recovered.user('next').step(60_000);
    expect(state(recovered.events).suppressedReason).toBeNull();
  });

  it('given a step that measured the old context (no message of the client since the pivot), then it is not the first figure after it', () => {
    const log = eventLog();
    const marker = log.marker();
    log.append('compaction.completed', completion({ markerSeq: marker, tokensBefore: 100_000, tokensAfter: 40_000 }));
    log.step(99_000);
    expect(state(log.events).suppressedReason).toBeNull();
    expect(fold(log.events).firstTokensAfter).toBeNull();
    log.user('next').step(41_000);
    expect(fold(log.events).firstTokensAfter).toBe(41_000);
  });

  it('given the loop guard tripped, when the view has grown by a tenth of the usable window past that figure, then it re-arms by itself', () => {
    const log = eventLog();
    const marker = log.marker();
    log.append('compaction.completed', completion({ markerSeq: marker, tokensBefore: 100_000, tokensAfter: 99_000 }));
    const at = (tokens: number) => deriveCompactionState(fold(log.events), { runningMarkerSeq: null, loopGuardRatio: 0.95, view: { tokens, usable: 128_000 } });
    expect(at(111_799).suppressedReason).toContain('it resumes once the context reaches 111800 tokens');
    expect(at(111_800).suppressedReason).toBeNull();
  });
});
