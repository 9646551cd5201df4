import { cacheReport, cacheTraceOf, CacheTraceEvent, costsOfCommitted, windowCacheRatios } from './cache-cost';
import { assistant, call, compacted, result, storeEvents, tool, usage, user } from './testing/events';

const message = (seq: number, tokens: number, ids: { calls?: string[]; results?: string[] } = {}): CacheTraceEvent => ({
  seq,
  type: 'message.added',
  tokens,
  calls: ids.calls ?? [],
  results: ids.results ?? [],
});
const step = (seq: number, input: number, read: number, creation: number, output = 10): CacheTraceEvent => ({
  seq,
  type: 'step.finished',
  usage: { input_tokens: input, cache_read_tokens: read, cache_creation_tokens: creation, output_tokens: output },
});

describe('cache cost of rewrites', () => {
  // seq 1 user 100, seq 2 call c1 50, seq 3 result c1 2000, seq 4 step (writes 2150),
  // seq 5 user 100, seq 6 step (reads 2150, writes 100: 2250 cached).
  const before: CacheTraceEvent[] = [
    message(1, 100),
    message(2, 50, { calls: ['c1'] }),
    message(3, 2000, { results: ['c1'] }),
    step(4, 100, 0, 2150),
    message(5, 100),
    step(6, 100, 2150, 100),
  ];

  it('given a prune of an early result, when a step follows, then it invalidated the cached prefix from that result on and repaid after one step', () => {
    // given
    const trace = [...before, { seq: 7, type: 'tool_outputs.pruned', callIds: ['c1'], tokensFreed: 1990 } as CacheTraceEvent];
    // when
    const report = cacheReport([...trace, step(8, 50, 150, 120)]);
    // then: cached 2150 + 100 = 2250; from seq 3 through seq 5: 2000 + 100 = 2100 invalidated;
    // 2100 - 1990 = 110 written again: 110 x 1.15 = 126.5; saving 1990 x 0.1 = 199 a step: ceil(126.5 / 199) = 1.
    expect(report.rewrites).toEqual([
      {
        seq: 7,
        kind: 'prune',
        cachedPrefixTokens: 2250,
        invalidatedTokens: 2100,
        removedTokens: 1990,
        rewriteCost: 126.5,
        savingPerStep: 199,
        breakEvenSteps: 1,
        stepsSince: 1,
        repaidAfterSteps: 1,
      },
    ]);
    // reads 0 + 2150 + 150 = 2300 of prompts 2250 + 2350 + 320 = 4920; since the prune 150 / 320.
    expect(report).toMatchObject({ hitRatio: 0.4675, hitRatioSinceRewrite: 0.4688, steps: 3, stepsSinceRewrite: 1, lastRewriteSeq: 7 });
  });

  it('given a prune with no step after it, then its repayment is not known yet', () => {
    const report = cacheReport([...before, { seq: 7, type: 'tool_outputs.pruned', callIds: ['c1'], tokensFreed: 1990 }]);
    expect(report.rewrites[0]).toMatchObject({ stepsSince: 0, breakEvenSteps: 1, repaidAfterSteps: null });
    expect(report).toMatchObject({ hitRatio: round(2150 / 4600), hitRatioSinceRewrite: null, stepsSinceRewrite: 0 });
  });

  it('given a compaction that removed little, when three steps follow, then it is not repaid (44 steps needed)', () => {
    // given: cached 9000 + 500 = 9500, all of it invalidated; removed 10000 - 8000 = 2000
    const trace: CacheTraceEvent[] = [message(1, 9000), step(2, 200, 9000, 500), { seq: 3, type: 'compaction.completed', tokensBefore: 10_000, tokensAfter: 8000 }];
    // when
    const report = cacheReport([...trace, step(4, 100, 0, 8000), step(5, 100, 8000, 100), step(6, 100, 8100, 100)]);
    // then: (9500 - 2000) x 1.15 = 8625; saving 200 a step; ceil(8625 / 200) = 44
    expect(report.rewrites[0]).toEqual({
      seq: 3,
      kind: 'compaction',
      cachedPrefixTokens: 9500,
      invalidatedTokens: 9500,
      removedTokens: 2000,
      rewriteCost: 8625,
      savingPerStep: 200,
      breakEvenSteps: 44,
      stepsSince: 3,
      repaidAfterSteps: null,
    });
    // since the compaction: reads 0 + 8000 + 8100 = 16100 of 8100 + 8200 + 8300 = 24600
    expect(report.hitRatioSinceRewrite).toBe(round(16_100 / 24_600));
  });

  it('given a compaction that removed more than the cache held, then it costs nothing and is repaid at once', () => {
    const report = cacheReport([message(1, 500), step(2, 100, 300, 100), { seq: 3, type: 'compaction.completed', tokensBefore: 5000, tokensAfter: 500 }]);
    expect(report.rewrites[0]).toMatchObject({ invalidatedTokens: 400, removedTokens: 4500, rewriteCost: 0, breakEvenSteps: 0, repaidAfterSteps: 0 });
  });

  it('given an archive without tokensFreed, then the removed tokens are the results minus the digest, invalidated from the call on', () => {
    // given: call c2 at seq 2 (40), result at seq 3 (800), user at 4 (60); step 5 cached 1000
    const trace: CacheTraceEvent[] = [
      message(1, 100),
      message(2, 40, { calls: ['c2'] }),
      message(3, 800, { results: ['c2'] }),
      message(4, 60),
      step(5, 0, 900, 100),
      { seq: 6, type: 'tool_results.archived', callIds: ['c2'], digestTokens: 30 },
    ];
    // when
    const report = cacheReport(trace);
    // then: removed 800 - 30 = 770; invalidated 40 + 800 + 60 = 900; (900 - 770) x 1.15 = 149.5; saving 77: ceil(1.94) = 2
    expect(report.rewrites[0]).toMatchObject({ kind: 'archive', cachedPrefixTokens: 1000, invalidatedTokens: 900, removedTokens: 770, rewriteCost: 149.5, savingPerStep: 77, breakEvenSteps: 2 });
  });

  it('given a rewrite before any step, then what it invalidated is unknown', () => {
    const report = cacheReport([message(1, 100), message(2, 50, { results: ['c'] }), { seq: 3, type: 'tool_outputs.pruned', callIds: ['c'], tokensFreed: 40 }]);
    expect(report.rewrites[0]).toMatchObject({ cachedPrefixTokens: null, invalidatedTokens: null, rewriteCost: null, breakEvenSteps: null, removedTokens: 40, savingPerStep: 4 });
    expect(report).toMatchObject({ hitRatio: null, hitRatioSinceRewrite: null, steps: 0 });
  });

  it('given a prune then a compaction, when steps follow, then the prune stops counting at the compaction', () => {
    const trace: CacheTraceEvent[] = [
      ...before,
      { seq: 7, type: 'tool_outputs.pruned', callIds: ['c1'], tokensFreed: 10 },
      step(8, 10, 300, 0),
      { seq: 9, type: 'compaction.completed', tokensBefore: 400, tokensAfter: 100 },
      step(10, 10, 0, 100),
    ];
    const [prune, compaction] = cacheReport(trace).rewrites;
    expect(prune).toMatchObject({ stepsSince: 1, repaidAfterSteps: null });
    expect(compaction).toMatchObject({ cachedPrefixTokens: 300, invalidatedTokens: 300, removedTokens: 300, rewriteCost: 0, stepsSince: 1, repaidAfterSteps: 0 });
  });

  it('given a prune that clears the inputs too, then it invalidates from the call on', () => {
    // from seq 2 (50) through seq 5: 50 + 2000 + 100 = 2150 of the 2250 cached
    const report = cacheReport([...before, { seq: 7, type: 'tool_outputs.pruned', callIds: ['c1'], tokensFreed: 2000, clearInputs: true }]);
    expect(report.rewrites[0]).toMatchObject({ invalidatedTokens: 2150, rewriteCost: 172.5, savingPerStep: 200, breakEvenSteps: 1 });
  });

  it("given a step that names the context it measured, then the messages after that context are not counted as cached", () => {
    // step 6 measured the view at seq 3: only the result (2000) lies from the change to it
    const measured = before.map((event) => (event.seq === 6 ? { ...event, contextSeq: 3 } : event));
    const report = cacheReport([...measured, { seq: 7, type: 'tool_outputs.pruned', callIds: ['c1'], tokensFreed: 1990 }]);
    expect(report.rewrites[0]).toMatchObject({ cachedPrefixTokens: 2250, invalidatedTokens: 2000, rewriteCost: 11.5 });
  });

  it('given no rewrite, then the ratio since the last rewrite is the overall one', () => {
    expect(cacheReport(before)).toMatchObject({ hitRatio: round(2150 / 4600), hitRatioSinceRewrite: round(2150 / 4600), steps: 2, stepsSinceRewrite: 2, lastRewriteSeq: null });
  });

  it('given stored events, when traced, then messages carry their tool ids and steps their usage', () => {
    const [u, a, t, s] = storeEvents([user('u', 'hi'), assistant('a', call('c')), tool('t', result('c')), usage(10, 5, { read: 3 }, 3)]);
    expect(cacheTraceOf(u)).toMatchObject({ type: 'message.added', calls: [], results: [] });
    expect(cacheTraceOf(a)).toMatchObject({ calls: ['c'], results: [] });
    expect(cacheTraceOf(t)).toMatchObject({ calls: [], results: ['c'], tokens: t.tokens });
    expect(cacheTraceOf(s)).toEqual({ seq: s.seq, type: 'step.finished', usage: { input_tokens: 10, output_tokens: 5, cache_read_tokens: 3, cache_creation_tokens: 0 }, contextSeq: 3 });
  });
});

