import fc from 'fast-check';
import { CompactionConfig, PRESET_NAMES, PRESETS, PresetName } from '../config';
import type { CompactionCompletedData } from '../events';
import { prunedPlaceholder } from '../placeholders';
import { CompactionPlan, planCompaction, summaryBudgetTokens, tailBudgetTokens } from './plan';
import { eventLog } from './testing/event-log';
import { compactionWindow } from './window';

const config = (preset: PresetName, patch: Partial<CompactionConfig> = {}): CompactionConfig => ({
  ...PRESETS[preset].compaction,
  ...patch,
});

const plan = (log: ReturnType<typeof eventLog>, markerSeq: number, compaction: CompactionConfig, usable: number | null = 180_000) => {
  const result = planCompaction({ events: log.events, pivot: null, markerSeq, config: compaction, usable });
  if (result.kind !== 'plan') throw new Error(`expected a plan, got ${result.reason}`);
  return result;
};

const seqs = (p: CompactionPlan) => p.head.map((item) => item.seq);
const big = (tokens: number) => 'x'.repeat(tokens * 4);

describe('planCompaction', () => {
  it('keeps the last 2 user turns (OpenCode) and summarizes what came before', () => {
    const log = eventLog();
    log.user('first task');
    log.tool('bash');
    log.assistant('done 1').user('second task');
    log.tool('bash');
    log.assistant('done 2').user('third task');
    log.tool('bash');
    log.assistant('done 3');
    const marker = log.marker();

    const result = plan(log, marker, config('opencode'));

    expect(result.coveredThroughSeq).toBe(4);
    expect(seqs(result)).toEqual([1, 2, 3, 4]);
    expect(result.tail).toMatchObject({ fromSeq: 5, turns: 2, messages: 8, budget: 8_000, summarizeAll: false });
    expect(result.messagesCompacted).toBe(4);
    expect(result.basePivotMarkerSeq).toBeNull();
  });

  it('leaves what arrived after the marker in the window', () => {
    const log = eventLog();
    log.user('task').assistant('working');
    const marker = log.marker();
    log.user('appended while the summarizer ran');

    const result = plan(log, marker, config('codex'));

    expect(result.coveredThroughSeq).toBe(marker);
    expect(seqs(result)).toEqual([1, 2]);
    expect(result.keptTokens).toBe(log.events[3].tokens);
  });

  it('never cuts between a call and its result, even when the result lands after the marker', () => {
    const log = eventLog();
    log.user('task');
    const [callId] = log.call('bash');
    log.step();
    const marker = log.marker();
    log.result(callId);

    const result = plan(log, marker, config('codex'));

    expect(result.coveredThroughSeq).toBe(1);
    expect(seqs(result)).toEqual([1]);
  });

  it('treats a call a later turn or an abort left unanswered as settled', () => {
    const abandoned = eventLog();
    abandoned.user('task');
    abandoned.call('bash');
    abandoned.user('never mind').assistant('ok');
    const marker = abandoned.marker();
    expect(plan(abandoned, marker, config('codex')).coveredThroughSeq).toBe(marker);

    const aborted = eventLog();
    aborted.user('task');
    aborted.call('bash');
    aborted.aborted();
    const abortedMarker = aborted.marker();
    expect(plan(aborted, abortedMarker, config('codex')).coveredThroughSeq).toBe(abortedMarker);
  });

  it('summarizes everything when the tail does not fit its budget (OpenCode fallback)', () => {
    const log = eventLog();
    log.user('first').assistant('ok').user('second');
    const [callId] = log.call('bash');
    log.result(callId, { output: big(10_000) });
    const marker = log.marker();

    const result = plan(log, marker, config('opencode'), 8_000);

    expect(result.tail).toMatchObject({ fromSeq: null, messages: 0, budget: 2_000, summarizeAll: true });
    expect(result.coveredThroughSeq).toBe(marker);
  });

  it('summarizes everything when the tail would be the whole window', () => {
    const log = eventLog();
    log.user('a').assistant('b').user('c').assistant('d');
    const marker = log.marker();

    const result = plan(log, marker, config('opencode'));

    expect(result.tail.summarizeAll).toBe(true);
    expect(seqs(result)).toEqual([1, 2, 3, 4]);
  });

  it('splits a turn that does not fit at the earliest settled point whose suffix does', () => {
    const log = eventLog();
    log.user('first').assistant('ok').user('second');
    const [first] = log.call('read');
    log.result(first, { output: big(3_000), name: 'read' });
    const [second] = log.call('bash');
    log.result(second, { output: 'small' });
    log.assistant('done');
    const marker = log.marker();

    const result = plan(log, marker, config('opencode'), 8_000);

    expect(result.tail).toMatchObject({ fromSeq: 6, turns: 0, messages: 3, summarizeAll: false });
    expect(result.coveredThroughSeq).toBe(5);
  });

  it('keeps recent messages within keepRecentTokens, clamped to half the limit (seed 001)', () => {
    const log = eventLog();
    log.user('task');
    for (let i = 0; i < 10; i++) log.assistant(big(1_000));
    const marker = log.marker();

    const byTokens = plan(log, marker, config('spec-001', { maxTokensAfterRatio: null }), 10_000);
    expect(byTokens.tail).toMatchObject({ fromSeq: 7, messages: 5, tokens: 5_000, budget: 5_000 });

    const byCount = plan(log, marker, config('spec-001', { keepRecentTokens: 0, keepRecentMessages: 3, maxTokensAfterRatio: null }), 10_000);
    expect(byCount.tail).toMatchObject({ fromSeq: 9, messages: 3, budget: null });
  });

  it('leaves half the trigger free by default: the tail fits it with the summary budget', () => {
    // given ten 1,000-token messages and a 10,000-token trigger (spec-001: threshold = usable)
    const log = eventLog();
    log.user('task');
    for (let i = 0; i < 10; i++) log.assistant(big(1_000));
    const marker = log.marker();
    // when
    const result = plan(log, marker, config('spec-001'), 10_000);
    // then half the trigger (5,000) holds the summary's 1,500 and a tail of at most 3,500
    expect(result.summaryBudgetTokens).toBe(1_500);
    expect(result.tail).toMatchObject({ budget: 3_500, tokens: 3_000 });
    expect(result.tail.tokens + result.summaryBudgetTokens).toBeLessThanOrEqual(5_000);
  });

  it('hands the summarizer the head as written, the previous record and the kept messages', () => {
    // given a pruned and an archived result in the head, one message kept after the cut
    const log = eventLog();
    log.user('task');
    const pruned = log.tool('bash', { output: 'Error: disk full', refId: 'ref-1' });
    const archived = log.tool('bash', { output: 'archived output' });
    log.append('tool_outputs.pruned', { callIds: [pruned], tokensFreed: 3, policy: {} });
    const digest = { id: 'd', role: 'user' as const, parts: [{ type: 'text' as const, text: 'digest' }], metadata: { kind: 'tool_summary', userVisible: false } };
    log.append('tool_results.archived', { callIds: [archived], digest });
    log.user('next').assistant('kept answer');
    const marker = log.marker();
    const record = { v: 1, goal: [{ text: 'earlier goal', first: 0, last: 0, hits: 1 }] };
    const pivot: CompactionCompletedData = {
      markerSeq: 0, coveredThroughSeq: 0, summary: 'earlier', prefix: [], strategy: 'summary-tail', model: 'heuristic',
      tokensBefore: 0, tokensAfter: 0, messagesCompacted: 0, durationMs: 0, record,
    };
    // when
    const result = planCompaction({ events: log.events, pivot, markerSeq: marker, config: config('opencode', { retainLastTurns: 1 }), usable: 180_000 });
    if (result.kind !== 'plan') throw new Error(result.reason);
    // then the summarizer reads the pruned output whole and the archived pair, not the digest
    const outputs = result.sourceHead.flatMap((m) => m.parts).flatMap((p) => (p.type === 'tool_result' ? [p.output] : []));
    expect(outputs).toEqual(['Error: disk full', 'archived output']);
    expect(result.sourceHead.map((m) => m.id)).not.toContain('d');
    expect(result.previousRecord?.goal[0].text).toBe('earlier goal');
    expect(result.keptMessages.map((m) => m.parts[0].type === 'text' && m.parts[0].text)).toEqual(['next', 'kept answer']);
  });

  it('has nothing to compact in an empty window', () => {
    const log = eventLog();
    const marker = log.marker();
    log.user('after the marker');
    expect(planCompaction({ events: log.events, pivot: null, markerSeq: marker, config: config('codex'), usable: null })).toEqual({
      kind: 'nothing',
      markerSeq: marker,
      reason: 'empty_window',
    });
  });

  it('starts after the current pivot and carries its summary and prefix', () => {
    const log = eventLog();
    log.user('old').assistant('old answer');
    const pivot: CompactionCompletedData = {
      markerSeq: 3,
      coveredThroughSeq: 2,
      summary: ' earlier summary ',
      prefix: [{ id: 'p', role: 'user', parts: [{ type: 'text', text: 'kept' }] }],
      strategy: 'retain-summary',
      model: 'heuristic',
      tokensBefore: 0,
      tokensAfter: 0,
      messagesCompacted: 2,
      durationMs: 0,
    };
    log.marker();
    log.append('compaction.completed', pivot);
    log.user('new').assistant('new answer');
    const marker = log.marker();

    const result = planCompaction({ events: log.events, pivot, markerSeq: marker, config: config('codex'), usable: null });

    expect(result).toMatchObject({ kind: 'plan', basePivotMarkerSeq: 3, previousSummary: 'earlier summary', previousPrefix: pivot.prefix });
    expect(seqs(result as CompactionPlan)).toEqual([5, 6]);
    expect((result as CompactionPlan).coveredTokens).toBe(1 + log.events[4].tokens + log.events[5].tokens);
  });

  it('reads the head as the model does: pruned outputs as placeholders, archived pairs as their digest', () => {
    const log = eventLog();
    log.user('task');
    const pruned = log.tool('bash', { output: 'long output', refId: 'ref-1' });
    const archived = log.tool('bash', { output: 'archived output' });
    log.append('tool_outputs.pruned', { callIds: [pruned], tokensFreed: 3, policy: {} });
    const digest = { id: 'd', role: 'user' as const, parts: [{ type: 'text' as const, text: 'digest' }], metadata: { kind: 'tool_summary', userVisible: false } };
    log.append('tool_results.archived', { callIds: [archived], digest });
    const marker = log.marker();

    const result = plan(log, marker, config('codex'));

    const outputs = result.head.flatMap((item) => item.message.parts).filter((part) => part.type === 'tool_result');
    expect(outputs).toEqual([expect.objectContaining({ callId: pruned, output: prunedPlaceholder('ref-1') })]);
    expect(result.head.map((item) => item.message.id)).toEqual(['m1', 'm2', 'm3', 'd']);
  });
});

