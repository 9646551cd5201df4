import { renderRecord, SPEC_000_SUMMARY_PROMPT, templateForStrategy } from '@app/domain';
import { Agent, agentSession } from './support/agent-script';
import { Client } from './support/client';
import { LlmRequest, LlmStub, startLlmStub, stubSummary } from './support/llm-stub';
import { startService, TestService } from './support/service';

/**
 * The LLM summarizers against a local server speaking the OpenAI Chat
 * Completions and Anthropic Messages APIs (the official SDKs unchanged),
 * and the fallback chain when they fail: a 500, a timeout, an empty or
 * oversized answer, the summarizer's own context_length_exceeded. Every
 * failure ends in one committed pivot, never a loop, never a 5xx to the client.
 */
describe('compaction with LLM summarizers', () => {
  let stub: LlmStub;
  let service: TestService;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    stub = await startLlmStub();
    service = await startService({
      env: {
        OPENAI_BASE_URL: `${stub.url}/v1`,
        OPENAI_API_KEY: 'sk-test',
        ANTHROPIC_BASE_URL: stub.url,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        SUMMARIZER_RETRY_BACKOFF_MS: '50',
      },
    });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant());
  });
  afterAll(async () => {
    await service?.stop();
    await stub?.close();
  });

  /** A session summarized by `summarizer` with the scripted model; returns it with the stub calls its first compaction made. */
  async function compactOnce(id: string, summarizer: 'openai' | 'anthropic', compaction: Record<string, unknown>) {
    const agent = await agentSession(client, key, id, { compaction: { summarizer, ...compaction } });
    const from = stub.requests.length;
    const { markerSeq, turns } = await agent.untilMarker();
    const entry = await agent.settled(markerSeq);
    return { agent, markerSeq, turns, entry, calls: stub.requests.slice(from) };
  }

  /** One marker, one pivot, nothing pending: the failure did not loop. */
  async function expectSettledOnce(agent: Agent) {
    const events = await agent.events();
    expect(events.filter((e) => e.type === 'compaction.requested')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'compaction.completed')).toHaveLength(1);
    const { compaction } = await agent.state();
    expect(compaction).toMatchObject({ state: 'idle', pendingMarkerSeq: null, suppressedReason: null });
    await agent.expectValidForProviders();
  }

  it('openai: the prompt has no tools and ends with the instruction; a second compaction gets the first record, in the template, as <previous-summary>', async () => {
    const { agent, entry, calls, turns } = await compactOnce('openai-ok', 'openai', { model: 'stub-ok' });
    expect(entry).toMatchObject({ status: 'completed', model: 'stub-ok', strategy: 'retain-summary', failures: [] });
    expect(calls).toHaveLength(1);
    const [first] = calls;
    expect(first).toMatchObject({ api: 'openai', problems: [], system: 'You are a careful coding agent.' });
    expect(first.body.max_completion_tokens).toBe(8_000);
    expect(first.messages.at(-1)!.content).toContain(SPEC_000_SUMMARY_PROMPT);
    expect(first.messages.map((m) => m.content).join('\n')).toContain('src/module1.ts');
    // The model's summary leads; the retention check may append a Carried Forward section.
    expect(entry.summary.slice(0, stubSummary(first).length)).toBe(stubSummary(first));

    // The history shows the retention figures; the record only on request.
    expect(entry.retention).toMatchObject({ ratio: 1, critical: expect.any(Number), carried: expect.any(Number) });
    expect(entry.retention.summarizerRatio).toBeLessThan(1);
    expect(entry).not.toHaveProperty('record');
    const { record } = (await client.request('GET', `${agent.path}/compactions?include=record`, { key })).body.compactions[0];
    expect(record).toMatchObject({ v: 1, goal: [expect.objectContaining({ text: expect.stringContaining('Turn 1: fix the failing test') })] });

    const from = stub.requests.length;
    const { markerSeq } = await agent.untilMarker(turns + 1);
    const second = await agent.settled(markerSeq);
    expect(second.status).toBe('completed');
    const [call] = stub.requests.slice(from);
    // The structured record, not the model's text, and the sections the record has.
    const instruction = call.messages.at(-1)!.content;
    expect(instruction).toContain(`<previous-summary>\n${renderRecord(record, templateForStrategy('retain-summary'))}\n</previous-summary>`);
    expect(instruction).toContain('leave out a section with nothing to say:\n## 1. Task Overview\n### Goal');
    await agent.expectValidForProviders();
  });

  it('anthropic: the Messages API with the system apart and max_tokens, through the official SDK', async () => {
    const { agent, entry, calls } = await compactOnce('anthropic-ok', 'anthropic', { model: 'stub-ok', summaryMaxTokens: 3_000 });
    expect(entry).toMatchObject({ status: 'completed', model: 'stub-ok', failures: [] });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ api: 'anthropic', problems: [], system: 'You are a careful coding agent.' });
    expect(calls[0].body.max_tokens).toBe(3_000);
    expect(entry.summary.slice(0, stubSummary(calls[0]).length)).toBe(stubSummary(calls[0]));
    await expectSettledOnce(agent);
  });

  it('a 500 is retried with backoff, then the heuristic summary is used', async () => {
    const { agent, entry, calls } = await compactOnce('llm-500', 'openai', { model: 'stub-500', maxAttempts: 2 });
    expect(calls).toHaveLength(2);
    expect(calls[1].receivedAt - calls[0].receivedAt).toBeGreaterThanOrEqual(50);
    expect(entry).toMatchObject({ status: 'completed', model: 'heuristic', strategy: 'retain-summary' });
    expect(entry.failures).toEqual([
      expect.objectContaining({ attempt: 1, fallback: 'retry', error: expect.stringMatching(/^error: HTTP 500/) }),
      expect.objectContaining({ attempt: 2, fallback: 'heuristic', error: expect.stringMatching(/^error: HTTP 500/) }),
    ]);
    expect((await agent.state()).compaction.lastError).toMatch(/^error: HTTP 500/);
    await expectSettledOnce(agent);
  });

  it('a summarizer slower than its timeout is aborted, then the heuristic summary is used', async () => {
    const { agent, entry, calls } = await compactOnce('llm-timeout', 'anthropic', { model: 'stub-slow-5000', timeoutMs: 1_000, maxAttempts: 1 });
    expect(calls).toHaveLength(1);
    expect(entry.failures).toEqual([expect.objectContaining({ attempt: 1, fallback: 'heuristic', error: 'timeout: no answer within 1000 ms' })]);
    expect(entry).toMatchObject({ status: 'completed', model: 'heuristic' });
    expect(entry.durationMs).toBeLessThan(4_000);
    await expectSettledOnce(agent);
  });

  it.each([
    ['empty', 'stub-empty', {}, /^empty: /],
    ['oversized', 'stub-oversized', { summaryMaxTokens: 500 }, /^oversized: the summary is \d+ tokens, above the 500-token target/],
  ] as const)('an %s answer is refused at once, then the heuristic summary is used', async (name, model, extra, error) => {
    const { agent, entry, calls } = await compactOnce(`llm-${name}`, 'openai', { model, ...extra });
    expect(calls).toHaveLength(1);
    expect(entry.failures).toEqual([expect.objectContaining({ attempt: 1, fallback: 'heuristic', error: expect.stringMatching(error) })]);
    expect(entry).toMatchObject({ status: 'completed', model: 'heuristic' });
    await expectSettledOnce(agent);
  });

  it.each(['openai', 'anthropic'] as const)(
    '%s: context_length_exceeded on its own input drops the oldest head items with their pairs and retries',
    async (summarizer) => {
      const limit = 6_000;
      const { agent, entry, calls } = await compactOnce(`llm-overflow-${summarizer}`, summarizer, { model: `stub-overflow-${limit}` });
      const size = (call: LlmRequest) => call.messages.reduce((sum, m) => sum + m.content.length, 0);
      expect(calls.length).toBeGreaterThan(1);
      expect(size(calls[0])).toBeGreaterThan(limit);
      expect(size(calls.at(-1)!)).toBeLessThanOrEqual(limit);
      expect(calls.at(-1)!.messages.length).toBeLessThan(calls[0].messages.length);
      expect(calls.every((call) => call.problems.length === 0)).toBe(true);
      expect(entry.failures.length).toBe(calls.length - 1);
      expect(entry.failures.every((f: any) => f.fallback === 'trim' && f.error.startsWith('input_overflow: '))).toBe(true);
      expect(entry).toMatchObject({ status: 'completed', model: `stub-overflow-${limit}` });
      // The trimmed items are still covered by the pivot: the whole head leaves the window.
      expect(entry.messagesCompacted).toBeGreaterThan(calls.at(-1)!.messages.length);
      await expectSettledOnce(agent);
    },
  );

  it('appends made while the summarizer is slow land after the pivot, none lost', async () => {
    const agent = await agentSession(client, key, 'slow-summarizer', { compaction: { summarizer: 'openai', model: 'stub-slow-2500' } });
    const from = stub.requests.length;
    const { markerSeq } = await agent.untilMarker();
    // The worker marks the compaction running, then calls the summarizer.
    await stub.received((r, i) => i >= from && r.model === 'stub-slow-2500', 'the summarizer call', 10_000);
    expect((await agent.state()).compaction.state).toBe('running');

    const meanwhile = [
      { id: 'late-user', type: 'message.added', data: { message: { id: 'late-user', role: 'user', parts: [{ type: 'text', text: 'Also update README.md.' }] } } },
      {
        id: 'late-call',
        type: 'message.added',
        data: { message: { id: 'late-call', role: 'assistant', parts: [{ type: 'tool_call', callId: 'late-1', name: 'read', input: { path: 'README.md' } }] } },
      },
      { id: 'late-result', type: 'message.added', data: { message: { id: 'late-result', role: 'tool', parts: [{ type: 'tool_result', callId: 'late-1', name: 'read', output: '# App' }] } } },
      { id: 'late-answer', type: 'message.added', data: { message: { id: 'late-answer', role: 'assistant', parts: [{ type: 'text', text: 'README.md updated.' }] } } },
    ];
    const seqs: number[] = [];
    for (const event of meanwhile) {
      const res = await client.append(key, agent.sessionId, { events: [event] });
      expect(res.status).toBe(201);
      seqs.push(res.body.events[0].seq);
    }
    expect((await agent.state()).compaction.state).toBe('running');

    const entry = await agent.settled(markerSeq);
    expect(entry.status).toBe('completed');
    expect(entry.range.throughSeq).toBeLessThanOrEqual(markerSeq);
    expect(entry.completedSeq).toBeGreaterThan(Math.max(...seqs));
    const context = await agent.context();
    const ids = context.messages.map((m: any) => m.id);
    const positions = meanwhile.map((event) => ids.indexOf(event.id));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    const events = await agent.events();
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(seqs.every((seq) => events[seq - 1].id === meanwhile[seqs.indexOf(seq)].id)).toBe(true);
    await agent.expectValidForProviders();
  });

  it('dry run with an LLM summarizer returns its summary and writes nothing', async () => {
    const agent = await agentSession(client, key, 'dry-llm', { compaction: { summarizer: 'anthropic', model: 'stub-ok', auto: false } });
    for (let turn = 1; turn <= 3; turn++) await agent.turn(turn);
    const head = (await agent.state()).headSeq;
    const from = stub.requests.length;
    const dry = await client.request('POST', `${agent.path}/compactions`, { key, body: { dryRun: true, instructions: 'Name every module.' } });
    expect(dry.status).toBe(200);
    const [call] = stub.requests.slice(from);
    expect(call.messages.at(-1)!.content).toContain('Additional instructions for this summary:\nName every module.');
    expect(dry.body).toMatchObject({ dryRun: true, status: 'completed', model: 'stub-ok' });
    expect(dry.body.summary.slice(0, stubSummary(call).length)).toBe(stubSummary(call));
    expect((await agent.state()).headSeq).toBe(head);
  });
});
