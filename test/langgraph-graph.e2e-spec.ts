import { AIMessage, BaseMessage, HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Command, END, interrupt, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import { z } from 'zod';
import { SessionStoreClient } from '@session-store/client';
import { SessionStoreSaver } from '@session-store/langgraph';
import { Client } from './support/client';
import { startService, TestService } from './support/service';

/**
 * A LangGraph tool-calling loop run with SessionStoreSaver on the real
 * service: a stub model node (the tool call, then the answers of
 * @langchain/core's FakeListChatModel), an interrupt() asking a human before
 * the tool runs, resumed with Command by another saver (another process, as
 * it were); time travel from an earlier checkpoint; a session rewind that
 * takes the thread back; an interrupt inside a subgraph (its own
 * checkpoint_ns); the thread's log holding its records and the model view
 * none of them; reads that ask only for what the saver has not seen.
 */

const weather = tool(async ({ city }) => `21°C and sunny in ${city}`, {
  name: 'weather',
  description: 'The weather in a city',
  schema: z.object({ city: z.string() }),
});

function buildGraph(saver: SessionStoreSaver, answers: string[]) {
  const model = new FakeListChatModel({ responses: answers });
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async ({ messages }) => {
      // The stub model: a question gets the tool call, a tool result gets the model's next answer.
      if (messages.at(-1)?.type === 'human') {
        return { messages: [new AIMessage({ content: '', tool_calls: [{ id: 'call_weather', name: 'weather', args: { city: 'Paris' } }] })] };
      }
      return { messages: [await model.invoke(messages)] };
    })
    .addNode('approve', () => {
      const answer: unknown = interrupt({ question: 'Look up the weather in Paris?' });
      return new Command({ goto: answer === 'yes' ? 'tools' : END });
    }, { ends: ['tools', END] })
    .addNode('tools', async ({ messages }) => {
      const last = messages.at(-1);
      const calls = last instanceof AIMessage ? (last.tool_calls ?? []) : [];
      return { messages: await Promise.all(calls.map((call) => weather.invoke({ ...call, type: 'tool_call' }))) };
    })
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', ({ messages }) => (hasToolCalls(messages.at(-1)) ? 'approve' : END), ['approve', END])
    .addEdge('tools', 'agent')
    .compile({ checkpointer: saver });
}

function hasToolCalls(message: BaseMessage | undefined): boolean {
  return message instanceof AIMessage && (message.tool_calls?.length ?? 0) > 0;
}

const texts = (messages: BaseMessage[]) => messages.map((message) => `${message.type}: ${message.text}`);

