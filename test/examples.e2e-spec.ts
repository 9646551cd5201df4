import { runTool } from '../examples/tools';
import { Client } from './support/client';
import { runExample } from './support/examples';
import { AgentScript, ProviderStub, startProviderStub } from './support/provider-stub';
import { StubUsage } from './support/provider-wire';
import { startService, TestService } from './support/service';

/**
 * The agent-loop examples (examples/*.ts), built to dist/examples, each run
 * as a program against the real service and a stub provider that plays one
 * task: first both tools called at once, then a final answer once their
 * results arrive. Proves that each example type-checks against its SDK, sends
 * requests the provider accepts, and that its native appends (the SDK's
 * response object whole, the results in the SDK's shape) log each step as
 * the service expects.
 */

const SCRIPT: AgentScript = {
  calls: [
    { name: 'run_tests', input: { package: 'packages/client' } },
    { name: 'read_file', input: { path: 'build.log' } },
  ],
  finalText: 'All 42 tests pass and build.log shows no errors.',
  usage: {
    calls: { input: 900, cacheRead: 300, cacheWrite: 40, output: 25 },
    final: { input: 150, cacheRead: 1100, cacheWrite: 0, output: 12 },
  },
};

type LoggedUsage = { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_creation_tokens?: number };
/** The stub's OpenAI answers report no cache writes, so none is logged for them (the AI SDK's neither). */
const openAIUsage = (u: StubUsage): LoggedUsage => ({ input_tokens: u.input, output_tokens: u.output, cache_read_tokens: u.cacheRead });

/** Each example, the provider route it calls, and the usage it should log for a stub figure. */
const CASES: Array<{ example: string; path: string; usage: (u: StubUsage) => LoggedUsage }> = [
  { example: 'openai-chat', path: '/v1/chat/completions', usage: openAIUsage },
  { example: 'openai-responses', path: '/v1/responses', usage: openAIUsage },
  { example: 'anthropic', path: '/v1/messages', usage: (u) => ({ ...openAIUsage(u), cache_creation_tokens: u.cacheWrite }) },
  { example: 'ai-sdk', path: '/v1/responses', usage: openAIUsage },
];

/** Text content: a string, or text parts/blocks. */
const textOf = (content: any): string => (typeof content === 'string' ? content : content.map((c: any) => c.text).join(''));

/** The tool results a provider request carries, by call id, in each API's shape. */
function toolResultsIn(path: string, body: any): Record<string, string> {
  const pairs: Array<[string, string]> =
    path === '/v1/chat/completions'
      ? body.messages.filter((m: any) => m.role === 'tool').map((m: any) => [m.tool_call_id, textOf(m.content)])
      : path === '/v1/responses'
        ? body.input.filter((i: any) => i.type === 'function_call_output').map((i: any) => [i.call_id, textOf(i.output)])
        : body.messages
            .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
            .filter((b: any) => b.type === 'tool_result')
            .map((b: any) => [b.tool_use_id, textOf(b.content)]);
  return Object.fromEntries(pairs);
}


describe('agent-loop examples with the official SDKs', () => {
  let service: TestService;
  let stub: ProviderStub;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    [service, stub] = await Promise.all([startService({ worker: false }), startProviderStub({ agent: SCRIPT })]);
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('examples'));
  });
  afterAll(async () => {
    await stub?.close();
    await service?.stop();
  });

  it.each(CASES)('$example runs the task to its end and logs every step', async ({ example, path, usage }) => {
    const before = stub.requests.length;
    const { code, output } = await runExample(example, [], {
      SESSION_STORE_URL: service.baseUrl,
      SESSION_STORE_KEY: key,
      OPENAI_BASE_URL: `${stub.url}/v1`,
      OPENAI_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: stub.url,
      ANTHROPIC_API_KEY: 'test-key',
    });
    // One summary line and nothing else (no SDK warning either), its figures summed from the logged usage.
    const sessionId = output.match(/^\S+: session (\S+),/)?.[1];
    const { calls: first, final } = SCRIPT.usage;
    const logged = [usage(first), usage(final)];
    const input = logged.reduce((n, u) => n + u.input_tokens + u.cache_read_tokens + (u.cache_creation_tokens ?? 0), 0);
    expect({ code, output }).toEqual({
      code: 0,
      output: `${example}: session ${sessionId}, 2 steps, 2 tool calls, ${input} input and ${first.output + final.output} output tokens: "${SCRIPT.finalText}"\n`,
    });

    // Two valid requests: the calls, then (with both results) the final answer.
    const requests = stub.requests.slice(before);
    expect(requests.map((r) => [r.path, r.problems])).toEqual([
      [path, []],
      [path, []],
    ]);
    const callIds = [`call_${before + 1}_0`, `call_${before + 1}_1`];
    expect(toolResultsIn(path, requests[0].body)).toEqual({});
    const results = toolResultsIn(path, requests[1].body);
    expect(Object.keys(results)).toEqual(callIds);
    expect(results[callIds[0]]).toBe('packages/client: 42 passed, 0 failed (3.1 s)');
    expect(results[callIds[1]]).toContain('[build] compiled module 1 of 3000');

    const events = await client.allEvents(key, sessionId!);
    const messages = events.filter((e) => e.type === 'message.added').map((e) => ({ seq: e.seq, ...e.data.message }));
    const steps = events.filter((e) => e.type === 'step.finished');
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const [, calls, toolMessage, answer] = messages;

    expect(calls.parts).toEqual(SCRIPT.calls.map((c, i) => ({ type: 'tool_call', callId: callIds[i], ...c })));
    // The results named as their calls; the 136 KB log kept whole in the tool-output cache.
    const log = runTool('read_file', { path: 'build.log' }).output;
    expect(toolMessage.parts).toEqual([
      expect.objectContaining({ type: 'tool_result', callId: callIds[0], name: 'run_tests', output: results[callIds[0]] }),
      expect.objectContaining({ type: 'tool_result', callId: callIds[1], name: 'read_file' }),
    ]);
    expect(toolMessage.parts.some((part: any) => part.isError)).toBe(false);
    expect(toolMessage.parts[1].outputRef).toMatchObject({ byte_size: Buffer.byteLength(log), line_count: 3001 });
    expect(answer.parts).toEqual([{ type: 'text', text: SCRIPT.finalText }]);

    // Each step's usage in our field names, measured at the context the call was sent with.
    expect(steps.map((s) => [s.data.usage, s.data.contextSeq])).toEqual([
      [usage(SCRIPT.usage.calls), calls.seq - 1],
      [usage(SCRIPT.usage.final), answer.seq - 1],
    ]);
    // Each step.finished appended with its response, before the tools ran.
    expect(steps.map((s) => s.seq)).toEqual([calls.seq + 1, answer.seq + 1]);
  });
});
