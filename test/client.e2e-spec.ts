import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import type { ModelMessage } from 'ai';
import { createHash } from 'node:crypto';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { ResponseCreateParamsNonStreaming } from 'openai/resources/responses/responses';
import { isProblem, NewEvent, ProblemError, SessionStoreClient, StoredEvent } from '@session-store/client';
import { ADMIN_TOKEN } from './support/env';
import { Client } from './support/client';
import { startReady, startService, TestService } from './support/service';

/**
 * The typed client (packages/client) against the real service: idempotent
 * appends, optimistic concurrency, typed problems, retries after 429,
 * streamed uploads, the live event stream and each context format handed
 * to its SDK's types without a cast.
 */

const user = (text: string): NewEvent => ({ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text }] } } });

/** A fetch that records what was sent and answered. */
function recordingFetch() {
  const exchanges: Array<{ method: string; url: string; idempotencyKey: string | null; status: number; retryAfter: string | null; sentAt: number; answeredAt: number }> = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const sentAt = Date.now();
    const response = await fetch(request);
    exchanges.push({
      method: request.method,
      url: request.url,
      idempotencyKey: request.headers.get('idempotency-key'),
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      sentAt,
      answeredAt: Date.now(),
    });
    return response;
  };
  return { exchanges, fetch: recording };
}

/** Collects a stream's events until `count` arrived, then leaves the stream open for the caller to end. */
async function take(stream: AsyncIterator<StoredEvent>, count: number): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  while (events.length < count) {
    const next = await stream.next();
    if (next.done) throw new Error(`stream ended after ${events.length} of ${count} events`);
    events.push(next.value);
  }
  return events;
}

/**
 * A fetch that loses the first answer to a request whose path ends with `suffix`, after the service
 * committed it (a dropped connection), and records the Idempotency-Key of every such request.
 */
function losingFirstAnswer(suffix: string): { fetch: typeof fetch; keys: Array<string | null> } {
  let lost = false;
  const keys: Array<string | null> = [];
  const losing: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    if (!request.url.endsWith(suffix)) return response;
    keys.push(request.headers.get('idempotency-key'));
    if (lost) return response;
    lost = true;
    await response.body?.cancel();
    throw new TypeError('fetch failed');
  };
  return { fetch: losing, keys };
}

