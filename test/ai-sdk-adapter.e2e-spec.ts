import { Client } from './support/client';
import { runExample, TOOLS_TASK } from './support/examples';
import { AgentScript, ProviderStub, startProviderStub } from './support/provider-stub';
import { startService, TestService } from './support/service';

/**
 * @session-store/ai-sdk with the real Vercel AI SDK (`generateText` and
 * `streamText`, `@ai-sdk/openai` on the Responses API) against the service
 * and the strict provider stub. `ai` is ESM only, which this Jest setup does
 * not load, so the SDK runs in the built example (examples/ai-sdk-chat.ts)
 * as its own process: two turns on a new session, then, after a
 * compaction, two more on the same session.
 */

const SCRIPT = TOOLS_TASK;


/** A Responses input item as role/type and text. */
const itemText = (item: any): string => {
  if (item.type === 'function_call') return `call ${item.name}`;
  if (item.type === 'function_call_output') return `result ${typeof item.output === 'string' ? item.output.slice(0, 60) : 'parts'}`;
  const text = typeof item.content === 'string' ? item.content : item.content.map((part: any) => part.text).join('');
  return `${item.role} ${text}`;
};

const turn = (question: string) => [
  `user ${question}`,
  'call run_tests',
  'call read_file',
  'result packages/client: 42 passed, 0 failed (3.1 s)',
  expect.stringMatching(/^result /),
  `assistant ${SCRIPT.finalText}`,
];
const FIRST = 'Run the tests of packages/client.';
const SECOND = 'Now check build.log.';

describe('Vercel AI SDK chat persistence (@session-store/ai-sdk)', () => {
  let service: TestService;
  let stub: ProviderStub;
  let client: Client;
  let key: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    [service, stub] = await Promise.all([startService(), startProviderStub({ agent: SCRIPT })]);
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('ai-sdk'));
    env = { SESSION_STORE_URL: service.baseUrl, SESSION_STORE_KEY: key, OPENAI_BASE_URL: `${stub.url}/v1`, OPENAI_API_KEY: 'test-key' };
  });
  afterAll(async () => {
    await stub?.close();
    await service?.stop();
  });

  it('generateText and streamText run their tool loops on the store’s context, every step saved whole; after a compaction the next call is sent the compacted view', async () => {
    const first = await runExample('ai-sdk-chat', [], env);
    expect(first.output).toMatch(/^generateText: 2 steps: "All 42 tests pass[^\n]*"\nstreamText: 2 steps: "All 42 tests pass[^\n]*"\nsession \S+\n$/);
    expect(first.code).toBe(0);
    const sessionId = first.output.match(/^session (\S+)$/m)![1];

    // Four valid requests, the last two streamed; each sent the store's context: the system prompt as instructions, then the chat.
    const requests = stub.requests.slice(0, 4);
    expect(requests.map((r) => [r.path, r.body.stream === true, r.problems])).toEqual([
      ['/v1/responses', false, []],
      ['/v1/responses', false, []],
      ['/v1/responses', true, []],
      ['/v1/responses', true, []],
    ]);
    const inputs = requests.map((r) => r.body.input.map(itemText));
    const system = 'system You are a careful coding agent.';
    expect(inputs[0]).toEqual([system, `user ${FIRST}`]);
    expect(inputs[1]).toEqual([system, ...turn(FIRST).slice(0, -1)]);
    expect(inputs[2]).toEqual([system, ...turn(FIRST), `user ${SECOND}`]);
    expect(inputs[3]).toEqual([system, ...turn(FIRST), ...turn(SECOND).slice(0, -1)]);
    // The 136 KB log reached the model as the store's cut view (the store keeps it whole).
    const logResult = requests[1].body.input.find((item: any) => item.type === 'function_call_output' && item.call_id === 'call_1_1');
    expect(logResult.output.length).toBeLessThan(136_000);

    // The log: each step's messages as the SDK returned them, and its usage at the context it was sent with.
    const events = await client.allEvents(key, sessionId);
    const messages = events.filter((e) => e.type === 'message.added');
    expect(messages.map((e) => e.data.message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
    const steps = events.filter((e) => e.type === 'step.finished');
    const usage = (u: AgentScript['usage']['calls']) => ({ input_tokens: u.input, output_tokens: u.output, cache_read_tokens: u.cacheRead });
    expect(steps.map((s) => s.data.usage)).toEqual([SCRIPT.usage.calls, SCRIPT.usage.final, SCRIPT.usage.calls, SCRIPT.usage.final].map(usage));
    expect(steps.map((s) => s.data.finishReason)).toEqual(['tool-calls', 'stop', 'tool-calls', 'stop']);
    // Each step measured the context read just before its call: the head right before the step's own messages.
    const answers = messages.filter((e) => e.data.message.role === 'assistant');
    expect(steps.map((s) => s.data.contextSeq)).toEqual(answers.map((e) => e.seq - 1));

    // Compact, then continue the same session: its first call is sent the compacted view.
    const compaction = await client.request('POST', `/v1/sessions/${sessionId}/compactions`, { key, body: { wait: true } });
    expect(compaction.body.status).toBe('completed');
    const history = await client.request('GET', `/v1/sessions/${sessionId}/compactions`, { key });
    const summary: string = history.body.compactions[0].summary;
    const second = await runExample('ai-sdk-chat', [sessionId], env);
    expect(second.code).toBe(0);
    const next = stub.requests.slice(4);
    expect(next.map((r) => r.problems)).toEqual([[], [], [], []]);
    const compacted = next[0].body.input.map(itemText);
    expect(compacted.some((item: string) => item.includes(summary))).toBe(true);
    expect(compacted.length).toBeLessThan(inputs[3].length);
    expect(compacted.at(-1)).toBe(`user ${FIRST}`);
    // The turn goes on from there, saved like the others.
    expect(next[1].body.input.map(itemText)).toEqual([...compacted, ...turn(FIRST).slice(1, -1)]);
    const after = (await client.allEvents(key, sessionId)).filter((e) => e.type === 'step.finished');
    expect(after).toHaveLength(8);
  });
});
