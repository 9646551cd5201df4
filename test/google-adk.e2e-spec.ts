/** @jest-environment ./test/support/google-adk-environment.ts */
import {
  BaseLlm,
  BaseSessionService,
  createEvent,
  FunctionTool,
  InMemorySessionService,
  LlmAgent,
  Runner,
  type BaseLlmConnection,
  type Event,
  type LlmRequest,
  type LlmResponse,
  type Session,
} from '@google/adk';
import { ServiceSessionService } from '@session-store/google-adk';
import { SessionStoreClient } from '@session-store/client';
import type { Content } from '@google/genai';
import { z } from 'zod';
import { Client } from './support/client';
import { startService, TestService } from './support/service';

/**
 * Google ADK's BaseSessionService over the service (packages/google-adk):
 * the same operations against it and ADK's own InMemorySessionService,
 * compared, and an LlmAgent run by ADK's Runner against a stub model over
 * two turns with a tool call.
 */

/** What the two services may differ in: the clock each stamps a session's last update with. */
const clockless = (session: Session | undefined) => session && { ...session, lastUpdateTime: 0 };

/** A fresh event per service: BaseSessionService.appendEvent trims the event it is given in place. */
function eventOf(id: string, timestamp: number, text: string, stateDelta: Record<string, unknown> = {}, partial?: boolean): Event {
  return createEvent({ id, invocationId: 'inv-1', author: 'user', timestamp, content: { role: 'user', parts: [{ text }] }, actions: { stateDelta }, ...(partial ? { partial } : {}) });
}

/** One sequence of operations, its every answer collected; run once per service. */
async function scenario(service: BaseSessionService): Promise<unknown[]> {
  const seen: unknown[] = [];
  const get = async (appName: string, userId: string, sessionId: string, config?: { numRecentEvents?: number; afterTimestamp?: number }) =>
    clockless(await service.getSession({ appName, userId, sessionId, ...(config ? { config } : {}) }));
  const list = async (appName: string, userId?: string) => {
    const listed = await service.listSessions({ appName, ...(userId === undefined ? {} : { userId }) });
    return { ...listed, sessions: listed.sessions.map(clockless).sort((a, b) => `${a?.userId}/${a?.id}`.localeCompare(`${b?.userId}/${b?.id}`)) };
  };

  const s1 = await service.createSession({ appName: 'shop', userId: 'ada', sessionId: 's1', state: { step: 0, 'temp:draft': 'x' } });
  const s2 = await service.createSession({ appName: 'shop', userId: 'ada', sessionId: 's2' });
  const s3 = await service.createSession({ appName: 'shop', userId: 'bob', sessionId: 's3', state: { step: 9 } });
  await service.createSession({ appName: 'blog', userId: 'ada', sessionId: 's1' });
  seen.push(clockless(s1), clockless(s2), clockless(s3));

  seen.push(await service.appendEvent({ session: s1, event: eventOf('e1', 1000, 'hello', { step: 1, 'user:name': 'Ada', 'app:theme': 'dark', 'temp:scratch': true }) }));
  seen.push(await service.appendEvent({ session: s1, event: eventOf('e2', 2000, 'typing', { step: 2 }, true) }));
  seen.push(await service.appendEvent({ session: s1, event: eventOf('e2', 3000, 'second', { step: 2, nested: { a: [1, { b: null }] } }) }));
  seen.push(await service.appendEvent({ session: s3, event: eventOf('e3', 4000, 'hi', { 'user:name': 'Bob', 'app:theme': 'light' }) }));
  // The same id again: the event replaces the first, in its place.
  seen.push(await service.appendEvent({ session: s1, event: eventOf('e1', 5000, 'hello again', { step: 3 }) }));
  seen.push(await service.appendEvent({ session: s2, event: eventOf('e4', 6000, 'other session', { 'user:plan': 'pro' }) }));
  // What the service takes only as JSON text: a NUL, a lone surrogate.
  seen.push(await service.appendEvent({ session: s2, event: eventOf('e5', 7000, 'a NUL \u0000 here', { 'user:blob': 'half \uD800', raw: '\u0000' }) }));
  seen.push(clockless(s1), clockless(s3));

  seen.push(await get('shop', 'ada', 's1'), await get('shop', 'ada', 's2'), await get('shop', 'bob', 's3'), await get('blog', 'ada', 's1'));
  seen.push(await get('shop', 'ada', 's1', { numRecentEvents: 1 }), await get('shop', 'ada', 's1', { afterTimestamp: 4000 }));
  seen.push(await get('shop', 'bob', 's1'), await get('nowhere', 'ada', 's1'));
  seen.push(await list('shop'), await list('shop', 'ada'), await list('shop', 'carol'), await list('blog'), await list('nowhere'));
  const paged = await service.listSessions({ appName: 'shop', limit: 2, page: 2 });
  seen.push({ ...paged, sessions: paged.sessions.length });

  await service.deleteSession({ appName: 'shop', userId: 'ada', sessionId: 's1' });
  await service.deleteSession({ appName: 'shop', userId: 'ada', sessionId: 'never' });
  seen.push(await get('shop', 'ada', 's1'), await list('shop'));
  // Shared state outlives the session that wrote it.
  seen.push(await get('shop', 'ada', 's2'));
  return seen;
}

