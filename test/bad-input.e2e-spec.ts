import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Client as PgClient } from 'pg';
import { Client, HttpResult, userMessage } from './support/client';
import { connectAs } from './support/database';
import { ADMIN_TOKEN } from './support/env';
import { startService, TestService } from './support/service';

/**
 * Invariant 8 (reliability notes T5.3-T5.5, T4.7): bad input gets a 4xx
 * problem with a stable code and writes nothing. "Nothing" is checked in the
 * database (as the owner, so RLS hides nothing), not only through the API.
 */

const LIMIT = 65_536;

const assistantCall = (callId: string, id?: string) => ({
  ...(id ? { id } : {}),
  type: 'message.added',
  data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name: 'read_file', input: { path: 'a.ts' } }] } },
});
const toolResult = (callId: string, output = 'ok') => ({
  type: 'message.added',
  data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, output }] } },
});

describe('bad input', () => {
  let service: TestService;
  let client: Client;
  let key: string;
  let owner: PgClient;
  let sessionId: string;

  /** Every row the service could write for any tenant: the sum must not move when a request is refused. */
  const footprint = async () => {
    const { rows } = await owner.query(`
      SELECT (SELECT count(*) FROM sessions)::int AS sessions, (SELECT count(*) FROM session_events)::int AS events,
             (SELECT coalesce(sum(head_seq), 0) FROM sessions)::int AS heads, (SELECT count(*) FROM session_tool_calls)::int AS calls,
             (SELECT count(*) FROM session_tool_calls WHERE answered_seq IS NOT NULL)::int AS answered,
             (SELECT count(*) FROM idempotency_keys)::int AS idem, (SELECT count(*) FROM outbox)::int AS outbox`);
    return rows[0];
  };

  /** Sends a bad request and checks: the expected 4xx, a problem+json body with `code`, nothing written. */
  async function refused(send: () => Promise<HttpResult>, status: number, code?: string): Promise<HttpResult> {
    const before = await footprint();
    const res = await send();
    expect({ status: res.status, code: res.body?.code }).toEqual({ status, code: code ?? expect.any(String) });
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await footprint()).toEqual(before);
    return res;
  }

  const appendRaw = (raw: string | Buffer, headers: Record<string, string> = {}) =>
    client.request('POST', `/v1/sessions/${sessionId}/events`, { key, rawBody: raw, headers: { 'content-type': 'application/json', ...headers } });

  beforeAll(async () => {
    service = await startService({ worker: false, env: { MAX_BODY_BYTES: String(LIMIT) } });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('bad-input'));
    owner = await connectAs(service.dbUrl);
    sessionId = (await client.createSession(key)).id;
    // An answered call and an open one, for the pairing cases.
    const res = await client.append(key, sessionId, { events: [assistantCall('answered'), toolResult('answered'), assistantCall('open')] });
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await owner?.end();
    await service?.stop();
  });

  describe('text the database cannot store', () => {
    it('a NUL character (\\u0000) in a text part is 400 nul_character naming the field', async () => {
      const res = await refused(() => client.append(key, sessionId, { events: [userMessage('before\u0000after')] }), 400, 'nul_character');
      expect(res.body.path).toBe('$.events[0].data.message.parts[0].text');
    });

    it('a lone surrogate escape (\\ud800) in the JSON text is 400 lone_surrogate', async () => {
      // Written by hand: the escape must reach the server as the six characters \ud800.
      const raw = '{"events":[{"type":"message.added","data":{"message":{"role":"user","parts":[{"type":"text","text":"a\\ud800b"}]}}}]}';
      const res = await refused(() => appendRaw(raw), 400, 'lone_surrogate');
      expect(res.body.path).toBe('$.events[0].data.message.parts[0].text');
    });

    it('a lone low surrogate in a tool-call input, and a NUL in a metadata key, are refused too', async () => {
      await refused(
        () => appendRaw('{"events":[{"type":"message.added","data":{"message":{"role":"assistant","parts":[{"type":"tool_call","callId":"s1","name":"n","input":{"q":"\\udc00"}}]}}}]}'),
        400,
        'lone_surrogate',
      );
      await refused(() => client.request('POST', '/v1/sessions', { key, body: { model: 'gpt-4.1', metadata: { 'k\u0000': 1 } } }), 400, 'nul_character');
    });

    it('a NUL in the session create body (system prompt) is refused before the database', async () => {
      await refused(() => client.request('POST', '/v1/sessions', { key, body: { model: 'gpt-4.1', system: 'a\u0000' } }), 400, 'nul_character');
    });

    it('invalid UTF-8 bytes (an overlong NUL C0 80, a stray FF) are 400 invalid_utf8, also inside gzip', async () => {
      const raw = Buffer.concat([
        Buffer.from('{"events":[{"type":"message.added","data":{"message":{"role":"user","parts":[{"type":"text","text":"a'),
        Buffer.from([0xc0, 0x80, 0x20, 0xff]),
        Buffer.from('b"}]}}}]}'),
      ]);
      await refused(() => appendRaw(raw), 400, 'invalid_utf8');
      await refused(() => appendRaw(gzipSync(raw), { 'content-encoding': 'gzip' }), 400, 'invalid_utf8');
    });

    it('a correctly paired astral character is stored and read back unchanged', async () => {
      const text = 'emoji 😀 and 日本語';
      expect((await client.append(key, sessionId, { events: [userMessage(text, `astral-${randomBytes(3).toString('hex')}`)] })).status).toBe(201);
      const events = await client.allEvents(key, sessionId);
      expect(events[events.length - 1].data.message.parts[0].text).toBe(text);
    });
  });

  describe('malformed JSON', () => {
    it.each([
      ['truncated', '{"events":['],
      ['a trailing comma', '{"events":[],}'],
      ['single quotes', "{'events':[]}"],
      ['a bare value (strict mode)', '"events"'],
      ['an empty body with a JSON content type', ''],
    ])('%s is refused with 400', async (_, raw) => {
      await refused(() => appendRaw(raw), 400);
    });

    it('invalid JSON is 400 invalid_json', async () => {
      await refused(() => appendRaw('{"events": [1, 2'), 400, 'invalid_json');
    });

    it('JSON nested 10,000 deep is 400 json_too_deep and the process stays up', async () => {
      const deepArrays = '['.repeat(10_000) + ']'.repeat(10_000);
      await refused(() => appendRaw(deepArrays), 400, 'json_too_deep');
      const deepObjects = `{"events":[${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}]}`;
      await refused(() => appendRaw(deepObjects), 400, 'json_too_deep');
      // Nested inside an otherwise valid message (the tool-call input is free-form JSON).
      const input = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
      await refused(
        () => appendRaw(`{"events":[{"type":"message.added","data":{"message":{"role":"assistant","parts":[{"type":"tool_call","callId":"deep","name":"n","input":${input}}]}}}]}`),
        400,
        'json_too_deep',
      );
      expect((await client.request('GET', '/healthz')).status).toBe(200);
    });
  });

  describe('body size', () => {
    it('a body over the limit is 413 body_too_large', async () => {
      const raw = JSON.stringify({ events: [userMessage('x'.repeat(LIMIT))] });
      expect(raw.length).toBeGreaterThan(LIMIT);
      await refused(() => appendRaw(raw), 413, 'body_too_large');
    });

    it('a small gzip body that inflates past the limit is 413 (the limit applies after inflation)', async () => {
      const raw = gzipSync(Buffer.from(JSON.stringify({ events: [userMessage(' '.repeat(4 * 1024 * 1024))] })));
      expect(raw.length).toBeLessThan(LIMIT / 4);
      await refused(() => appendRaw(raw, { 'content-encoding': 'gzip' }), 413, 'body_too_large');
    });

    it('a gzip body under the limit is accepted (so the 413 above is about size, not gzip)', async () => {
      const before = await footprint();
      const res = await appendRaw(gzipSync(Buffer.from(JSON.stringify({ events: [userMessage('zipped')] }))), { 'content-encoding': 'gzip' });
      expect(res.status).toBe(201);
      expect((await footprint()).events).toBe(before.events + 1);
    });

    it('a corrupt gzip stream is 400 and an unsupported encoding is 415', async () => {
      await refused(() => appendRaw('{"events":[]}', { 'content-encoding': 'gzip' }), 400, 'invalid_body');
      await refused(() => appendRaw('{"events":[]}', { 'content-encoding': 'br' }), 400, 'invalid_body');
      await refused(() => appendRaw('{"events":[]}', { 'content-encoding': 'x-unknown' }), 415, 'unsupported_encoding');
    });
  });

  describe('events the domain refuses', () => {
    it.each([
      ['an unknown event type', { type: 'session.hacked', data: {} }, 'unknown_event_type'],
      ['a service-only event type (compaction.completed)', { type: 'compaction.completed', data: { markerSeq: 1, coveredThroughSeq: 1, summary: 's' } }, 'reserved_event_type'],
      ['a service-only event type (session.created)', { type: 'session.created', data: { model: 'gpt-4.1' } }, 'reserved_event_type'],
      ['an unknown role', { type: 'message.added', data: { message: { role: 'developer', parts: [{ type: 'text', text: 'x' }] } } }, 'unknown_role'],
      ['an unknown part type', { type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'video', url: 'x' }] } } }, 'invalid_part'],
      ['a part not allowed for the role', { type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'tool_call', callId: 'u', name: 'n', input: {} }] } } }, 'invalid_part'],
      ['a server-assigned field on an event (seq)', { ...userMessage('x'), seq: 1 }, 'unknown_field'],
      ['a server-assigned field on an event (tenantId)', { ...userMessage('x'), tenantId: '00000000-0000-0000-0000-000000000000' }, 'unknown_field'],
    ])('%s is 400 with nothing written', async (_, event, code) => {
      await refused(() => client.append(key, sessionId, { events: [event] }), 400, code);
    });

    it('one bad event fails the whole batch', async () => {
      await refused(() => client.append(key, sessionId, { events: [userMessage('fine'), userMessage('fine too'), { type: 'nope', data: {} }] }), 400, 'unknown_event_type');
    });

    it('a tool result whose call id was never issued is 400 unknown_tool_call', async () => {
      await refused(() => client.append(key, sessionId, { events: [toolResult('never-issued')] }), 400, 'unknown_tool_call');
    });

    it('a duplicate tool-call id within a batch is 400 duplicate_tool_call_id', async () => {
      await refused(() => client.append(key, sessionId, { events: [assistantCall('twice'), assistantCall('twice')] }), 400, 'duplicate_tool_call_id');
    });

    it('a tool-call id issued by an earlier batch is 400 duplicate_tool_call_id', async () => {
      await refused(() => client.append(key, sessionId, { events: [assistantCall('answered')] }), 400, 'duplicate_tool_call_id');
      await refused(() => client.append(key, sessionId, { events: [assistantCall('open')] }), 400, 'duplicate_tool_call_id');
    });

    it('a second result for the same call is 400 duplicate_tool_result, across batches and within one', async () => {
      await refused(() => client.append(key, sessionId, { events: [toolResult('answered', 'again')] }), 400, 'duplicate_tool_result');
      await refused(() => client.append(key, sessionId, { events: [toolResult('open', 'one'), toolResult('open', 'two')] }), 400, 'duplicate_tool_result');
    });

    it('an event id repeated within a batch is 400 duplicate_event_id', async () => {
      await refused(() => client.append(key, sessionId, { events: [userMessage('a', 'same'), userMessage('b', 'same')] }), 400, 'duplicate_event_id');
    });

    it('an empty or missing events list is 400', async () => {
      await refused(() => client.append(key, sessionId, { events: [] }), 400, 'invalid_field');
      await refused(() => client.append(key, sessionId, {}), 400, 'invalid_field');
      await refused(() => client.append(key, sessionId, []), 400, 'invalid_field');
    });
  });

  describe('expectedSeq and afterSeq', () => {
    it.each([
      ['negative', -1],
      ['fractional', 1.5],
      ['non-numeric', 'abc'],
      ['a numeric string', '3'],
      ['null', null],
      ['huge', 1e20],
    ])('a %s expectedSeq is 400 invalid_field', async (_, expectedSeq) => {
      const res = await refused(() => client.append(key, sessionId, { expectedSeq, events: [userMessage('x')] }), 400, 'invalid_field');
      expect(res.body.path).toBe('$.expectedSeq');
    });

    it('an afterSeq beyond the head is 200 with an empty page, not an error', async () => {
      const { headSeq } = (await client.request('GET', `/v1/sessions/${sessionId}`, { key })).body;
      for (const afterSeq of [headSeq, headSeq + 1, 1_000_000]) {
        const res = await client.request('GET', `/v1/sessions/${sessionId}/events?afterSeq=${afterSeq}`, { key });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ headSeq, events: [], nextAfterSeq: null });
      }
    });

    it.each(['abc', '-1', '1.5', '1e20', '99999999999999999999', 'Infinity'])('afterSeq=%s is 400, never 5xx', async (afterSeq) => {
      const res = await client.request('GET', `/v1/sessions/${sessionId}/events?afterSeq=${afterSeq}`, { key });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });

    it.each(['0', 'abc', '-5'])('limit=%s is 400', async (limit) => {
      const res = await client.request('GET', `/v1/sessions/${sessionId}/events?limit=${limit}`, { key });
      expect(res.status).toBe(400);
    });
  });

  describe('numeric query parameters', () => {
    it.each(['9007199254740992', '9007199254740993', '1e400', '99999999999999999999'])('%s (beyond the safe integer range) is 400 on every seq or offset parameter', async (n) => {
      for (const path of [
        `/v1/sessions/${sessionId}/context?atSeq=${n}`,
        `/v1/sessions/${sessionId}/events?afterSeq=${n}`,
        `/v1/sessions/${sessionId}/compactions?afterSeq=${n}`,
      ]) {
        const res = await client.request('GET', path, { key });
        expect({ path, status: res.status, code: res.body?.code }).toEqual({ path, status: 400, code: 'validation_failed' });
      }
    });
  });

  describe('mass assignment and prototype keys', () => {
    it.each([
      ['tenantId', { tenantId: '00000000-0000-0000-0000-000000000000' }],
      ['seq', { seq: 5 }],
      ['headSeq', { headSeq: 5 }],
      ['createdAt', { createdAt: '2000-01-01T00:00:00Z' }],
    ])('a session create body with %s is 400 validation_failed', async (_, extra) => {
      const res = await refused(() => client.request('POST', '/v1/sessions', { key, body: { model: 'gpt-4.1', ...extra } }), 400, 'validation_failed');
      expect(res.body.fields).toEqual(Object.keys(extra));
    });

    it('a client-chosen session id outside the id alphabet is 400', async () => {
      for (const id of ['a b', '../x', 'x'.repeat(200), 'é']) {
        await refused(() => client.request('POST', '/v1/sessions', { key, body: { model: 'gpt-4.1', id } }), 400, 'validation_failed');
      }
    });

    it.each([
      ['a top-level __proto__ on create', 'POST', '/v1/sessions', '{"model":"gpt-4.1","__proto__":{"polluted":"yes","headSeq":99}}', 'prototype_key'],
      ['__proto__ in create metadata', 'POST', '/v1/sessions', '{"model":"gpt-4.1","metadata":{"__proto__":{"polluted":"yes"}}}', 'prototype_key'],
      ['constructor.prototype in create config', 'POST', '/v1/sessions', '{"model":"gpt-4.1","config":{"constructor":{"prototype":{"x":1}}}}', 'prototype_key'],
      ['__proto__ in an append', 'POST', '/events', '{"__proto__":{"expectedSeq":0},"events":[]}', 'prototype_key'],
      [
        '__proto__ in message metadata',
        'POST',
        '/events',
        '{"events":[{"type":"message.added","data":{"message":{"role":"user","parts":[{"type":"text","text":"p"}],"metadata":{"__proto__":{"agentVisible":false}}}}}]}',
        'prototype_key',
      ],
      ['__proto__ in a config patch', 'PATCH', '', '{"config":{"__proto__":{"compaction":{"enabled":false}}}}', 'prototype_key'],
      ['constructor in a config patch', 'PATCH', '', '{"config":{"constructor":{"prototype":{"compaction":{"enabled":false}}}}}', 'prototype_key'],
      ['a nested constructor in a config patch', 'PATCH', '', '{"config":{"compaction":{"constructor":{"x":1}}}}', 'prototype_key'],
    ] as const)('%s: 400 %s, nothing written', async (_, method, route, raw, code) => {
      const path = route.startsWith('/v1/') ? route : `/v1/sessions/${sessionId}${route}`;
      await refused(() => client.request(method, path, { key, rawBody: raw, headers: { 'content-type': 'application/json' } }), 400, code);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('a tenant config patch with prototype keys: 400, the defaults unchanged', async () => {
      const { tenantId } = await client.createTenant('proto-admin');
      const configOf = async () => (await owner.query('SELECT config FROM tenants WHERE tenant_id = $1', [tenantId])).rows[0].config;
      const before = await configOf();
      for (const raw of ['{"config":{"__proto__":{"preset":"codex"}}}', '{"config":{"constructor":{"prototype":{"preset":"codex"}}}}']) {
        const res = await client.request('PATCH', `/v1/admin/tenants/${tenantId}`, { key: ADMIN_TOKEN, rawBody: raw, headers: { 'content-type': 'application/json' } });
        expect({ raw, status: res.status }).toEqual({ raw, status: 400 });
      }
      expect(await configOf()).toEqual(before);
    });
  });
});