describe('LangGraph graph with SessionStoreSaver', () => {
  let service: TestService;
  let key: string;
  /** A client noting its reads of a session's log (the afterSeq of each) in `reads`. */
  function client(reads: string[] = []): SessionStoreClient {
    return new SessionStoreClient({
      baseUrl: service.baseUrl,
      apiKey: key,
      fetch: (input, init) => {
        const request = new Request(input, init);
        const url = new URL(request.url);
        if (request.method === 'GET' && url.pathname.endsWith('/events')) reads.push(`afterSeq=${url.searchParams.get('afterSeq')}`);
        return fetch(request);
      },
    });
  }

  beforeAll(async () => {
    service = await startService({ worker: false });
    ({ key } = await new Client(service.baseUrl).createTenant('langgraph-graph'));
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('interrupts, resumes from another saver, time-travels, rewinds, and keeps its records out of the model view', async () => {
    const config = { configurable: { thread_id: 'weather-1' } };
    const first = buildGraph(new SessionStoreSaver({ client: client() }), ['Sunny, 21°C.', 'Still sunny, 21°C.']);

    const interrupted = await first.invoke({ messages: [new HumanMessage('Weather in Paris?')] }, config);
    expect(texts(interrupted.messages)).toEqual(['human: Weather in Paris?', 'ai: ']);
    const paused = await first.getState(config);
    expect(paused.next).toEqual(['approve']);
    expect(paused.tasks[0]?.interrupts.map((i) => i.value)).toEqual([{ question: 'Look up the weather in Paris?' }]);

    // Another saver, with nothing read yet, resumes the thread where it stopped.
    const secondReads: string[] = [];
    const second = buildGraph(new SessionStoreSaver({ client: client(secondReads) }), ['Sunny, 21°C.', 'Still sunny, 21°C.']);
    const resumed = await second.invoke(new Command({ resume: 'yes' }), config);
    expect(texts(resumed.messages)).toEqual(['human: Weather in Paris?', 'ai: ', 'tool: 21°C and sunny in Paris', 'ai: Sunny, 21°C.']);
    expect((await second.getState(config)).next).toEqual([]);

    // Time travel: from the checkpoint that waited for approval, the run goes again on a branch of its own.
    const history = [];
    for await (const snapshot of second.getStateHistory(config)) history.push(snapshot);
    const waiting = history.find((snapshot) => snapshot.next.includes('approve'));
    expect(waiting).toBeDefined();
    const branch = await second.invoke(new Command({ resume: 'yes' }), { configurable: { ...config.configurable, checkpoint_id: waiting?.config.configurable?.checkpoint_id } });
    expect(texts(branch.messages).at(-1)).toBe('ai: Still sunny, 21°C.');
    expect(texts((await second.getState(config)).values.messages).at(-1)).toBe('ai: Still sunny, 21°C.');
    // The first branch is still there, whole.
    const firstHead = history[0];
    expect(texts((await second.getState(firstHead.config)).values.messages).at(-1)).toBe('ai: Sunny, 21°C.');

    // The log holds the thread: checkpoints and writes as records, nothing in the model view.
    const saver = new SessionStoreSaver({ client: client() });
    const sessionId = saver.sessionIdOf('weather-1');
    const store = client();
    const { data: page } = await store.api.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId }, query: { limit: 1000 } } });
    const kinds = new Set(page?.events.flatMap((event) => (event.type === 'record.added' ? [event.data.kind] : [event.type])));
    expect([...kinds].sort()).toEqual(['langgraph.checkpoint', 'langgraph.writes', 'session.created']);
    expect((await store.context(sessionId, { format: 'neutral' })).messages).toEqual([]);

    // A rewind of the session to the checkpoint that waited takes the thread back there, for every saver.
    const waitingRecord = page?.events.find(
      (event) => event.type === 'record.added' && event.data.kind === 'langgraph.checkpoint' && JSON.stringify(event.data.value).includes(String(waiting?.config.configurable?.checkpoint_id)),
    );
    expect(waitingRecord).toBeDefined();
    const rewind = await store.rewind(sessionId, waitingRecord?.seq ?? 0);
    const rewound = await second.getState(config);
    expect(rewound.next).toEqual(['approve']);
    expect(rewound.config.configurable?.checkpoint_id).toBe(waiting?.config.configurable?.checkpoint_id);
    const declined = await second.invoke(new Command({ resume: 'no' }), config);
    expect(texts(declined.messages)).toEqual(['human: Weather in Paris?', 'ai: ']);

    // The second saver read the log once from its start. Its own appends it indexes as they return (those
    // that returned out of order it reads back), and what another client appended (the rewind) it read
    // from where it had read through.
    expect(secondReads[0]).toBe('afterSeq=0');
    expect(secondReads.filter((read) => read === 'afterSeq=0')).toHaveLength(1);
    expect(secondReads).toContain(`afterSeq=${rewind.seq - 1}`);
  });

  it('resumes an interrupt inside a subgraph, whose checkpoints live in their own checkpoint_ns', async () => {
    const subgraph = new StateGraph(MessagesAnnotation)
      .addNode('ask', () => {
        const city: unknown = interrupt({ question: 'Which city?' });
        return { messages: [new AIMessage(`Looking up ${String(city)}`)] };
      })
      .addEdge(START, 'ask')
      .compile();
    const build = (saver: SessionStoreSaver) => new StateGraph(MessagesAnnotation).addNode('research', subgraph).addEdge(START, 'research').compile({ checkpointer: saver });
    const config = { configurable: { thread_id: 'subgraph-1' } };
    await build(new SessionStoreSaver({ client: client() })).invoke({ messages: [new HumanMessage('Weather?')] }, config);

    const saver = new SessionStoreSaver({ client: client() });
    const done = await build(saver).invoke(new Command({ resume: 'Lyon' }), config);
    expect(texts(done.messages)).toEqual(['human: Weather?', 'ai: Looking up Lyon']);
    const namespaces = new Set<string>();
    for await (const tuple of saver.list({ configurable: { thread_id: 'subgraph-1' } })) namespaces.add(String(tuple.config.configurable?.checkpoint_ns));
    expect([...namespaces].sort()).toEqual(['', expect.stringMatching(/^research:/)]);
  });

  it("lists a saver's threads once each, a fork of a thread's session (same metadata) aside", async () => {
    const saver = new SessionStoreSaver({ client: client(), sessionIdPrefix: 'listing:' });
    await buildGraph(saver, []).invoke({ messages: [new HumanMessage('Weather?')] }, { configurable: { thread_id: 't1' } });
    const fork = await client().api.POST('/v1/sessions/{sessionId}/forks', { params: { path: { sessionId: saver.sessionIdOf('t1') } }, body: {} });
    expect(fork.response.status).toBe(201);
    const listed: string[] = [];
    for await (const tuple of saver.list({ configurable: {} })) listed.push(`${tuple.config.configurable?.thread_id} ${tuple.checkpoint.id}`);
    const ownHistory: string[] = [];
    for await (const tuple of saver.list({ configurable: { thread_id: 't1' } })) ownHistory.push(`t1 ${tuple.checkpoint.id}`);
    expect(ownHistory.length).toBeGreaterThan(1);
    expect(listed).toEqual(ownHistory);
  });

  it('keeps a value larger than one append (MAX_BODY_BYTES) in parts, read back whole by another saver', async () => {
    const saver = new SessionStoreSaver({ client: client() });
    const document = randomBytes(7 * 1024 * 1024).toString('base64');
    const checkpoint = { ...emptyCheckpoint(), channel_values: { document }, channel_versions: { document: 1 } };
    const config = await saver.put({ configurable: { thread_id: 'large' } }, checkpoint, { source: 'input', step: -1, parents: {} }, { document: 1 });
    await saver.putWrites(config, [['document', `${document}!`]], 'edit');

    const tuple = await new SessionStoreSaver({ client: client() }).getTuple({ configurable: { thread_id: 'large' } });
    expect(tuple?.checkpoint.channel_values.document).toBe(document);
    expect(tuple?.pendingWrites).toEqual([['edit', 'document', `${document}!`]]);
    const { data } = await client().api.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: saver.sessionIdOf('large') }, query: { limit: 1000 } } });
    const parts = data?.events.filter((event) => event.type === 'record.added' && event.data.kind === 'langgraph.part') ?? [];
    // Each value is 9.8 M characters of JSON text, 13 M in base64: four parts of under 4 MiB.
    expect(parts).toHaveLength(8);
  });

  it("runs the README's example (examples/langgraph.ts, built)", async () => {
    const child = spawn(process.execPath, [join(__dirname, '..', 'dist', 'examples', 'langgraph.js')], {
      env: { ...process.env, SESSION_STORE_URL: service.baseUrl, SESSION_STORE_KEY: key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect({ code, output }).toEqual({ code: 0, output: 'Hi | Heard 1 message(s) | Again | Heard 2 message(s)\n' });
  });

  it('deleteThread deletes the thread with its session; a saver that had read it sees the thread made again', async () => {
    const saver = new SessionStoreSaver({ client: client() });
    const config = { configurable: { thread_id: 'to delete' } };
    await buildGraph(saver, ['Sunny.']).invoke({ messages: [new HumanMessage('Weather?')] }, config);
    const sessionId = saver.sessionIdOf('to delete');
    // A thread_id the service's ids cannot hold (a space) gets a hashed session id.
    expect(sessionId).toMatch(/^langgraph:h~[0-9a-f]{64}$/);
    expect((await client().getSession(sessionId)).id).toBe(sessionId);
    const other = new SessionStoreSaver({ client: client() });
    expect(texts((await buildGraph(other, []).getState(config)).values.messages)).toEqual(['human: Weather?', 'ai: ']);

    await saver.deleteThread('to delete');
    expect(await saver.getTuple(config)).toBeUndefined();
    await expect(client().getSession(sessionId)).rejects.toMatchObject({ code: 'session_not_found' });
    // Made again under the same session id, its seqs starting again: the saver that read the first one reads it anew.
    await buildGraph(saver, []).invoke({ messages: [new HumanMessage('Hello?')] }, config);
    expect(texts((await buildGraph(other, []).getState(config)).values.messages)).toEqual(['human: Hello?', 'ai: ']);
  });
});