describe('tailBudgetTokens', () => {
  // The strategies' own budgets (maxTokensAfterRatio off): OpenCode's clamp, seed 001's half the limit, seed 003's target.
  it.each([
    ['opencode', 180_000, 8_000],
    ['opencode', 20_000, 5_000],
    ['opencode', 4_000, 2_000],
    ['opencode', null, 8_000],
    ['spec-001', 100_000, 20_000],
    ['spec-001', 30_000, 15_000],
    ['spec-003', 64_000, 24_000],
    ['spec-003', null, Number.POSITIVE_INFINITY],
  ] as const)('%s with usable %s → %s', (preset, usable, budget) => {
    expect(tailBudgetTokens(config(preset, { maxTokensAfterRatio: null }), usable)).toBe(budget);
  });

  // After a compaction the context holds at most half the trigger; the summary's budget is 30% of that half.
  it.each([
    ['opencode', 180_000, 8_000, 8_000],
    ['opencode', 20_000, 5_000, 3_000],
    ['opencode', 4_000, 1_400, 600],
    ['spec-001', 100_000, 20_000, 8_000],
    ['spec-001', 30_000, 10_500, 4_500],
    ['spec-003', 64_000, 16_800, 7_200],
    ['spec-003', null, Number.POSITIVE_INFINITY, 8_000],
  ] as const)('%s with usable %s, maxTokensAfterRatio 0.5 → tail %s, summary %s', (preset, usable, tail, summary) => {
    // given the preset's default (0.5)
    const compaction = config(preset);
    // then the tail and the summary together fit half the trigger
    expect(tailBudgetTokens(compaction, usable)).toBe(tail);
    expect(summaryBudgetTokens(compaction, usable)).toBe(summary);
    if (usable !== null) expect(tail + summary).toBeLessThanOrEqual(Math.max(Math.floor(usable * compaction.thresholdRatio * 0.5), 8_000 + 8_000));
  });
});

