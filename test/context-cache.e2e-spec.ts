import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import { CONTEXT_FORMATS, ContextFormat } from '@app/domain';
import { prefixBreak } from '@app/domain/view/testing/prefix';
import { Client } from './support/client';
import { ProviderStub, startProviderStub } from './support/provider-stub';
import { startService, TestService } from './support/service';

/**
 * Keeping the provider's prompt cache warm, through the API: every format's
 * context, read after every append of a short agent session, begins with the
 * read before it (the rule of libs/domain/src/view/testing/prefix.ts); and the
 * Anthropic view with `cache_control` breakpoints goes through the official
 * SDK, unchanged, to a stub of the Messages API that checks the caching rules.
 */

const SYSTEM = 'You are a terse coding agent.';
const text = (t: string) => ({ type: 'text', text: t });
const say = (id: string, role: 'user' | 'assistant' | 'tool', ...parts: Array<Record<string, unknown>>) => ({
  type: 'message.added',
  data: { message: { id, role, parts } },
});
const toolCall = (callId: string, cmd: string) => ({ type: 'tool_call', callId, name: 'bash', input: { cmd } });
const toolResult = (callId: string, output: string, isError = false) => ({ type: 'tool_result', callId, output, ...(isError ? { isError } : {}) });
const stepFinished = (input: number) => ({
  type: 'step.finished',
  data: { usage: { input_tokens: input, output_tokens: 20, cache_creation_tokens: 0, cache_read_tokens: input } },
});

/** A short agent session: parallel calls, an error, a large output, usage, an aborted turn, and a user turn after results. */
const SESSION = [
  say('u1', 'user', text('Run the tests and show the diff.')),
  say('a1', 'assistant', { type: 'reasoning', text: 'two tools at once' }, text('Running both.'), toolCall('c1', 'npm test'), toolCall('c2', 'git diff')),
  stepFinished(120),
  say('t1', 'tool', toolResult('c1', '1 failed', true)),
  say('t2', 'tool', toolResult('c2', Array.from({ length: 300 }, (_, i) => `+line ${i}`).join('\n'))),
  say('u2', 'user', text('Fix the failing test.')),
  say('a2', 'assistant', toolCall('c3', 'sed -i s/a/b/ test.js')),
  { type: 'turn.aborted', data: { reason: 'user' } },
  say('u3', 'user', text('Never mind; summarize.')),
  say('a3', 'assistant', text('One test fails; the diff adds 300 lines.\n')),
  stepFinished(400),
];