/** A model that calls get_weather for the city the user asks about, then answers from its result. */
class StubModel extends BaseLlm {
  readonly requests: Content[][] = [];

  constructor() {
    super({ model: 'stub-gemini' });
  }

  async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    this.requests.push(JSON.parse(JSON.stringify(request.contents)));
    const parts = request.contents.at(-1)?.parts ?? [];
    const result = parts.find((part) => part.functionResponse)?.functionResponse?.response;
    if (result) {
      yield { content: { role: 'model', parts: [{ text: `It is ${String(result.forecast)} in ${String(result.city)}.` }] } };
      return;
    }
    const city = parts.find((part) => part.text)?.text?.match(/in (\w+)/)?.[1] ?? 'nowhere';
    yield { content: { role: 'model', parts: [{ functionCall: { id: `call-${city}`, name: 'get_weather', args: { city } } }] } };
  }

  connect(): Promise<BaseLlmConnection> {
    return Promise.reject(new Error('the stub model has no live connection'));
  }
}

const getWeather = new FunctionTool({
  name: 'get_weather',
  description: "A city's forecast.",
  parameters: z.object({ city: z.string() }),
  execute: ({ city }, context) => {
    context?.state.set('user:last_city', city);
    context?.state.set('temp:looked_up', true);
    return { city, forecast: city === 'Paris' ? 'sunny' : 'rainy' };
  },
});

const user = (text: string): Content => ({ role: 'user', parts: [{ text }] });
const call = (city: string): Content => ({ role: 'model', parts: [{ functionCall: { id: `call-${city}`, name: 'get_weather', args: { city } } }] });
const response = (city: string, forecast: string): Content => ({
  role: 'user',
  parts: [{ functionResponse: { id: `call-${city}`, name: 'get_weather', response: { city, forecast } } }],
});
const answer = (text: string): Content => ({ role: 'model', parts: [{ text }] });