type Step =
  | { kind: 'user' | 'assistant'; chars: number }
  | { kind: 'call'; count: number }
  | { kind: 'results'; mask: number }
  | { kind: 'abort' }
  | { kind: 'step' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constantFrom('user' as const, 'assistant' as const), chars: fc.nat({ max: 40_000 }) }),
  fc.record({ kind: fc.constant('call' as const), count: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('results' as const), mask: fc.nat({ max: 7 }) }),
  fc.record({ kind: fc.constant('abort' as const) }),
  fc.record({ kind: fc.constant('step' as const) }),
);

function build(steps: readonly Step[], markerAt: number) {
  const log = eventLog();
  let pending: string[] = [];
  let markerSeq = 0;
  steps.forEach((s, i) => {
    if (i === markerAt) markerSeq = log.marker();
    if (s.kind === 'user') log.user(big(s.chars / 4) || 'u');
    else if (s.kind === 'assistant') log.assistant(big(s.chars / 4) || 'a');
    else if (s.kind === 'call') pending.push(...log.call(Array(s.count).fill('bash')));
    else if (s.kind === 'results') {
      const answered = pending.filter((_, bit) => s.mask & (1 << bit));
      answered.forEach((id) => log.result(id, { output: 'r' }));
      pending = pending.filter((id) => !answered.includes(id));
    } else if (s.kind === 'abort') log.aborted();
    else log.step();
  });
  if (markerSeq === 0) markerSeq = log.marker();
  return { log, markerSeq };
}

