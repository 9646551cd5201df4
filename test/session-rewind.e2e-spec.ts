import { CONTEXT_FORMATS } from '@app/domain';
import { Agent, agentSession } from './support/agent-script';
import { Client, HttpResult } from './support/client';
import { startService, TestService } from './support/service';

/**
 * Rewind: POST /v1/sessions/{id}/rewind {toSeq} appends session.rewound,
 * after which the context no longer shows what clients appended after toSeq,
 * in every format. The log keeps it; a context at an earlier atSeq and a fork
 * taken there still show it; a call whose result was rewound can be answered
 * again. Refusals: toSeq at or past the head, inside the compacted range,
 * another tenant's session, an archived one.
 */

const say = (role: 'user' | 'assistant', text: string) => ({ type: 'message.added', data: { message: { role, parts: [{ type: 'text', text }] } } });
const callBash = (callId: string) => ({
  type: 'message.added',
  data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name: 'bash', input: { command: 'npm test' } }] } },
});
const resultOf = (callId: string, output: string) => ({
  type: 'message.added',
  data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, output }] } },
});

const problem = (res: HttpResult, status: number, code: string) => expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });

describe('session rewind', () => {
  let service: TestService;
  let client: Client;
  let key: string;
  let otherKey: string;

  beforeAll(async () => {
    service = await startService();
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('rewind'));
    ({ key: otherKey } = await client.createTenant('rewind-other'));
  });
  afterAll(() => service?.stop());

  const path = (id: string) => `/v1/sessions/${encodeURIComponent(id)}`;
  const rewind = (id: string, toSeq: unknown, k = key) => client.request('POST', `${path(id)}/rewind`, { key: k, body: { toSeq } });
  const context = async (id: string, query = '') => {
    const res = await client.request('GET', `${path(id)}/context${query}`, { key });
    expect(res.status).toBe(200);
    return res.body;
  };
  /** The neutral context's messages as `role: text` lines (tool parts by their kind). */
  const lines = async (id: string, query = '') =>
    (await context(id, query)).messages.map(
      (m: any) => `${m.role}: ${m.parts.map((p: any) => (p.type === 'text' ? p.text : p.type === 'tool_result' ? `result ${p.output}` : p.type)).join(' ')}`,
    );
  async function conversation(id: string) {
    await client.createSession(key, { id, model: 'gpt-4.1' });
    // seqs 2-5
    const res = await client.append(key, id, { events: [say('user', 'Rename foo to bar'), say('assistant', 'Renamed.'), say('user', 'Now delete bar'), say('assistant', 'Deleted bar.')] });
    expect(res.body.headSeq).toBe(5);
  }

  it('takes the turns after toSeq out of the context in every format; the log keeps them and an earlier atSeq shows them', async () => {
    // given a conversation of two turns (seqs 2-5)
    await conversation('rw-a');
    // when rewound to seq 3, the end of the first turn
    const res = await rewind('rw-a', 3);
    // then the event is appended at seq 6
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ seq: 6, toSeq: 3, headSeq: 6 });
    expect(res.headers.get('location')).toBe('/v1/sessions/rw-a/events?afterSeq=5');
    // and the context shows the first turn only, in every format
    expect(await lines('rw-a')).toEqual(['user: Rename foo to bar', 'assistant: Renamed.']);
    for (const format of CONTEXT_FORMATS) {
      const text = JSON.stringify((await context('rw-a', `?format=${format}`)).messages);
      expect({ format, second: text.includes('delete bar') || text.includes('Deleted bar') }).toEqual({ format, second: false });
    }
    // while the log keeps every event, and the context at seq 5 is the one before the rewind
    expect((await client.allEvents(key, 'rw-a')).map((e) => e.type)).toEqual([
      'session.created',
      'message.added',
      'message.added',
      'message.added',
      'message.added',
      'session.rewound',
    ]);
    expect(await lines('rw-a', '?atSeq=5')).toEqual(['user: Rename foo to bar', 'assistant: Renamed.', 'user: Now delete bar', 'assistant: Deleted bar.']);
    // and a turn appended after the rewind follows the kept one
    await client.append(key, 'rw-a', { events: [say('user', 'Now rename bar to baz')] });
    expect(await lines('rw-a')).toEqual(['user: Rename foo to bar', 'assistant: Renamed.', 'user: Now rename bar to baz']);
  });

  it('a fork taken before the rewind still shows the turns; one taken after it does not', async () => {
    // given a rewound conversation
    await conversation('rw-f');
    expect((await rewind('rw-f', 3)).status).toBe(201);
    // when forked at seq 5 (before the rewind) and at the head
    const before = await client.request('POST', `${path('rw-f')}/forks`, { key, body: { id: 'rw-f-before', atSeq: 5 } });
    const after = await client.request('POST', `${path('rw-f')}/forks`, { key, body: { id: 'rw-f-after' } });
    expect([before.status, after.status]).toEqual([201, 201]);
    // then the first shows both turns, the second the kept one
    expect(await lines('rw-f-before')).toHaveLength(4);
    expect(await lines('rw-f-after')).toEqual(['user: Rename foo to bar', 'assistant: Renamed.']);
  });

  it('a call whose result was rewound is pending again, and takes a new result', async () => {
    // given a call (seq 3) and its result (seq 4)
    await client.createSession(key, { id: 'rw-c', model: 'gpt-4.1' });
    await client.append(key, 'rw-c', { events: [say('user', 'Run the tests'), callBash('c1'), resultOf('c1', '3 failed')] });
    // when rewound to the call
    expect((await rewind('rw-c', 3)).status).toBe(201);
    // then the call is pending (shown aborted until answered)
    const pending = await context('rw-c');
    expect(pending.pendingToolCalls).toEqual([{ callId: 'c1', name: 'bash' }]);
    expect(JSON.stringify(pending.messages)).not.toContain('3 failed');
    // and the agent's new result for it is accepted and shown
    const answered = await client.append(key, 'rw-c', { events: [resultOf('c1', '3 passed')] });
    expect(answered.status).toBe(201);
    const after = await context('rw-c');
    expect(after.pendingToolCalls).toEqual([]);
    expect(await lines('rw-c')).toEqual(['user: Run the tests', 'assistant: tool_call', 'tool: result 3 passed']);
    // while a result for it is still one result too many
    problem(await client.append(key, 'rw-c', { events: [resultOf('c1', 'again')] }), 400, 'duplicate_tool_result');
  });

  it('survives export and import: the imported session shows the same context, and its rewound call stays answered once', async () => {
    // given a session whose call was rewound and answered again
    await client.createSession(key, { id: 'rw-t', model: 'gpt-4.1' });
    await client.append(key, 'rw-t', { events: [say('user', 'Run the tests'), callBash('c1'), resultOf('c1', '3 failed')] });
    expect((await rewind('rw-t', 3)).status).toBe(201);
    await client.append(key, 'rw-t', { events: [resultOf('c1', '3 passed')] });
    // when exported and imported as another session
    const exported = await fetch(`${service.baseUrl}${path('rw-t')}/export`, { headers: { authorization: `Bearer ${key}` } });
    expect(exported.status).toBe(200);
    const imported = await fetch(`${service.baseUrl}/v1/sessions/import?id=rw-t-copy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson' },
      body: await exported.text(),
    });
    expect(imported.status).toBe(201);
    // then its context is the source's, and its ledger as the source's: a third result is refused
    expect(await lines('rw-t-copy')).toEqual(await lines('rw-t'));
    problem(await client.append(key, 'rw-t-copy', { events: [resultOf('c1', 'again')] }), 400, 'duplicate_tool_result');
  });

  it('refuses toSeq at or past the head, 0, and a missing one (400), writing nothing', async () => {
    await conversation('rw-bad');
    problem(await rewind('rw-bad', 5), 400, 'invalid_rewind_seq');
    problem(await rewind('rw-bad', 9), 400, 'invalid_rewind_seq');
    expect((await rewind('rw-bad', 0)).status).toBe(400);
    expect((await client.request('POST', `${path('rw-bad')}/rewind`, { key, body: {} })).status).toBe(400);
    expect((await client.allEvents(key, 'rw-bad')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it("is 404 on another tenant's session and on none, 409 on an archived one", async () => {
    await conversation('rw-x');
    problem(await rewind('rw-x', 2, otherKey), 404, 'session_not_found');
    problem(await rewind('rw-missing', 2), 404, 'session_not_found');
    expect((await client.request('PATCH', path('rw-x'), { key, body: { archived: true } })).status).toBe(200);
    problem(await rewind('rw-x', 2), 409, 'session_archived');
  });

  it('refuses a toSeq inside the compacted range (409 rewind_behind_pivot); at the pivot it rewinds', async () => {
    // given a session compacted through some seq
    const agent: Agent = await agentSession(client, key, 'rw-p');
    for (let turn = 1; turn <= 3; turn++) await agent.turn(turn, { outputLines: 20 });
    expect((await client.request('POST', `${agent.path}/compactions`, { key, body: { wait: true } })).status).toBeLessThan(300);
    const { coveredThroughSeq, headSeq } = await agent.state();
    expect(coveredThroughSeq).toBeGreaterThan(1);
    // when rewinding behind it, then at it
    const behind = await rewind('rw-p', coveredThroughSeq - 1);
    // then the first is refused with the seq it may take, the second is done
    problem(behind, 409, 'rewind_behind_pivot');
    expect(behind.body.coveredThroughSeq).toBe(coveredThroughSeq);
    expect(headSeq).toBeGreaterThan(coveredThroughSeq);
    expect((await rewind('rw-p', coveredThroughSeq)).status).toBe(201);
    await agent.expectValidForProviders();
  });
});