describe('Google ADK session service (@session-store/google-adk)', () => {
  let service: TestService;
  let http: Client;

  /** A session service over a tenant of its own. */
  async function sessionService(name: string): Promise<{ client: SessionStoreClient; sessions: ServiceSessionService }> {
    const { key } = await http.createTenant(name);
    const client = new SessionStoreClient({ baseUrl: service.baseUrl, apiKey: key });
    return { client, sessions: new ServiceSessionService({ client }) };
  }

  beforeAll(async () => {
    service = await startService();
    http = new Client(service.baseUrl);
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('answers the same operations as InMemorySessionService', async () => {
    const { client } = await sessionService('google-adk-compare');
    const refused: unknown[] = [];
    const sessions = new ServiceSessionService({ client, onMessagesError: (error) => refused.push(error) });
    const expected = await scenario(new InMemorySessionService());
    expect(await scenario(sessions)).toEqual(expected);
    // The one message the conversation cannot hold; its event is stored all the same.
    expect(refused).toEqual([expect.objectContaining({ status: 400 })]);
    // The state ADK's delta semantics give, not merely the same as the reference's.
    const s2 = expected.at(-1);
    expect(s2).toEqual(expect.objectContaining({ state: { raw: '\u0000', 'app:theme': 'light', 'user:name': 'Ada', 'user:plan': 'pro', 'user:blob': 'half \uD800' } }));
  });

  it('shares the initial state\'s app: and user: keys, as ADK\'s database service does, and lists by last update', async () => {
    const { sessions } = await sessionService('google-adk-initial');
    await sessions.createSession({ appName: 'shop', userId: 'ada', sessionId: 'a', state: { 'app:region': 'eu', 'user:tier': 'gold', own: 1, 'temp:t': 1 } });
    const b = await sessions.createSession({ appName: 'shop', userId: 'ada', sessionId: 'b' });
    expect(b.state).toEqual({ 'app:region': 'eu', 'user:tier': 'gold' });
    expect((await sessions.getSession({ appName: 'shop', userId: 'ada', sessionId: 'a' }))?.state).toEqual({ own: 1, 'app:region': 'eu', 'user:tier': 'gold' });
    expect((await sessions.getSession({ appName: 'shop', userId: 'bob', sessionId: 'b' }))).toBeUndefined();
    await expect(sessions.createSession({ appName: 'shop', userId: 'ada', sessionId: 'a' })).rejects.toThrow('already exists');

    // Ordered by last update: an append makes the older session the newer (on a tie, by id, `a` first too).
    const a = await sessions.getSession({ appName: 'shop', userId: 'ada', sessionId: 'a' });
    await sessions.appendEvent({ session: a!, event: eventOf('e1', 1000, 'later') });
    const newest = await sessions.listSessions({ appName: 'shop', userId: 'ada', order: 'desc', limit: 1 });
    expect({ ...newest, sessions: newest.sessions.map(({ id }) => id) }).toEqual({ sessions: ['a'], page: 1, limit: 1, totalItems: 2, totalPages: 2 });
  });

  it('runs an LlmAgent with a tool over two turns, its history read back from the service', async () => {
    const { client, sessions } = await sessionService('google-adk-agent');
    const model = new StubModel();
    const agent = new LlmAgent({ name: 'weather', model, instruction: 'Answer weather questions with get_weather.', tools: [getWeather] });
    const runner = new Runner({ appName: 'weather-app', agent, sessionService: sessions });
    const session = await sessions.createSession({ appName: 'weather-app', userId: 'ada' });

    const finals: string[] = [];
    for (const question of ['What is the weather in Paris?', 'And in Rome?']) {
      for await (const event of runner.runAsync({ userId: 'ada', sessionId: session.id, newMessage: user(question) })) {
        const text = event.content?.parts?.find((part) => part.text)?.text;
        if (text && event.author === 'weather') finals.push(text);
      }
    }
    expect(finals).toEqual(['It is sunny in Paris.', 'It is rainy in Rome.']);

    const turn1 = [user('What is the weather in Paris?'), call('Paris'), response('Paris', 'sunny'), answer('It is sunny in Paris.')];
    const turn2 = [user('And in Rome?'), call('Rome'), response('Rome', 'rainy'), answer('It is rainy in Rome.')];
    // Each request holds the conversation so far: the second turn's, the first turn as the service gave it back.
    expect(model.requests).toEqual([turn1.slice(0, 1), turn1.slice(0, 3), [...turn1, ...turn2.slice(0, 1)], [...turn1, ...turn2.slice(0, 3)]]);

    // A new service object, nothing cached: the session as ADK stored it.
    const stored = await new ServiceSessionService({ client }).getSession({ appName: 'weather-app', userId: 'ada', sessionId: session.id });
    expect(stored?.events.map((event) => event.content)).toEqual([...turn1, ...turn2]);
    expect(stored?.events.map((event) => event.author)).toEqual(['user', 'weather', 'weather', 'weather', 'user', 'weather', 'weather', 'weather']);
    expect(stored?.state).toEqual({ 'user:last_city': 'Rome' });
    const other = await sessions.createSession({ appName: 'weather-app', userId: 'ada' });
    expect(other.state).toEqual({ 'user:last_city': 'Rome' });

    // The conversation, in the service's own shapes, for its context, compaction and search.
    const metadata = JSON.stringify({ googleAdk: { appName: 'weather-app', userId: 'ada', sessionId: session.id } });
    const listed = (await client.api.GET('/v1/sessions', { params: { query: { metadata } } })).data!.sessions;
    expect(listed).toHaveLength(1);
    const { data } = await client.api.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: listed[0].id }, query: { types: ['message.added'] } } });
    const messages = data!.events.flatMap((event) => (event.type === 'message.added' ? [event.data.message] : []));
    expect(messages.map((message) => [message.role, message.parts.map((part) => part.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['tool_call']],
      ['tool', ['tool_result']],
      ['assistant', ['text']],
      ['user', ['text']],
      ['assistant', ['tool_call']],
      ['tool', ['tool_result']],
      ['assistant', ['text']],
    ]);
  });
});