const round = (value: number) => Math.round(value * 10_000) / 10_000;

describe('costsOfCommitted', () => {
  it('given a window with a measured step, when a prune is committed after it, then its cost is measured like the history’s', () => {
    // given: user, call, result, a step that cached 3,000 tokens
    const window = storeEvents([user('u1', 'go'), assistant('a1', call('c1')), tool('t1', result('c1', 'x'.repeat(8_000))), usage(100, 10, { creation: 3_000 })]);
    // when a prune of c1 freeing 2,000 is committed at seq 5
    const [cost] = costsOfCommitted(window, [{ seq: 5, event: { type: 'tool_outputs.pruned', data: { callIds: ['c1'], tokensFreed: 2_000 } } }]);
    // then the history's fold says the same
    const trace = [...window.map(cacheTraceOf), { seq: 5, type: 'tool_outputs.pruned', callIds: ['c1'], tokensFreed: 2_000, clearInputs: false }];
    expect(cost).toEqual(cacheReport(trace as CacheTraceEvent[]).rewrites[0]);
    expect(cost).toMatchObject({ kind: 'prune', cachedPrefixTokens: 3_000, removedTokens: 2_000 });
  });
});

describe('windowCacheRatios', () => {
  it('counts the steps after the pivot, not the kept tail before it', () => {
    // given a step before the pivot (reads nothing) and one after it (reads 900 of 1,000)
    const events = storeEvents([
      user('u1', 'go'),
      usage(1_000, 10),
      compacted(1, []),
      user('u2', 'again'),
      usage(100, 10, { read: 900 }),
    ]);
    // when the state reads its window from the pivot (seq 3)
    const ratios = windowCacheRatios(3, events);
    // then only the later step counts
    expect(ratios).toEqual({ hitRatio: 0.9, hitRatioSinceRewrite: 0.9, steps: 1, stepsSinceRewrite: 1, lastRewriteSeq: 3, sinceSeq: 3 });
    expect(windowCacheRatios(null, events)).toMatchObject({ steps: 2, sinceSeq: 0, hitRatio: round(900 / 2_000) });
  });
});
