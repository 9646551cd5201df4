import { Client, userMessage } from './support/client';
import { startService, TestService } from './support/service';

/**
 * What each rewrite cost in prompt cache (docs/compaction.md "What
 * a rewrite cost"): steps with usage around a prune and a manual compaction,
 * the figures of GET /compactions and GET /sessions/{id} against hand-computed
 * ones (prices: cache write 1.25, cache read 0.1).
 */
describe('prompt cache cost of rewrites', () => {
  let service: TestService;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    service = await startService();
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant());
  });
  afterAll(async () => {
    await service?.stop();
  });

  const path = '/v1/sessions/cost';
  const append = async (events: unknown[]) => {
    const res = await client.append(key, 'cost', { events });
    expect(res.status).toBe(201);
  };
  const step = (input: number, read: number, creation: number) => ({
    type: 'step.finished',
    data: { usage: { input_tokens: input, cache_read_tokens: read, cache_creation_tokens: creation, output_tokens: 100 }, finishReason: 'stop' },
  });
  const assistant = (parts: unknown[]) => ({ type: 'message.added', data: { message: { role: 'assistant', parts } } });
  const done = assistant([{ type: 'text', text: 'Done.' }]);

  it('reports what the prune and the compaction invalidated, removed and took to repay, and the hit ratios', async () => {
    await client.createSession(key, {
      id: 'cost',
      model: 'gpt-4.1',
      config: {
        preset: 'opencode',
        toolOutput: { enabled: false },
        compaction: { auto: false },
        prune: { enabled: true, protectTurns: 1, protectTokens: 0, minimumTokens: 1_000 },
      },
    });
    // seq 3 holds a ~10,000-token output; seq 5 a ~15,000-token user turn: ~25,000 tokens from the result to the step.
    await append([
      userMessage('Turn 1: read the build log'),
      assistant([{ type: 'tool_call', callId: 'c1', name: 'bash', input: { command: 'make' } }]),
      { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', name: 'bash', output: 'x'.repeat(40_000) }] } } },
      done,
      userMessage(`Turn 2: ${'y'.repeat(60_000)}`),
      done,
      userMessage('Turn 3'),
      done,
      step(500, 10_000, 2_000), // A: 12,000 cached
    ]);
    const pruned = await client.request('POST', `${path}/prune`, { key, body: { wait: true } });
    expect(pruned.status).toBe(200);
    const [prune] = (await client.allEvents(key, 'cost')).filter((e) => e.type === 'tool_outputs.pruned');
    expect(prune.data.callIds).toEqual(['c1']);
    const freed: number = prune.data.tokensFreed;
    expect(freed).toBeGreaterThan(9_000);
    expect(freed).toBeLessThan(12_000);

    await append([userMessage('Turn 4'), step(300, 11_000, 500), step(100, 11_500, 100), step(100, 11_600, 100)]); // B, C, D: D caches 11,700
    const compacted = await client.request('POST', `${path}/compactions`, { key, body: { wait: true } });
    expect(compacted.status).toBe(200);
    expect(compacted.body.status).toBe('completed');
    await append([userMessage('Turn 5'), step(200, 0, 3_000), step(100, 3_000, 200)]); // E, F

    const history = await client.request('GET', `${path}/compactions`, { key });
    expect(history.status).toBe(200);
    const [entry] = history.body.compactions;

    // The prune: step A cached 12,000, all of it from the pruned result on (capped); (12,000 - freed) x 1.15 to write again,
    // freed x 0.1 saved a step; three steps (B, C, D) before the compaction.
    const pruneCost = Math.max(0, 12_000 - freed) * 115;
    const pruneBreakEven = Math.ceil(pruneCost / (freed * 10));
    expect(history.body.cache.rewrites).toEqual([
      {
        seq: prune.seq,
        kind: 'prune',
        cachedPrefixTokens: 12_000,
        invalidatedTokens: 12_000,
        removedTokens: freed,
        rewriteCost: pruneCost / 100,
        savingPerStep: freed / 10,
        breakEvenSteps: pruneBreakEven,
        stepsSince: 3,
        repaidAfterSteps: pruneBreakEven <= 3 ? pruneBreakEven : null,
      },
    ]);

    // The compaction: step D cached 11,600 + 100, all invalidated; two steps (E, F) after it.
    const removed = entry.tokensBefore - entry.tokensAfter;
    const cost = Math.max(0, 11_700 - removed) * 115;
    const breakEven = removed > 0 ? Math.ceil(cost / (removed * 10)) : null;
    expect(entry.cache).toEqual({
      seq: entry.completedSeq,
      kind: 'compaction',
      cachedPrefixTokens: 11_700,
      invalidatedTokens: 11_700,
      removedTokens: removed,
      rewriteCost: cost / 100,
      savingPerStep: (removed * 10) / 100,
      breakEvenSteps: breakEven,
      stepsSince: 2,
      repaidAfterSteps: breakEven !== null && breakEven <= 2 ? breakEven : null,
    });

    // Reads 10,000 + 11,000 + 11,500 + 11,600 + 0 + 3,000 = 47,100 of 12,500 + 11,800 + 11,700 + 11,800 + 3,200 + 3,300 = 54,300;
    // since the compaction 3,000 of 6,500.
    const ratios = { hitRatio: 0.8674, hitRatioSinceRewrite: 0.4615, steps: 6, stepsSinceRewrite: 2, lastRewriteSeq: entry.completedSeq };
    expect(history.body.cache).toMatchObject(ratios);
  });
});