describe('@session-store/client', () => {
  let service: TestService;
  let http: Client;
  let tenant: { tenantId: string; key: string };
  let store: SessionStoreClient;

  beforeAll(async () => {
    service = await startService({ worker: false });
    http = new Client(service.baseUrl);
    tenant = await http.createTenant('client');
    store = new SessionStoreClient({ baseUrl: service.baseUrl, apiKey: tenant.key });
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('creates a session and appends with a generated idempotency key on every append', async () => {
    // given a client that records its requests
    const recorder = recordingFetch();
    const recorded = new SessionStoreClient({ baseUrl: service.baseUrl, apiKey: tenant.key, fetch: recorder.fetch });
    // when a session is created and two appends are made
    const session = await recorded.createSession({ model: 'gpt-4.1', id: 'client-create', metadata: { title: 'typed' } });
    const first = await recorded.append(session.id, [user('one')]);
    const second = await recorded.append(session.id, [user('two')], { expectedSeq: first.headSeq });
    // then the answers are the service's, and each append carried its own key
    expect([session.id, session.headSeq, first.headSeq, second.headSeq]).toEqual(['client-create', 1, 2, 3]);
    const keys = recorder.exchanges.filter((e) => e.url.endsWith('/events')).map((e) => e.idempotencyKey);
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('replays an append sent again with the same key: same answer, written once', async () => {
    // given a session and an append made with a chosen key
    const session = await store.createSession({ model: 'gpt-4.1' });
    const first = await store.append(session.id, [user('once')], { idempotencyKey: 'append-key-1' });
    // when the same append is sent again with that key
    const again = await store.append(session.id, [user('once')], { idempotencyKey: 'append-key-1' });
    // then the answer is the first one, and the log holds the message once
    expect(again).toEqual(first);
    expect((await store.getSession(session.id)).headSeq).toBe(2);
  });

  it("appends natively in the SDK's types: bytes sent as base64, and a retry after a lost answer written once", async () => {
    // given a transport that loses the first answer of a native append after the service committed it
    const { fetch: losing, keys } = losingFirstAnswer('/messages');
    const flaky = new SessionStoreClient({ baseUrl: service.baseUrl, apiKey: tenant.key, fetch: losing });
    const session = await store.createSession({ model: 'gpt-4.1' });
    const messages: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image', image: new Uint8Array([104, 105]), mediaType: 'image/png' }] }];
    // when an AI SDK message holding an image as bytes is appended through it
    const result = await flaky.appendNative(session.id, { format: 'ai-sdk', messages });
    // then it was sent twice with one key, stored once, the image as base64
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(result.headSeq).toBe(2);
    const context = await store.context(session.id, { format: 'neutral' });
    expect(context.messages.map((m) => m.parts)).toEqual([[{ type: 'text', text: 'what is this?' }, { type: 'file', mediaType: 'image/png', data: 'aGk=' }]]);
  });

  it('rewinds: the context drops the turns after toSeq, and the same key rewinds once', async () => {
    // given two turns
    const session = await store.createSession({ model: 'gpt-4.1' });
    await store.append(session.id, [user('first'), user('second')]);
    // when rewound to the first, twice with the same key
    const rewound = await store.rewind(session.id, 2, { idempotencyKey: 'rewind-key-1' });
    const again = await store.rewind(session.id, 2, { idempotencyKey: 'rewind-key-1' });
    // then one event was written, and the context holds the first turn only
    expect(again).toEqual(rewound);
    expect(rewound).toEqual({ seq: 4, toSeq: 2, headSeq: 4 });
    const context = await store.context(session.id, { format: 'neutral' });
    expect(context.messages.map((m) => m.parts)).toEqual([[{ type: 'text', text: 'first' }]]);
  });

  it('retries an append whose answer was lost with the same key, so it is written once', async () => {
    // given a transport that loses the first answer after the service committed the append
    const { fetch: losing, keys } = losingFirstAnswer('/events');
    const flaky = new SessionStoreClient({ baseUrl: service.baseUrl, apiKey: tenant.key, fetch: losing });
    const session = await store.createSession({ model: 'gpt-4.1' });
    // when an append is made through it
    const result = await flaky.append(session.id, [user('exactly once')]);
    // then it was sent twice with one key, answered with the first commit, and stored once
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(result.headSeq).toBe(2);
    const { data } = await store.api.GET('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId: session.id }, query: { afterSeq: 0, types: ['session.created', 'message.added'] } },
    });
    expect(data?.events.map((e) => e.type)).toEqual(['session.created', 'message.added']);
  });

  it('appendAt rebuilds on a version conflict caused by a concurrent writer, then appends', async () => {
    // given a session, and a builder whose first call lets another writer append first
    const session = await store.createSession({ model: 'gpt-4.1' });
    const heads: number[] = [];
    const build = async (headSeq: number) => {
      heads.push(headSeq);
      if (heads.length === 1) await store.append(session.id, [user('the other writer')]);
      return [user(`after ${headSeq}`)];
    };
    // when
    const result = await store.appendAt(session.id, build);
    // then the first attempt met 409 version_conflict, the second was built on the new head and landed after it
    expect(heads).toEqual([1, 2]);
    expect(result.headSeq).toBe(3);
  });

  it('appendAt gives up with the version_conflict problem after its attempts', async () => {
    const session = await store.createSession({ model: 'gpt-4.1' });
    const conflict = store.appendAt(
      session.id,
      async () => {
        await store.append(session.id, [user('always first')]);
        return [user('always late')];
      },
      { attempts: 2 },
    );
    await expect(conflict).rejects.toMatchObject({ status: 409, code: 'version_conflict' });
  });

  it('throws typed problems: 404 session_not_found, 400 for bad input', async () => {
    // when a missing session is read
    const missing = await store.getSession('no-such-session').catch((error: unknown) => error);
    // then the error is a ProblemError narrowed by its code
    expect(missing).toBeInstanceOf(ProblemError);
    if (!isProblem(missing, 'session_not_found')) throw new Error('expected session_not_found');
    expect([missing.status, missing.problem.status, missing.problem.code]).toEqual([404, 404, 'session_not_found']);
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    // when an event of an unknown type is appended (the document's types allow no such event: built from JSON)
    const session = await store.createSession({ model: 'gpt-4.1' });
    const bogus: NewEvent = JSON.parse('{"type":"bogus.type","data":{}}');
    const invalid = await store.append(session.id, [bogus]).catch((error: unknown) => error);
    // then it is a 400 with its code
    expect(isProblem(invalid, 'unknown_event_type')).toBe(true);
    expect(invalid).toMatchObject({ status: 400, code: 'unknown_event_type' });
  });

  it('retries a 429 after its Retry-After, and the calls succeed', async () => {
    // given a tenant limited to two requests per second, and a client that records its exchanges
    const limited = await http.createTenant('rate-limited');
    const session = await new SessionStoreClient({ baseUrl: service.baseUrl, apiKey: limited.key }).createSession({ model: 'gpt-4.1' });
    const patch = await http.request('PATCH', `/v1/admin/tenants/${limited.tenantId}`, { key: ADMIN_TOKEN, body: { limits: { requestsPerSecond: 2 } } });
    expect(patch.status).toBe(200);
    const recorder = recordingFetch();
    const client = new SessionStoreClient({ baseUrl: service.baseUrl, apiKey: limited.key, fetch: recorder.fetch, retries: 5 });
    // when four reads are made one after the other
    for (let i = 0; i < 4; i++) expect((await client.getSession(session.id)).id).toBe(session.id);
    // then some were refused with 429, and each retry waited at least the Retry-After it was given
    const refused = recorder.exchanges.flatMap((exchange, i) => (exchange.status === 429 ? [i] : []));
    expect(refused.length).toBeGreaterThan(0);
    for (const i of refused) {
      const { retryAfter, answeredAt } = recorder.exchanges[i];
      expect(retryAfter).toMatch(/^\d+$/);
      expect(recorder.exchanges[i + 1].sentAt - answeredAt).toBeGreaterThanOrEqual(Number(retryAfter) * 1000);
    }
    expect(recorder.exchanges.at(-1)!.status).toBe(200);
  });

  it('streams a multi-MB tool output from an AsyncIterable and reads back the same bytes', async () => {
    // given 4 MiB of numbered lines, produced chunk by chunk
    const session = await store.createSession({ model: 'gpt-4.1' });
    const hash = createHash('sha256');
    let size = 0;
    async function* output(): AsyncGenerator<Uint8Array> {
      for (let chunk = 0; size < 4 * 1024 * 1024; chunk++) {
        const bytes = new TextEncoder().encode(Array.from({ length: 1000 }, (_, i) => `line ${chunk * 1000 + i} of the build log`).join('\n') + '\n');
        hash.update(bytes);
        size += bytes.length;
        yield bytes;
      }
    }
    // when it is uploaded
    const ref = await store.uploadToolOutput(session.id, output());
    // then the ref describes it, and the raw bytes read back are the same
    expect(ref).toMatchObject({ byte_size: size, sha256: hash.digest('hex') });
    const raw = await store.api.GET('/v1/tool-outputs/{refId}/raw', { params: { path: { refId: ref.id } }, parseAs: 'arrayBuffer' });
    expect(raw.response.status).toBe(200);
    expect(createHash('sha256').update(new Uint8Array(raw.data!)).digest('hex')).toBe(ref.sha256);

    // and its id goes into a tool_result as its outputRef
    const call: NewEvent = { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'c1', name: 'build', input: {} }] } } };
    const result: NewEvent = { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', outputRef: { id: ref.id } }] } } };
    await store.append(session.id, [user('build it'), call, result]);
    const context = await store.context(session.id, { format: 'openai' });
    expect(JSON.stringify(context.messages.at(-1))).toContain(ref.id);
  });

  it('streams events live, and resumes after an abort with nothing missed or repeated', async () => {
    // given a session with two events, and a stream from the start
    const session = await store.createSession({ model: 'gpt-4.1' });
    await store.append(session.id, [user('before')]);
    const abort = new AbortController();
    const stream = store.streamEvents(session.id, { signal: abort.signal });
    const backlog = await take(stream, 2);
    // when an event is appended while it is open
    await store.append(session.id, [user('live')]);
    const live = await take(stream, 1);
    // and the stream is aborted, more is appended, and a new stream resumes from the last seq seen
    abort.abort();
    expect((await stream.next()).done).toBe(true);
    await store.append(session.id, [user('while away 1'), user('while away 2')]);
    const resumed = store.streamEvents(session.id, { afterSeq: live[0].seq });
    const rest = await take(resumed, 2);
    await resumed.return(undefined);
    // then every seq came exactly once, in order
    expect([...backlog, ...live, ...rest].map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(rest.map((e) => e.type)).toEqual(['message.added', 'message.added']);
  });

  it('reconnects by itself when the API restarts, with Last-Event-ID: no gap, no repeat', async () => {
    // given an open stream that has seen the session's first two events
    const session = await store.createSession({ model: 'gpt-4.1' });
    await store.append(session.id, [user('before the restart')]);
    const patient = new SessionStoreClient({ baseUrl: service.baseUrl, apiKey: tenant.key, retries: 10 });
    const stream = patient.streamEvents(session.id);
    const before = await take(stream, 2);
    // when the API process is stopped (ending the stream), started again, and an event appended
    await service.api.stop();
    service.api = await startReady('api', service.env, `${service.baseUrl}/healthz`);
    await store.append(session.id, [user('after the restart')]);
    // then the same iteration goes on with the next seq
    const after = await take(stream, 1);
    await stream.return(undefined);
    expect([...before, ...after].map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('returns the context of each format in its SDK types, usable without a cast', async () => {
    // given a session with a system prompt, a tool call and its result
    const session = await store.createSession({ model: 'gpt-4.1', system: 'You are terse.' });
    await store.append(session.id, [
      user('List the files'),
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'ls-1', name: 'ls', input: { path: '.' } }] } } },
      { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'ls-1', output: 'README.md' }] } } },
    ]);

    // OpenAI Chat Completions
    const chat = await store.context(session.id, { format: 'openai', tools: 'tool_output_cache' });
    const chatRequest: ChatCompletionCreateParamsNonStreaming = { model: chat.model, messages: chat.messages, tools: chat.tools };
    expect(chatRequest.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(chat.tools?.map((t) => t.function.name)).toEqual(['tool_output_cache', 'tool_output_cache_grep']);

    // OpenAI Responses
    const responses = await store.context(session.id, { format: 'openai-responses' });
    const responsesRequest: ResponseCreateParamsNonStreaming = { model: responses.model, input: responses.messages, tools: responses.tools };
    expect(responses.messages.map((item) => item.type)).toEqual(expect.arrayContaining(['function_call', 'function_call_output']));
    expect(responsesRequest.input).toHaveLength(responses.messages.length);

    // Anthropic Messages
    const anthropic = await store.context(session.id, { format: 'anthropic' });
    const messagesRequest: MessageCreateParamsNonStreaming = { model: anthropic.model, max_tokens: 1024, system: anthropic.system, messages: anthropic.messages };
    expect(messagesRequest.system).toBe('You are terse.');
    expect(messagesRequest.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);

    // Vercel AI SDK
    const aiSdk = await store.context(session.id, { format: 'ai-sdk' });
    const modelMessages: ModelMessage[] = aiSdk.messages;
    expect([aiSdk.system, modelMessages.map((m) => m.role)]).toEqual(['You are terse.', ['user', 'assistant', 'tool']]);

    // neutral, with the document's figures
    const neutral = await store.context(session.id, { format: 'neutral', atSeq: 2 });
    expect([neutral.format, neutral.headSeq, neutral.messages.map((m) => m.role)]).toEqual(['neutral', 4, ['system', 'user']]);
  });
});
