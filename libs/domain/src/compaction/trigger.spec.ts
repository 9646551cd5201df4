import { PRESETS } from '../config';
import type { StoredEvent } from '../events';
import { deriveCompactionState } from './decide';
import { evaluateOverflow, OverflowEvaluation } from './overflow-policy';
import { eventLog } from './testing/event-log';
import { compactionFactsOf, decideTrigger, growthThresholdAfterCheck, markerEvent } from './trigger';

const config = PRESETS['spec-000'].compaction;
const limits = { context: 10_000, output: 1_000 };
const evaluation = (total: number): OverflowEvaluation => evaluateOverflow({ tokens: { total }, limits, config });
const stateOf = (events: StoredEvent[], pivot: StoredEvent<'compaction.completed'> | null = null) =>
  deriveCompactionState(compactionFactsOf({ pivot, events }), { runningMarkerSeq: null, loopGuardRatio: 0.95 });

function completed(log: ReturnType<typeof eventLog>, markerSeq: number, coveredThroughSeq: number, tokens: { before: number; after: number }) {
  const seq = log.append('compaction.completed', {
    markerSeq,
    coveredThroughSeq,
    summary: 's',
    prefix: [],
    strategy: 'retain-summary',
    model: 'heuristic',
    tokensBefore: tokens.before,
    tokensAfter: tokens.after,
    messagesCompacted: 1,
    durationMs: 1,
    auto: true,
    reason: 'threshold',
  });
  return log.events[seq - 1] as StoredEvent<'compaction.completed'>;
}

describe('compactionFactsOf', () => {
  it('reads an open marker and its failures from the window', () => {
    const log = eventLog();
    log.user('a').step(100);
    const marker = log.marker();
    log.append('compaction.failed', { markerSeq: marker, attempt: 1, error: 'timeout: slow', fallback: 'retry' });
    expect(stateOf(log.events)).toEqual({ state: 'pending', lastError: 'timeout: slow', pendingMarkerSeq: marker, suppressedReason: null });
  });

  it('restores the marker a cut covered from the pivot, so the state is idle', () => {
    const log = eventLog();
    log.user('a').assistant('b');
    const marker = log.marker();
    const pivot = completed(log, marker, marker, { before: 1_000, after: 100 });
    const window = log.events.filter((event) => event.seq > marker);
    expect(compactionFactsOf({ pivot, events: window }).latestMarker).toMatchObject({ seq: marker, auto: true });
    expect(stateOf(window, pivot)).toMatchObject({ state: 'idle', pendingMarkerSeq: null, suppressedReason: null });
  });

  it('reports the loop guard once the first step after the pivot confirms it', () => {
    const log = eventLog();
    log.user('a').assistant('b');
    const marker = log.marker();
    const pivot = completed(log, marker, marker, { before: 1_000, after: 990 });
    log.user('c').step(980);
    const window = log.events.filter((event) => event.seq > marker);
    expect(stateOf(window, pivot).suppressedReason).toContain('automatic compaction suspended');
  });
});

