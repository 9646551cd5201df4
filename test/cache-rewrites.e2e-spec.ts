import { Client, userMessage } from './support/client';
import { LlmStub, startLlmStub } from './support/llm-stub';
import { startService, TestService } from './support/service';

/**
 * Rewrites that pay for themselves and cache-aware timing
 * (docs/compaction.md, "Rewrites that pay for themselves", "When compaction
 * runs"): the prune endpoint's verdicts and measured costs, the API's
 * metrics, the session state's hit ratio, and a compaction opened early on
 * a cold cache, against the real service.
 */
describe('prompt-cache-aware rewrites', () => {
  let service: TestService;
  let client: Client;
  let stub: LlmStub;
  let key: string;

  beforeAll(async () => {
    stub = await startLlmStub();
    service = await startService({ env: { OPENAI_BASE_URL: `${stub.url}/v1` } });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant());
  });
  afterAll(async () => {
    await service?.stop();
    await stub?.close();
  });

  const path = (id: string) => `/v1/sessions/${id}`;
  const append = async (id: string, events: unknown[]) => {
    const res = await client.append(key, id, { events });
    expect(res.status).toBe(201);
    return res.body;
  };
  const pruneNow = async (id: string) => {
    const res = await client.request('POST', `${path(id)}/prune`, { key, body: { wait: true } });
    expect(res.status).toBe(200);
    return res.body;
  };
  const step = (input: number, read: number, creation: number) => ({
    type: 'step.finished',
    data: { usage: { input_tokens: input, cache_read_tokens: read, cache_creation_tokens: creation, output_tokens: 100 }, finishReason: 'stop' },
  });
  const done = { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text: 'Done.' }] } } };
  /** A turn: the user asks, a tool answers with ~`tokens` tokens, the assistant is done. */
  const turn = (callId: string, tokens: number) => [
    userMessage(`Run ${callId}`),
    { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name: 'bash', input: { command: callId } }] } } },
    { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name: 'bash', output: 'x'.repeat(tokens * 4) }] } } },
    done,
  ];
  /** OpenCode's prune with small figures: the latest user turn protected, any older output prunable, at least 1,000 tokens. */
  const opencode = (extra: Record<string, unknown> = {}) => ({
    preset: 'opencode',
    limits: { context: 100_000, output: 10_000 },
    toolOutput: { enabled: false },
    prune: { protectTurns: 1, protectTokens: 0, minimumTokens: 1_000 },
    ...extra,
  });
  // A model without a tokenizer: estimates are chars / 4 everywhere, as OpenCode's prune counts, so the sizes below are exact.
  const MODEL = 'cache-test-model';
  const events = async (id: string, type: string) => (await client.allEvents(key, id)).filter((e) => e.type === type);

  it('given a prune that repays, it is applied with its measured cost; a second in the same interval waits; after the compaction the next one runs', async () => {
    await client.createSession(key, { id: 'pay', model: MODEL, config: opencode() });
    // given a step that cached 12,000 tokens after an 8,000-token output and a later turn
    await append('pay', [...turn('c1', 8_000), userMessage('Turn 2'), done, step(500, 10_000, 2_000)]);
    // when the prune runs
    const first = await pruneNow('pay');
    // then it clears c1 now, and says what that cost in the provider's cache
    expect(first.rewrite).toMatchObject({ apply: true, deferral: null });
    expect(first.rewrite.removedTokens).toBe(first.prune.tokensFreed);
    expect(first.prune).toMatchObject({ status: 'pruned', callIds: ['c1'] });
    expect(first.prune.cache).toMatchObject({ seq: first.prune.seq, kind: 'prune', cachedPrefixTokens: 12_000, removedTokens: first.prune.tokensFreed, stepsSince: 0 });
    // the same figures as the history's
    const history = await client.request('GET', `${path('pay')}/compactions`, { key });
    expect(history.body.cache.rewrites).toEqual([first.prune.cache]);

    // given another old output, when the prune runs again before any compaction
    await append('pay', [...turn('c2', 8_000), userMessage('Turn 3'), done, step(9_000, 11_000, 500)]);
    const second = await pruneNow('pay');
    // then it waits for the compaction: one prune per compaction interval
    expect(second.prune).toEqual({ status: 'deferred', reason: 'once_per_interval', callIds: ['c2'], tokensFreed: expect.any(Number) });
    expect(second.rewrite).toMatchObject({ apply: false, deferral: 'once_per_interval' });
    expect(await events('pay', 'tool_outputs.pruned')).toHaveLength(1);

    // the API's metrics count both
    const metrics = (await client.request('GET', '/metrics')).text;
    expect(metrics).toMatch(/session_store_rewrite_removed_tokens_count\{kind="prune"\} 1\b/);
    expect(metrics).toMatch(/session_store_rewrites_deferred_total\{reason="once_per_interval"\} [1-9]/);

    // when a compaction lands and a new output grows old, the next interval's prune runs
    const compacted = await client.request('POST', `${path('pay')}/compactions`, { key, body: { wait: true } });
    expect(compacted.body.status).toBe('completed');
    await append('pay', [...turn('c3', 8_000), userMessage('Turn 4'), done, step(500, 3_000, 9_000)]);
    expect((await pruneNow('pay')).prune).toMatchObject({ status: 'pruned', callIds: ['c3'] });
  });

  it('given a compaction in flight, the prune waits for it instead of rewriting the prefix first', async () => {
    await client.createSession(key, { id: 'batch', model: MODEL, config: opencode({ compaction: { summarizer: 'openai', model: 'stub-slow-3000' } }) });
    await append('batch', [...turn('b1', 8_000), userMessage('Turn 2'), done, step(500, 10_000, 2_000)]);
    const requested = client.request('POST', `${path('batch')}/compactions`, { key, body: { wait: true } });
    await stub.received((r) => r.model === 'stub-slow-3000', 'the summarizer call', 10_000);
    // when the prune runs while the summarizer works
    const waiting = await pruneNow('batch');
    // then nothing is cleared: the pivot drops b1 with the rest, in one rewrite
    expect(waiting.prune).toMatchObject({ status: 'deferred', reason: 'compaction_pending', callIds: ['b1'] });
    expect((await requested).body.status).toBe('completed');
    expect(await events('batch', 'tool_outputs.pruned')).toEqual([]);
  });

  it('rule always keeps the seed: every prune its own rule allows is applied', async () => {
    await client.createSession(key, { id: 'seed', model: MODEL, config: opencode({ cache: { rewrites: 'always' } }) });
    await append('seed', [...turn('s1', 8_000), userMessage('Turn 2'), done, step(500, 10_000, 2_000)]);
    expect((await pruneNow('seed')).prune).toMatchObject({ status: 'pruned', callIds: ['s1'] });
    await append('seed', [...turn('s2', 8_000), userMessage('Turn 3'), done, step(9_000, 11_000, 500)]);
    expect((await pruneNow('seed')).prune).toMatchObject({ status: 'pruned', callIds: ['s2'] });
  });

  it('the session state shows the running hit ratio over the steps since the latest compaction', async () => {
    await client.createSession(key, { id: 'ratio', model: MODEL, config: opencode() });
    await append('ratio', [userMessage('Turn 1'), done, step(100, 0, 1_000), userMessage('Turn 2'), done, step(100, 900, 100)]);
    const state = await client.request('GET', path('ratio'), { key });
    expect(state.body.cache).toEqual({ hitRatio: 0.4091, hitRatioSinceRewrite: 0.4091, steps: 2, stepsSinceRewrite: 2, lastRewriteSeq: null, sinceSeq: 0 });
  });

  describe('timing', () => {
    // spec-000 on a 10,000-token window: threshold 8,000; a cold cache opens the compaction from 8,000 x (1 - 0.25) = 6,000.
    const timed = (timing: string) => ({
      preset: 'spec-000',
      limits: { context: 10_000, output: 1_000 },
      toolOutput: { enabled: false },
      compaction: { anticipateGrowth: false },
      cache: { timing, lifetimeSeconds: 3, coldMargin: 0.25 },
    });
    const markers = async (id: string) => (await events(id, 'compaction.requested')).map((e) => e.data.reason);

    it.each([
      ['cache-aware', ['cache_cold']],
      ['threshold', []],
    ])('with %s timing, an append after the cache lifetime of silence at 7,000 of 8,000 tokens opens: %j', async (timing, expected) => {
      const id = `timing-${timing}`;
      await client.createSession(key, { id, model: MODEL, config: timed(timing) });
      // given a view at ~7,000 tokens: below the threshold, within the margin; a busy session does not compact
      await append(id, [userMessage(`Read this: ${'y'.repeat(28_000)}`), done]);
      await append(id, [userMessage('and go on')]);
      expect(await markers(id)).toEqual([]);
      // when the user comes back after longer than the cache lives (3 s)
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      await append(id, [userMessage('back again')]);
      // then cache-aware timing compacts now, on a cache that is cold anyway; threshold timing waits for the threshold
      expect(await markers(id)).toEqual(expected);
    });
  });
});
