import { validateAnthropicRequest, validateOpenAIChatMessages, validateOpenAIResponsesInput } from '@app/domain';
import { aiSdkSchemaErrors } from '@app/domain/view/testing/ai-sdk-schema';
import { Agent, agentSession, turnEvents } from './support/agent-script';
import { Client } from './support/client';
import { startService, TestService } from './support/service';

/**
 * A read never hands the model more than the usable window (window − output
 * reserve), in any format, at the head, at an `atSeq` and on a fork: over it,
 * the view is fitted for that read (old outputs cleared, then the oldest
 * messages dropped at call/result boundaries) and says so in `fitted`; the log
 * is unchanged. With `wait`, a read over the window while a compaction is
 * pending waits for its pivot instead.
 */
describe('a context that fits the usable window', () => {
  let service: TestService;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    service = await startService();
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('fit'));
  });
  afterAll(() => service?.stop());

  const read = async (agent: Agent, query: string) => {
    const res = await client.request('GET', `${agent.path}/context?${query}`, { key });
    expect(res.status).toBe(200);
    return res.body;
  };
  /** Turns appended in one batch each, 150 output lines a result: a few of them exceed the 14,000 tokens usable. */
  const grow = async (agent: Agent, from: number, through: number) => {
    for (let turn = from; turn <= through; turn++) await agent.append(turnEvents(agent.sessionId, turn, 150));
  };

  describe('given a session over its usable window with automatic compaction off', () => {
    let agent: Agent;
    let whole: any;

    beforeAll(async () => {
      agent = await agentSession(client, key, 'fit-manual', { compaction: { auto: false } });
      await grow(agent, 1, 12);
      whole = (await agent.state()).tokens;
    });

    it('when the context is read, then it fits, reports the fit, and every provider accepts it', async () => {
      expect(whole.estimated).toBeGreaterThan(whole.usable);
      for (const format of ['neutral', 'openai', 'openai-responses', 'anthropic', 'ai-sdk']) {
        const context = await read(agent, `format=${format}`);
        expect({ format, fits: context.tokens.estimated <= context.tokens.usable }).toEqual({ format, fits: true });
        expect(context.fitted).toMatchObject({ tokensBefore: whole.estimated });
        expect(context.fitted.clearedOutputs).toBeGreaterThan(0);
        if (format === 'anthropic') expect(validateAnthropicRequest({ system: context.system, messages: context.messages })).toEqual([]);
        if (format === 'openai') expect(validateOpenAIChatMessages(context.messages)).toEqual([]);
        if (format === 'openai-responses') expect(validateOpenAIResponsesInput(context.messages)).toEqual([]);
        if (format === 'ai-sdk') expect(aiSdkSchemaErrors(context.messages)).toEqual([]);
      }
    });

    it('then old outputs are placeholders with refs the agent can still read, and the log keeps every output whole', async () => {
      const context = await read(agent, 'format=neutral');
      const results = context.messages.flatMap((m: any) => m.parts).filter((p: any) => p.type === 'tool_result');
      const cleared = results.filter((p: any) => p.output.startsWith('[tool output trimmed; ref='));
      expect(cleared.length).toBeGreaterThan(0);
      const ref = /ref=([^\]]+)\]/.exec(cleared[0].output)![1];
      const stored = await client.request('GET', `/v1/tool-outputs/${encodeURIComponent(ref)}`, { key });
      expect(stored.status).toBe(200);
      const logged = (await agent.events()).filter((e) => e.type === 'message.added' && e.data.message.role === 'tool');
      expect(logged).toHaveLength(12);
      expect(logged.every((e) => e.data.message.parts[0].output.startsWith('FAIL src/module'))).toBe(true);
    });

    it('then the session state still reports the whole figure, which the trigger compares', async () => {
      expect((await agent.state()).tokens.estimated).toBe(whole.estimated);
    });

    it('when it is far over the window, then the oldest messages are dropped whole, with a notice, never a call without its result', async () => {
      // Long pasted text the fit cannot clear: only dropping the oldest messages makes room.
      const pasted = (n: number) => `Pasted log ${n}:\n${Array.from({ length: 120 }, (_, i) => `line ${i} of run ${n}: worker ${i % 7} idle`).join('\n')}`;
      for (let n = 1; n <= 12; n++) await agent.append([{ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: pasted(n) }] } } }]);
      await grow(agent, 13, 14);
      const context = await read(agent, 'format=neutral');
      expect(context.tokens.estimated).toBeLessThanOrEqual(context.tokens.usable);
      expect(context.fitted.droppedThroughSeq).toBeGreaterThan(1);
      const notice = context.messages.find((m: any) => m.metadata?.kind === 'fitted_context');
      expect(notice.parts[0].text).toContain(`through seq ${context.fitted.droppedThroughSeq}`);
      const parts = context.messages.flatMap((m: any) => m.parts);
      const calls = parts.filter((p: any) => p.type === 'tool_call').map((p: any) => p.callId);
      expect(parts.filter((p: any) => p.type === 'tool_result').map((p: any) => p.callId)).toEqual(calls);
      const anthropic = await read(agent, 'format=anthropic');
      expect(validateAnthropicRequest({ system: anthropic.system, messages: anthropic.messages })).toEqual([]);
    });

    it('when read at an earlier seq, then that view is fitted too', async () => {
      const events = await agent.events();
      const atSeq = events[Math.floor(events.length * 0.6)].seq;
      const context = await read(agent, `format=openai&atSeq=${atSeq}`);
      expect(context.atSeq).toBe(atSeq);
      expect(context.tokens.estimated).toBeLessThanOrEqual(context.tokens.usable);
      expect(context.fitted).not.toBeNull();
    });

    it('when forked, then the fork reads a fitted view as well', async () => {
      const res = await client.request('POST', `${agent.path}/forks`, { key, body: { id: 'fit-manual-fork' } });
      expect(res.status).toBe(201);
      const forked = new Agent(client, key, 'fit-manual-fork');
      const context = await read(forked, 'format=anthropic');
      expect(context.tokens.estimated).toBeLessThanOrEqual(context.tokens.usable);
      expect(context.fitted).not.toBeNull();
      expect(validateAnthropicRequest({ system: context.system, messages: context.messages })).toEqual([]);
    });
  });

  describe('given one append that takes a session with automatic compaction over its usable window', () => {
    it('when the context is read with wait, then the read waits for the pivot and returns the compacted view unfitted', async () => {
      const agent = await agentSession(client, key, 'fit-wait');
      const appended = await agent.append(Array.from({ length: 12 }, (_, i) => turnEvents('fit-wait', i + 1, 150)).flat());
      expect(appended.compaction.pendingMarkerSeq).toBeGreaterThan(0);
      const context = await read(agent, 'format=neutral&wait=30');
      expect(context.pivotSeq).toBeGreaterThan(appended.compaction.pendingMarkerSeq);
      expect(context.fitted).toBeNull();
      expect(context.tokens.estimated).toBeLessThanOrEqual(context.tokens.threshold);
      expect(context.compaction.state).toBe('idle');
    });

    it('when wait is out of range, then 400 and nothing is read', async () => {
      const agent = await agentSession(client, key, 'fit-wait-bad');
      const res = await client.request('GET', `${agent.path}/context?wait=31`, { key });
      expect(res.status).toBe(400);
    });
  });
});
