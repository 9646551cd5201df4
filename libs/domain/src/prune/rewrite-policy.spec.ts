import { judgeRewrite, planRewrite, PlannedRewrite, RewriteMoment, rewroteSincePivot } from './rewrite-policy';
import { selectArchive } from './select-archive';
import { selectPrune } from './select-prune';
import { archiveOptions, opencodeOptions, outputOf, sessionLog } from './testing/session-log';

/** The view's entries as planRewrite reads them: each logged message with a token figure. */
const sourcesOf = (events: ReturnType<typeof sessionLog>['events'], tokens: (seq: number) => number) =>
  events.filter((event) => event.type === 'message.added').map((event) => ({ seq: event.seq, origin: 'log', tokens: tokens(event.seq) }));

/** A session far from its threshold, growing 1,000 tokens a step. */
const roomy: RewriteMoment = { compactionPending: false, compactionDue: false, figure: 60_000, threshold: 160_000, expectedGrowth: 1_000 };
const planned = (removedTokens: number, invalidatedTokens: number): PlannedRewrite => ({ firstChangedSeq: 3, removedTokens, invalidatedTokens });

describe('planRewrite', () => {
  it('prices a prune from its earliest result to the end of the view, removing what it frees', () => {
    // given two old 30,000-token results and two user turns after them
    const log = sessionLog().user('go');
    const first = log.tool({ output: outputOf(30_000) });
    log.tool({ output: outputOf(30_000) });
    log.tool({ output: outputOf(30_000) });
    log.user().user();
    const prune = selectPrune(log.events, opencodeOptions());
    expect(prune?.callIds[0]).toBe(first);
    // when planned on a view where every message counts 100 tokens
    const plan = planRewrite(log.events, sourcesOf(log.events, () => 100), { archive: null, prune });
    // then the prefix changes at the first result's message (seq 3) and everything from it on is invalidated
    expect(plan).toEqual({ firstChangedSeq: 3, removedTokens: prune!.tokensFreed, invalidatedTokens: 100 * 7 });
  });

  it('prices an archive from its earliest call, removing the archived outputs and inputs', () => {
    // given four results and a cutoff of two
    const log = sessionLog().user('go');
    for (let i = 0; i < 4; i++) log.tool({ output: outputOf(1_000), input: { command: 'make' } });
    const archive = selectArchive(log.events, archiveOptions({ toolCallCutoff: 2 }));
    // when planned
    const plan = planRewrite(log.events, sourcesOf(log.events, (seq) => seq), { archive, prune: null });
    // then the first call (seq 2) is the first change; each pair removes its output and its input
    expect(plan?.firstChangedSeq).toBe(2);
    expect(plan?.removedTokens).toBe(2 * (1_000 + Math.ceil('{"command":"make"}'.length / 4)));
    expect(plan?.invalidatedTokens).toBe([2, 3, 4, 5, 6, 7, 8, 9].reduce((a, b) => a + b, 0));
  });

  it('is null when nothing was chosen', () => {
    expect(planRewrite([], [], { archive: null, prune: null })).toBeNull();
  });
});

describe('rewroteSincePivot', () => {
  it('sees a prune or archive after the latest pivot only', () => {
    const log = sessionLog().user('go');
    const id = log.tool();
    expect(rewroteSincePivot(log.events)).toBe(false);
    log.pruned({ callIds: [id], tokensFreed: 10, policy: {} });
    expect(rewroteSincePivot(log.events)).toBe(true);
    log.compacted();
    expect(rewroteSincePivot(log.events)).toBe(false);
    log.archived({ callIds: [id], digest: null });
    expect(rewroteSincePivot(log.events)).toBe(true);
  });
});

describe('judgeRewrite', () => {
  it('applies a clearing that repays before the view grows back to the threshold', () => {
    // given 30,000 removed of 50,000 invalidated: (20,000 x 1.15) / (30,000 x 0.1) = 7.7 → 8 steps to repay;
    // the view falls to 30,000 and grows back to 160,000 in 130 steps
    const verdict = judgeRewrite('pay-off', planned(30_000, 50_000), roomy, false);
    // then it applies
    expect(verdict).toEqual({ apply: true, deferral: null, removedTokens: 30_000, invalidatedTokens: 50_000, breakEvenSteps: 8, stepsLeft: 130 });
  });

  it('defers one that the compaction would overtake before it repays', () => {
    // given a 20,000-token clearing of 200,000 invalidated tokens: (180,000 x 1.15) / 2,000 = 104 steps to repay;
    // the view falls to 120,000 and is back at 160,000 in 40
    const near = { ...roomy, figure: 140_000 };
    const verdict = judgeRewrite('pay-off', planned(20_000, 200_000), near, false);
    expect(verdict).toMatchObject({ apply: false, deferral: 'not_repaid', breakEvenSteps: 104, stepsLeft: 40 });
  });

  it.each([
    ['compaction_pending', { compactionPending: true }, false],
    ['compaction_due', { compactionDue: true }, false],
    ['once_per_interval', {}, true],
  ] as const)('waits with %s', (deferral, moment, rewroteInInterval) => {
    // given a clearing that would repay at once, when a compaction is pending or due, or one already ran since the pivot
    const verdict = judgeRewrite('pay-off', planned(30_000, 30_000), { ...roomy, ...moment }, rewroteInInterval);
    // then it waits, saying why
    expect(verdict).toMatchObject({ apply: false, deferral });
  });

  it('without an automatic compaction to come, the job’s own minimum decides: no interval, unbounded steps', () => {
    const unbounded = { ...roomy, threshold: null };
    expect(judgeRewrite('pay-off', planned(1_000, 500_000), unbounded, true)).toMatchObject({ apply: true, stepsLeft: null });
  });

  it('with no growth known yet, the steps left are unbounded', () => {
    expect(judgeRewrite('pay-off', planned(1_000, 500_000), { ...roomy, expectedGrowth: 0 }, false)).toMatchObject({ apply: true, stepsLeft: null });
  });

  it('rule always keeps the seeds: everything the jobs chose applies, and the figures are still reported', () => {
    const verdict = judgeRewrite('always', planned(20_000, 200_000), { ...roomy, compactionPending: true }, true);
    expect(verdict).toMatchObject({ apply: true, deferral: null, breakEvenSteps: 104 });
  });
});