describe('decideTrigger', () => {
  it('opens a marker when the view after the batch crosses the threshold', () => {
    const log = eventLog();
    log.user('a').step(9_000);
    expect(decideTrigger({ batch: log.events.slice(1), evaluation: evaluation(9_000), state: stateOf(log.events) })).toEqual({
      action: 'request',
      reason: 'threshold',
    });
  });

  it('given a cold cache, opens a marker with reason cache_cold for a view within the margin, threshold reasons first', () => {
    const log = eventLog();
    log.user('back after a break');
    const cold = evaluateOverflow({ tokens: { total: 7_500 }, limits, config, coldMargin: 0.1 });
    expect(decideTrigger({ batch: log.events, evaluation: cold, state: stateOf(log.events) })).toEqual({ action: 'request', reason: 'cache_cold' });
    log.step(7_500, 'length');
    expect(decideTrigger({ batch: log.events.slice(1), evaluation: cold, state: stateOf(log.events) })).toEqual({ action: 'request', reason: 'finish_length' });
  });

  it('does nothing below the threshold', () => {
    const log = eventLog();
    log.user('a').step(1_000);
    expect(decideTrigger({ batch: log.events, evaluation: evaluation(1_000), state: stateOf(log.events) })).toEqual({
      action: 'none',
      why: 'no_trigger',
    });
  });

  it('forces a compaction on context.overflowed and on a length-limited step, overflow first', () => {
    const log = eventLog();
    log.user('a').step(100, 'length');
    log.append('context.overflowed', { error: 'context_length_exceeded' });
    expect(decideTrigger({ batch: log.events, evaluation: evaluation(100), state: stateOf(log.events) })).toEqual({
      action: 'request',
      reason: 'overflow',
    });
    const step = eventLog().user('a').step(100, 'max_tokens');
    expect(decideTrigger({ batch: step.events, evaluation: evaluation(100), state: stateOf(step.events) })).toEqual({
      action: 'request',
      reason: 'finish_length',
    });
  });

  it('joins a pending marker instead of opening a second one', () => {
    const log = eventLog();
    log.user('a');
    const marker = log.marker();
    log.step(9_500);
    expect(decideTrigger({ batch: log.events.slice(-1), evaluation: evaluation(9_500), state: stateOf(log.events) })).toEqual({
      action: 'join',
      markerSeq: marker,
    });
  });

  describe('given a batch that only grows the view (not only step.finished triggers)', () => {
    it('when a client appends tool results past the threshold without a step, then a marker opens', () => {
      const log = eventLog();
      log.user('a');
      log.tool('bash', { output: 'x'.repeat(40_000) });
      expect(decideTrigger({ batch: log.events.slice(1), evaluation: evaluation(10_100), state: stateOf(log.events) })).toEqual({
        action: 'request',
        reason: 'threshold',
      });
    });

    it('when a pin takes the view past the threshold, then a marker opens too', () => {
      const log = eventLog();
      log.user('a').append('pin.added', { pinId: 'p1', text: 'x' });
      expect(decideTrigger({ batch: log.events.slice(1), evaluation: evaluation(8_000), state: stateOf(log.events) }).action).toBe('request');
    });

    it('when a marker is pending, then it is left alone: only steps enqueue its job again', () => {
      const log = eventLog();
      log.user('a');
      const marker = log.marker();
      log.user('b');
      const state = stateOf(log.events);
      expect(decideTrigger({ batch: log.events.slice(-1), evaluation: evaluation(9_500), state })).toEqual({ action: 'none', why: 'pending' });
      expect(state.pendingMarkerSeq).toBe(marker);
    });
  });

  it('given a late step (measured before the pivot, appended after it) with a large usage, then the view it reports is not over: no second compaction', () => {
    // The view's figure (evaluation) comes from composeSessionView, which ignores the stale usage; see view/tokens.spec.
    const log = eventLog();
    log.user('a').assistant('b');
    const marker = log.marker();
    const pivot = completed(log, marker, marker, { before: 9_000, after: 2_000 });
    log.assistant('late reply').step(9_000);
    const window = log.events.filter((event) => event.seq > marker);
    expect(decideTrigger({ batch: log.events.slice(-1), evaluation: evaluation(2_100), state: stateOf(window, pivot) })).toEqual({
      action: 'none',
      why: 'no_trigger',
    });
    expect(compactionFactsOf({ pivot, events: window }).firstTokensAfter).toBeNull();
  });

  it("enqueues a client's own marker", () => {
    const log = eventLog();
    log.user('a');
    const marker = log.marker(false, 'manual');
    expect(decideTrigger({ batch: log.events.slice(-1), evaluation: evaluation(10), state: stateOf(log.events) })).toEqual({
      action: 'enqueue',
      markerSeq: marker,
    });
  });

  it('stays quiet while the loop guard suspends automatic compaction', () => {
    const log = eventLog();
    log.user('a').assistant('b');
    const marker = log.marker();
    const pivot = completed(log, marker, marker, { before: 9_000, after: 8_900 });
    log.user('c').step(9_100);
    const window = log.events.filter((event) => event.seq > marker);
    expect(decideTrigger({ batch: log.events.slice(-1), evaluation: evaluation(9_100), state: stateOf(window, pivot) })).toEqual({
      action: 'none',
      why: 'suppressed',
    });
  });

  it('stays quiet when compaction is disabled, even when forced', () => {
    const log = eventLog();
    log.user('a').append('context.overflowed', {});
    const disabled = evaluateOverflow({ tokens: { total: 100 }, limits, config: { ...config, enabled: false } });
    expect(decideTrigger({ batch: log.events, evaluation: disabled, state: stateOf(log.events) }).action).toBe('none');
  });
});

describe('growthThresholdAfterCheck (what the append path compares its bound of the view with until something else is appended)', () => {
  const check = (events: StoredEvent[], pivot: StoredEvent<'compaction.completed'> | null, tokens: number) => {
    const facts = compactionFactsOf({ pivot, events });
    const state = deriveCompactionState(facts, { runningMarkerSeq: null, loopGuardRatio: 0.95, view: { tokens, usable: 10_000 } });
    return growthThresholdAfterCheck({ threshold: 8_000, facts, state, loopGuardRatio: 0.95, usable: 10_000 });
  };

  it('given nothing pending and no loop guard, then the trigger threshold', () => {
    const log = eventLog();
    log.user('a').step(1_000);
    expect(check(log.events, null, 1_000)).toBe(8_000);
  });

  it('given a pending marker, then growth alone can open nothing: only the worker closing it (another writer) changes that', () => {
    const log = eventLog();
    log.user('a');
    log.marker();
    expect(check(log.events, null, 9_000)).toBe(Number.POSITIVE_INFINITY);
  });

  it('given the loop guard holding, then the larger of the threshold and its re-arm figure', () => {
    const log = eventLog();
    log.user('a').assistant('b');
    const marker = log.marker();
    const pivot = completed(log, marker, marker, { before: 9_000, after: 8_900 });
    log.user('c').step(8_950);
    const window = log.events.filter((event) => event.seq > marker);
    expect(check(window, pivot, 8_950)).toBe(8_950 + 1_000);
  });

  it('given a trigger that counts messages, then always a check', () => {
    const log = eventLog();
    log.user('a');
    const facts = compactionFactsOf({ pivot: null, events: log.events });
    const state = deriveCompactionState(facts, { runningMarkerSeq: null, loopGuardRatio: 0.95 });
    expect(growthThresholdAfterCheck({ threshold: null, facts, state, loopGuardRatio: 0.95, usable: null })).toBeNull();
  });
});

describe('markerEvent', () => {
  it('derives the id from the seq and marks non-manual reasons automatic', () => {
    expect(markerEvent(12, 'threshold')).toEqual({ id: 'cmp-12-requested', type: 'compaction.requested', data: { auto: true, reason: 'threshold' } });
    expect(markerEvent(3, 'manual', 'keep the API list')).toEqual({
      id: 'cmp-3-requested',
      type: 'compaction.requested',
      data: { auto: false, reason: 'manual', instructions: 'keep the API list' },
    });
  });
});
