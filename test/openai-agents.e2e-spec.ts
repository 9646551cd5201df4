import { Agent, AgentInputItem, Runner, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { SessionStoreClient } from '@session-store/client';
import { SessionStoreSession } from '@session-store/openai-agents';
import { Client } from './support/client';
import { TOOLS_TASK } from './support/examples';
import { ProviderStub, startProviderStub } from './support/provider-stub';
import { startService, TestService } from './support/service';

/**
 * The OpenAI Agents SDK's own runner, with a SessionStoreSession as its
 * memory, against the real service and a strict stub of the Responses API:
 * a tool-using agent over several runs, a compaction between them, then the
 * next run sent the compacted view; popItem and clearSession on the result.
 */

const SCRIPT = TOOLS_TASK;

const runTests = tool({
  name: 'run_tests',
  description: 'Run the test suite of a package',
  parameters: z.object({ package: z.string() }),
  execute: async ({ package: name }) => `${name}: 42 passed, 0 failed`,
});
const readFile = tool({
  name: 'read_file',
  description: 'Read a file of the workspace',
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => `${path}: [build] compiled 3000 modules, no errors`,
});
/**
 * The SDK sends the ids of the items the model just returned back with the
 * next call, which only a provider that stored them accepts; the stub, like
 * the API with `store: false`, stores nothing. So the runner sends them
 * without ids (the items from the session have none: the log does not keep
 * the provider's ids).
 */
const runner = new Runner({
  callModelInputFilter: ({ modelData }) => ({ ...modelData, input: modelData.input.map(({ id: _id, ...item }) => item) }),
});
const run = (agent: Agent, input: string, options: { session: SessionStoreSession }) => runner.run(agent, input, options);
const agent = new Agent({ name: 'coder', instructions: 'You are a careful coding agent.', model: 'gpt-4.1', tools: [runTests, readFile] });

/** What the model was sent in one request, as role/type and text. */
const inputOf = (body: any): string[] =>
  body.input.map((item: any) => {
    if (item.type === 'function_call') return `call ${item.name}`;
    if (item.type === 'function_call_output') return `result ${item.output}`;
    const text = typeof item.content === 'string' ? item.content : item.content.map((part: any) => part.text).join('');
    return `${item.role} ${text}`;
  });

/** The items as the SDK holds them, reduced as inputOf reduces the requests. */
const itemsOf = (items: AgentInputItem[]): string[] =>
  items.map((item) => {
    if (item.type === 'function_call') return `call ${item.name}`;
    if (item.type === 'function_call_result') return `result ${typeof item.output === 'string' ? item.output : JSON.stringify(item.output)}`;
    if ('role' in item) {
      const content = item.content;
      const text = typeof content === 'string' ? content : content.map((part) => ('text' in part ? part.text : part.type === 'refusal' ? part.refusal : '')).join('');
      return `${item.role} ${text}`;
    }
    return item.type;
  });

const turn = (question: string) => [
  `user ${question}`,
  'call run_tests',
  'call read_file',
  'result packages/client: 42 passed, 0 failed',
  'result build.log: [build] compiled 3000 modules, no errors',
  `assistant ${SCRIPT.finalText}`,
];

describe('OpenAI Agents SDK session (@session-store/openai-agents)', () => {
  let service: TestService;
  let stub: ProviderStub;
  let store: SessionStoreClient;

  beforeAll(async () => {
    [service, stub] = await Promise.all([startService(), startProviderStub({ agent: SCRIPT })]);
    const { key } = await new Client(service.baseUrl).createTenant('openai-agents');
    store = new SessionStoreClient({ baseUrl: service.baseUrl, apiKey: key });
    setDefaultOpenAIClient(new OpenAI({ baseURL: `${stub.url}/v1`, apiKey: 'test-key' }));
    setOpenAIAPI('responses');
    setTracingDisabled(true);
  });
  afterAll(async () => {
    await stub?.close();
    await service?.stop();
  });

  it('runs a tool-using agent over several runs, across a compaction, with the view as its history', async () => {
    const session = new SessionStoreSession({ client: store, create: { model: 'gpt-4.1', config: { compaction: { auto: false } } } });
    expect(await session.getItems()).toEqual([]);

    // Three runs: each the calls, then the answer once both results are in.
    const questions = ['Run the tests', 'Run them again', 'And once more'];
    for (const [index, question] of questions.entries()) {
      const before = stub.requests.length;
      const result = await run(agent, question, { session });
      expect(result.finalOutput).toBe(SCRIPT.finalText);
      const requests = stub.requests.slice(before);
      expect(requests.map((r) => r.problems)).toEqual([[], []]);
      // The run's first request: every earlier turn read back from the store, then the question.
      expect(inputOf(requests[0].body)).toEqual([...questions.slice(0, index).flatMap((q) => turn(q)), `user ${question}`]);
    }
    const sessionId = await session.getSessionId();
    expect(itemsOf(await session.getItems())).toEqual(questions.flatMap((q) => turn(q)));
    expect(itemsOf(await session.getItems(2))).toEqual(turn(questions[2]).slice(-2));

    // The log holds each turn in the service's own shapes: the results named as their calls.
    const events = await store.api.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId }, query: { types: ['message.added'] } } });
    const messages = events.data!.events.flatMap((e) => (e.type === 'message.added' ? [e.data.message] : []));
    expect(messages.map((m) => m.role)).toEqual(questions.flatMap(() => ['user', 'assistant', 'tool', 'assistant']));
    expect(messages[2].parts).toEqual([
      expect.objectContaining({ type: 'tool_result', callId: 'call_1_0', name: 'run_tests' }),
      expect.objectContaining({ type: 'tool_result', callId: 'call_1_1', name: 'read_file' }),
    ]);

    // The SDK's compaction hook: a turn's call leaves compaction to the service's threshold; force compacts now.
    expect(await session.runCompaction()).toBeNull();
    expect((await store.api.GET('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId } } })).data!.compactions).toEqual([]);
    expect(await session.runCompaction({ force: true })).toBeNull();
    const compactions = (await store.api.GET('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId } } })).data!.compactions;
    expect(compactions.map((c) => [c.status, c.auto])).toEqual([['completed', false]]);

    // The view: the summary in place of the compacted turns, the last turn verbatim.
    const compacted = itemsOf(await session.getItems());
    expect(compacted.length).toBeLessThan(questions.length * 6);
    expect(compacted.some((item) => item.includes(compactions[0].summary!))).toBe(true);
    expect(compacted.slice(-6)).toEqual(turn(questions[2]));

    // A turn the compaction kept verbatim can still be popped: the answer goes, the summary stays.
    const popped = await session.popItem();
    expect(popped && itemsOf([popped])).toEqual([`assistant ${SCRIPT.finalText}`]);
    const view = compacted.slice(0, -1);
    expect(itemsOf(await session.getItems())).toEqual(view);

    // The next run is sent that view, and goes on.
    const before = stub.requests.length;
    const result = await run(agent, 'Ship it', { session });
    expect(result.finalOutput).toBe(SCRIPT.finalText);
    const requests = stub.requests.slice(before);
    expect(requests.map((r) => r.problems)).toEqual([[], []]);
    expect(inputOf(requests[0].body)).toEqual([...view, 'user Ship it']);
    expect(itemsOf(await session.getItems())).toEqual([...view, ...turn('Ship it')]);
  });

  it('popItem rewinds the last item off the view and returns it; clearSession starts over with the same id', async () => {
    const session = new SessionStoreSession({ client: store, create: { model: 'gpt-4.1', system: 'Work in /repo.' } });
    await run(agent, 'Run the tests', { session });
    const items = await session.getItems();
    // The session's system prompt is the view's first item, the SDK's turn after it.
    expect(itemsOf(items)).toEqual(['system Work in /repo.', ...turn('Run the tests')]);

    // The answer, then the second of two results appended together: its call now reads as aborted (the service's result for a call left unanswered).
    expect(await session.popItem()).toEqual(items.at(-1));
    expect(await session.getItems()).toEqual(items.slice(0, -1));
    expect(await session.popItem()).toEqual(items.at(-2));
    const [call1, call2] = [items[2], items[3]];
    expect(call1.type === 'function_call' && call2.type === 'function_call').toBe(true);
    const aborted = (item: AgentInputItem) => ({ type: 'function_call_result', callId: item.type === 'function_call' ? item.callId : '', output: 'aborted' });
    expect(await session.getItems()).toEqual([...items.slice(0, -2), expect.objectContaining(aborted(call2))]);
    expect(await session.popItem()).toEqual(items.at(-3));
    expect(await session.getItems()).toEqual([...items.slice(0, -3), expect.objectContaining(aborted(call1)), expect.objectContaining(aborted(call2))]);

    // One of two parallel calls cannot be popped alone: the other's id stays issued. Nothing changes.
    const sessionId = await session.getSessionId();
    const { headSeq } = await store.getSession(sessionId);
    await expect(session.popItem()).rejects.toThrow(/cannot pop call call_\d+_1 alone/);
    expect((await store.getSession(sessionId)).headSeq).toBe(headSeq);

    // The log keeps what was popped: the events appended before the pops are all there.
    const { data } = await store.api.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId }, query: { types: ['message.added'] } } });
    expect(data!.events.filter((e) => e.type === 'message.added' && e.data.message.role === 'assistant')).toHaveLength(2);

    // A run after the pops goes on from the view as it now is.
    const before = stub.requests.length;
    await run(agent, 'Only the tests, please', { session });
    expect(inputOf(stub.requests[before].body)).toEqual([
      'system Work in /repo.',
      'user Run the tests',
      'call run_tests',
      'call read_file',
      'result aborted',
      'result aborted',
      'user Only the tests, please',
    ]);

    await session.clearSession();
    expect(await session.getSessionId()).toBe(sessionId);
    expect(itemsOf(await session.getItems())).toEqual(['system Work in /repo.']);
    expect(await session.popItem()).toBeUndefined();
    const { model, system } = await store.getSession(sessionId);
    expect({ model, system }).toEqual({ model: 'gpt-4.1', system: 'Work in /repo.' });
    await run(agent, 'Run the tests', { session });
    expect(itemsOf(await session.getItems())).toEqual(['system Work in /repo.', ...turn('Run the tests')]);
  });

  it('an empty session has no items, a user message with the text of the service’s opening item is one', async () => {
    const session = new SessionStoreSession({ client: store, create: { model: 'gpt-4.1' } });
    expect(await session.getItems()).toEqual([]);
    // Appended as the service's own message: a native append reads this text as the opening and drops it.
    const text = '(conversation continues)';
    await store.append(await session.getSessionId(), [{ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text }] } } }]);
    expect(itemsOf(await session.getItems())).toEqual(['user (conversation continues)']);
    expect(await session.popItem()).toMatchObject({ role: 'user' });
    expect(await session.getItems()).toEqual([]);
  });
});