describe('planCompaction properties', () => {
  it('never splits a pair, never cuts past the marker, never leaves an in-flight call in the head', () => {
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 40 }),
        fc.nat({ max: 45 }),
        fc.constantFrom(...PRESET_NAMES),
        fc.option(fc.integer({ min: 100, max: 300_000 }), { nil: null }),
        (steps, markerAt, preset, usable) => {
          const { log, markerSeq } = build(steps, markerAt);
          const result = planCompaction({ events: log.events, pivot: null, markerSeq, config: config(preset), usable });
          if (result.kind === 'nothing') return;
          const cut = result.coveredThroughSeq;
          expect(cut).toBeLessThanOrEqual(markerSeq);
          expect(result.head.length).toBeGreaterThan(0);
          expect(result.head.every((item) => item.seq <= cut)).toBe(true);

          const { messages, lastInterruptionSeq } = compactionWindow(log.events);
          const resultSeq = new Map<string, number>();
          for (const { seq, message } of messages) {
            for (const part of message.parts) if (part.type === 'tool_result') resultSeq.set(part.callId, seq);
          }
          for (const { seq, message } of result.head) {
            for (const part of message.parts) {
              if (part.type !== 'tool_call') continue;
              const answered = resultSeq.get(part.callId);
              if (answered !== undefined) expect(answered).toBeLessThanOrEqual(cut);
              else expect(lastInterruptionSeq).toBeGreaterThan(seq);
            }
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