describe('context: prompt-cache stability and breakpoints', () => {
  let service: TestService;
  let stub: ProviderStub;
  let client: Client;
  let key: string;
  let anthropic: Anthropic;

  const context = (sessionId: string, query: Record<string, string>) =>
    client.request('GET', `/v1/sessions/${encodeURIComponent(sessionId)}/context?${new URLSearchParams(query)}`, { key });
  const okContext = async (sessionId: string, query: Record<string, string>) => {
    const res = await context(sessionId, query);
    if (res.status !== 200) throw new Error(`context ${JSON.stringify(query)}: ${res.status} ${res.text}`);
    return res.body;
  };
  const append = async (sessionId: string, event: unknown) => {
    const res = await client.append(key, sessionId, { events: [event] });
    if (res.status !== 201) throw new Error(`append: ${res.status} ${res.text}`);
  };
  /** The request a client sends: the context's fields, unchanged, typed as the SDK's params. */
  const send = (ctx: any) => {
    const params: MessageCreateParamsNonStreaming = {
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      ...(ctx.system !== undefined ? { system: ctx.system } : {}),
      ...(ctx.tools !== undefined ? { tools: ctx.tools } : {}),
      messages: ctx.messages,
    };
    return anthropic.messages.create(params);
  };
  const marks = (value: unknown) => JSON.stringify(value).match(/"cache_control"/g)?.length ?? 0;

  beforeAll(async () => {
    [service, stub] = await Promise.all([startService({ worker: false }), startProviderStub()]);
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('context-cache'));
    anthropic = new Anthropic({ baseURL: stub.url, apiKey: 'test', maxRetries: 0 });
  });
  afterAll(async () => {
    await stub?.close();
    await service?.stop();
  });

  it('every format: each read begins with the one before it, system and tools included', async () => {
    const { id } = await client.createSession(key, { model: 'claude-sonnet-4-5', system: SYSTEM });
    const readAll = async () =>
      Object.fromEntries(
        await Promise.all(CONTEXT_FORMATS.map(async (format) => [format, await okContext(id, { format, tools: 'tool_output_cache' })] as const)),
      ) as Record<ContextFormat, any>;
    await append(id, SESSION[0]);
    let earlier = await readAll();
    const breaks: string[] = [];
    for (const [i, event] of SESSION.slice(1).entries()) {
      await append(id, event);
      const later = await readAll();
      // A read while calls are still running answers them as aborted until their results land: that tail is not kept.
      if (earlier.neutral.pendingToolCalls.length === 0) {
        for (const format of CONTEXT_FORMATS) {
          const broken = prefixBreak(format, earlier[format], later[format]);
          if (broken) breaks.push(`${format} after append ${i + 2}: ${broken}`);
          expect(later[format].tools).toEqual(earlier[format].tools);
        }
      }
      earlier = later;
    }
    expect(breaks).toEqual([]);
    // And reading again changes nothing: no clock or counter in the rendering.
    const again = await readAll();
    for (const format of CONTEXT_FORMATS) expect(JSON.stringify(again[format].messages)).toBe(JSON.stringify(earlier[format].messages));
  });

  describe('anthropic breakpoints', () => {
    let sessionId: string;
    beforeAll(async () => {
      ({ id: sessionId } = await client.createSession(key, { model: 'claude-sonnet-4-5', system: SYSTEM }));
      for (const event of SESSION) await append(sessionId, event);
    });

    it('off by default: no marker, system a string', async () => {
      const ctx = await okContext(sessionId, { format: 'anthropic', tools: 'tool_output_cache' });
      expect(marks(ctx)).toBe(0);
      expect(ctx.system).toBe(SYSTEM);
    });

    it('per read (cacheBreakpoints=5m): system, tools and the last block marked; the SDK sends it and the strict stub accepts it', async () => {
      const ctx = await okContext(sessionId, { format: 'anthropic', tools: 'tool_output_cache', cacheBreakpoints: '5m' });
      expect(ctx.system).toEqual([{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }]);
      expect(ctx.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' });
      expect(ctx.messages.at(-1).content.at(-1)).toEqual({ type: 'text', text: 'One test fails; the diff adds 300 lines.', cache_control: { type: 'ephemeral' } });
      expect(marks(ctx)).toBe(3);
      const before = stub.requests.length;
      const reply = await send(ctx);
      expect(stub.requests[before].problems).toEqual([]);
      expect(stub.requests[before].body.system).toEqual(ctx.system);
      expect(stub.requests[before].body.messages).toEqual(ctx.messages);
      expect(reply.content[0]).toMatchObject({ type: 'text', text: 'ok' });
    });

    it('per session (config cache.breakpoints=1h), after a pin: four markers, all 1h, accepted', async () => {
      const { id } = await client.createSession(key, { model: 'claude-sonnet-4-5', system: SYSTEM, config: { cache: { breakpoints: '1h' } } });
      await append(id, SESSION[0]);
      expect((await client.request('POST', `/v1/sessions/${id}/pins`, { key, body: { text: 'Deploys go through staging.' } })).status).toBe(201);
      for (const event of SESSION.slice(1)) await append(id, event);
      const ctx = await okContext(id, { format: 'anthropic', tools: 'tool_output_cache' });
      expect(marks(ctx)).toBe(4);
      expect(JSON.stringify(ctx).match(/"cache_control":\{"type":"ephemeral","ttl":"1h"\}/g)).toHaveLength(4);
      const before = stub.requests.length;
      await send(ctx);
      expect(stub.requests[before].problems).toEqual([]);
      // The read's own value wins over the session's.
      expect(marks(await okContext(id, { format: 'anthropic', cacheBreakpoints: 'off' }))).toBe(0);
    });

    it('the stub is strict: a fifth marker, or a 1h one after 5m, is a 400 through the SDK', async () => {
      const ctx = await okContext(sessionId, { format: 'anthropic', tools: 'tool_output_cache', cacheBreakpoints: '5m' });
      ctx.messages[0].content[0].cache_control = { type: 'ephemeral' };
      ctx.messages[1].content[0].cache_control = { type: 'ephemeral' };
      await expect(send(ctx)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('A maximum of 4 blocks with cache_control') });
      delete ctx.messages[1].content[0].cache_control;
      ctx.messages[0].content[0].cache_control = { type: 'ephemeral', ttl: '1h' };
      await expect(send(ctx)).rejects.toMatchObject({ status: 400, message: expect.stringContaining("ttl='1h' breakpoint must not come after") });
    });

    it('other formats ignore it; a bad value is a 400, in the query and in the config', async () => {
      expect(marks(await okContext(sessionId, { format: 'openai', cacheBreakpoints: '1h' }))).toBe(0);
      expect((await context(sessionId, { format: 'anthropic', cacheBreakpoints: '2h' })).status).toBe(400);
      const res = await client.request('POST', '/v1/sessions', { key, body: { model: 'gpt-4.1', config: { cache: { breakpoints: 'always' } } } });
      expect(res.status).toBe(400);
      expect(res.text).toContain('cache.breakpoints');
    });
  });
});
