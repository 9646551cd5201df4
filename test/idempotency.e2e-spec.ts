import { randomBytes, randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { Client, HttpResult, userMessage } from './support/client';
import { connectAs } from './support/database';
import { startService, TestService } from './support/service';

/**
 * Every write is safe to retry (invariant 2; reliability notes T1.2, T1.3,
 * T2.1-T2.4, T2.7, T2.8): client event ids give EventStoreDB-style replays,
 * and the tenant-scoped Idempotency-Key replays the stored response.
 * Mutations are counted in the database as the owner (RLS hides nothing).
 */
describe('idempotent writes', () => {
  let service: TestService;
  let client: Client;
  let owner: PgClient;

  const newTenant = () => client.createTenant(`idem-${randomBytes(3).toString('hex')}`);
  const count = async (sql: string, params: unknown[]) => (await owner.query(sql, params)).rows[0].n as number;
  const sessionsOf = (tenantId: string) => count('SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1', [tenantId]);
  const eventsOf = (tenantId: string, sessionId: string) =>
    count('SELECT count(*)::int AS n FROM session_events WHERE tenant_id = $1 AND session_id = $2', [tenantId, sessionId]);
  const keysOf = (tenantId: string) => count('SELECT count(*)::int AS n FROM idempotency_keys WHERE tenant_id = $1', [tenantId]);
  const createWithKey = (key: string, idemKey: string, body: Record<string, unknown>) =>
    client.request('POST', '/v1/sessions', { key, body, headers: { 'Idempotency-Key': idemKey } });
  const problem = (res: HttpResult, status: number, code: string) => {
    expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  };

  beforeAll(async () => {
    service = await startService({ worker: false });
    client = new Client(service.baseUrl);
    owner = await connectAs(service.dbUrl);
  });
  afterAll(async () => {
    await owner?.end();
    await service?.stop();
  });

  describe('client event ids (the SQLStreamStore matrix, over HTTP)', () => {
    let tenant: { tenantId: string; key: string };
    let sessionId: string;
    const batch = [userMessage('one', 'e1'), userMessage('two', 'e2'), userMessage('three', 'e3')];

    beforeAll(async () => {
      tenant = await newTenant();
      sessionId = (await client.createSession(tenant.key)).id;
      const first = await client.append(tenant.key, sessionId, { expectedSeq: 1, events: batch });
      expect(first.status).toBe(201);
      expect(first.body).toEqual({ headSeq: 4, events: [{ id: 'e1', seq: 2 }, { id: 'e2', seq: 3 }, { id: 'e3', seq: 4 }] });
      // Something after the batch, so a replay cannot be mistaken for "the head happens to match".
      expect((await client.append(tenant.key, sessionId, { events: [userMessage('later', 'e4')] })).status).toBe(201);
    });

    it.each([
      ['the same ids at the same (now stale) expectedSeq', { expectedSeq: 1, events: batch }],
      ['the same ids without expectedSeq', { events: batch }],
    ])('%s: 200 with the original seqs, no new rows', async (_, body) => {
      const before = await eventsOf(tenant.tenantId, sessionId);
      const res = await client.append(tenant.key, sessionId, body);
      expect(res.status).toBe(200);
      expect(res.body.events).toEqual([{ id: 'e1', seq: 2 }, { id: 'e2', seq: 3 }, { id: 'e3', seq: 4 }]);
      expect(res.body.headSeq).toBe(5);
      expect(await eventsOf(tenant.tenantId, sessionId)).toBe(before);
    });

    it('an initial prefix of the stored batch: 200 with its seqs', async () => {
      const res = await client.append(tenant.key, sessionId, { expectedSeq: 1, events: batch.slice(0, 2) });
      expect(res.status).toBe(200);
      expect(res.body.events).toEqual([{ id: 'e1', seq: 2 }, { id: 'e2', seq: 3 }]);
    });

    it('the same id with a different body: 422 event_id_reused, nothing written', async () => {
      const before = await eventsOf(tenant.tenantId, sessionId);
      const res = await client.append(tenant.key, sessionId, { events: [userMessage('not one', 'e1')] });
      problem(res, 422, 'event_id_reused');
      expect(res.body).toMatchObject({ eventId: 'e1', seq: 2 });
      expect(await eventsOf(tenant.tenantId, sessionId)).toBe(before);
    });

    it('a batch mixing stored and new ids (a superset): 409, nothing written', async () => {
      const before = await eventsOf(tenant.tenantId, sessionId);
      const res = await client.append(tenant.key, sessionId, { events: [...batch, userMessage('four', 'e-new')] });
      problem(res, 409, 'partial_duplicate');
      expect(res.body.storedIds.sort()).toEqual(['e1', 'e2', 'e3']);
      expect(await eventsOf(tenant.tenantId, sessionId)).toBe(before);
    });

    it('new ids at a stale expectedSeq: 409 version_conflict with the head', async () => {
      const res = await client.append(tenant.key, sessionId, { expectedSeq: 1, events: [userMessage('x', 'e-stale')] });
      problem(res, 409, 'version_conflict');
      expect(res.body.headSeq).toBe(5);
    });

    it('event ids are per session: the same ids in another session are new events', async () => {
      const other = (await client.createSession(tenant.key)).id;
      const res = await client.append(tenant.key, other, { events: batch });
      expect(res.status).toBe(201);
      expect(res.body.events.map((e: any) => e.seq)).toEqual([2, 3, 4]);
    });
  });

  describe('Idempotency-Key', () => {
    it('POST /v1/sessions 10× sequentially with the same key and body: identical status and bytes, one session', async () => {
      const tenant = await newTenant();
      const idem = randomUUID();
      const responses: HttpResult[] = [];
      for (let i = 0; i < 10; i++) responses.push(await createWithKey(tenant.key, idem, { model: 'gpt-4.1', metadata: { run: 1 } }));
      expect(responses[0].status).toBe(201);
      for (const res of responses) expect({ status: res.status, text: res.text }).toEqual({ status: responses[0].status, text: responses[0].text });
      expect(await sessionsOf(tenant.tenantId)).toBe(1);
      expect(await keysOf(tenant.tenantId)).toBe(1);
    });

    it('an append 10× sequentially with the same key: identical status and bytes, one event', async () => {
      const tenant = await newTenant();
      const sessionId = (await client.createSession(tenant.key)).id;
      const idem = randomUUID();
      // No event id in the body: without the key, each retry would append a new event.
      const body = { events: [userMessage('retry me')] };
      const responses: HttpResult[] = [];
      for (let i = 0; i < 10; i++) responses.push(await client.append(tenant.key, sessionId, body, { 'Idempotency-Key': idem }));
      expect(responses[0].status).toBe(201);
      for (const res of responses) expect({ status: res.status, text: res.text }).toEqual({ status: 201, text: responses[0].text });
      expect(await eventsOf(tenant.tenantId, sessionId)).toBe(2);
    });

    it('20 parallel session creates with one key: exactly one execution, the rest replay it (or 409), zero 5xx', async () => {
      const tenant = await newTenant();
      const idem = randomUUID();
      const responses = await Promise.all(Array.from({ length: 20 }, () => createWithKey(tenant.key, idem, { model: 'gpt-4.1' })));
      const winners = responses.filter((r) => r.status === 201);
      expect(winners.length).toBeGreaterThanOrEqual(1);
      for (const res of responses) {
        if (res.status === 409) expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        else expect({ status: res.status, text: res.text }).toEqual({ status: 201, text: winners[0].text });
      }
      expect(responses.filter((r) => r.status >= 500)).toEqual([]);
      expect(await sessionsOf(tenant.tenantId)).toBe(1);
    });

    it('20 parallel appends with one key: exactly one event written, identical replays, zero 5xx', async () => {
      const tenant = await newTenant();
      const sessionId = (await client.createSession(tenant.key)).id;
      const idem = randomUUID();
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => client.append(tenant.key, sessionId, { events: [userMessage('once')] }, { 'Idempotency-Key': idem })),
      );
      const ok = responses.filter((r) => r.status === 201);
      expect(ok.length).toBeGreaterThanOrEqual(1);
      for (const res of responses) {
        if (res.status !== 409) expect({ status: res.status, text: res.text }).toEqual({ status: 201, text: ok[0].text });
      }
      expect(await eventsOf(tenant.tenantId, sessionId)).toBe(2);
    });

    it('the same key with a different body: 422 idempotency_key_reused, nothing written', async () => {
      const tenant = await newTenant();
      const idem = randomUUID();
      expect((await createWithKey(tenant.key, idem, { model: 'gpt-4.1' })).status).toBe(201);
      problem(await createWithKey(tenant.key, idem, { model: 'gpt-4.1-mini' }), 422, 'idempotency_key_reused');
      problem(await createWithKey(tenant.key, idem, { model: 'gpt-4.1', id: 'another' }), 422, 'idempotency_key_reused');
      expect(await sessionsOf(tenant.tenantId)).toBe(1);

      // The same key on another route (an append) is a different request too.
      const sessionId = (await client.createSession(tenant.key)).id;
      const res = await client.append(tenant.key, sessionId, { events: [userMessage('x')] }, { 'Idempotency-Key': idem });
      problem(res, 422, 'idempotency_key_reused');
      expect(await eventsOf(tenant.tenantId, sessionId)).toBe(1);

      // And on an append: a different body, or the same body for another session.
      const appendKey = randomUUID();
      expect((await client.append(tenant.key, sessionId, { events: [userMessage('a')] }, { 'Idempotency-Key': appendKey })).status).toBe(201);
      problem(await client.append(tenant.key, sessionId, { events: [userMessage('b')] }, { 'Idempotency-Key': appendKey }), 422, 'idempotency_key_reused');
      const otherSession = (await client.createSession(tenant.key)).id;
      problem(await client.append(tenant.key, otherSession, { events: [userMessage('a')] }, { 'Idempotency-Key': appendKey }), 422, 'idempotency_key_reused');
      expect(await eventsOf(tenant.tenantId, sessionId)).toBe(2);
      expect(await eventsOf(tenant.tenantId, otherSession)).toBe(1);
    });

    it('the same body with its keys in another order is the same request (RFC 8785 fingerprint); a changed value is not', async () => {
      const tenant = await newTenant();
      const sessionId = (await client.createSession(tenant.key)).id;
      const idem = randomUUID();
      const message = { id: 'm-order', role: 'user', parts: [{ type: 'text', text: 'order' }] };
      const first = await client.append(tenant.key, sessionId, { expectedSeq: 1, events: [{ type: 'message.added', data: { message } }] }, { 'Idempotency-Key': idem });
      expect(first.status).toBe(201);
      const reordered = { parts: [{ text: 'order', type: 'text' }], role: 'user', id: 'm-order' };
      const retry = await client.append(tenant.key, sessionId, { events: [{ data: { message: reordered }, type: 'message.added' }], expectedSeq: 1 }, { 'Idempotency-Key': idem });
      expect({ status: retry.status, text: retry.text }).toEqual({ status: first.status, text: first.text });
      const changed = { ...reordered, parts: [{ text: 'order!', type: 'text' }] };
      problem(await client.append(tenant.key, sessionId, { events: [{ data: { message: changed }, type: 'message.added' }], expectedSeq: 1 }, { 'Idempotency-Key': idem }), 422, 'idempotency_key_reused');
      expect(await eventsOf(tenant.tenantId, sessionId)).toBe(2);
    });

    it("tenant B sending tenant A's key value gets its own execution and never A's stored body", async () => {
      const a = await newTenant();
      const b = await newTenant();
      const idem = 'order-1'; // a low-entropy key both tenants might pick
      const marker = `A-ONLY-${randomBytes(6).toString('hex')}`;
      const first = await createWithKey(a.key, idem, { model: 'gpt-4.1', system: marker });
      expect(first.status).toBe(201);
      const theirs = await createWithKey(b.key, idem, { model: 'gpt-4.1', system: marker });
      expect(theirs.status).toBe(201);
      expect(theirs.body.id).not.toBe(first.body.id);
      // B's own execution: a session in B, readable by B and not by A.
      expect((await client.request('GET', `/v1/sessions/${theirs.body.id}`, { key: b.key })).status).toBe(200);
      expect((await client.request('GET', `/v1/sessions/${theirs.body.id}`, { key: a.key })).status).toBe(404);
      // A different body under B is B's own 422, not a replay of A.
      const differs = await createWithKey(b.key, idem, { model: 'gpt-4.1-mini' });
      problem(differs, 422, 'idempotency_key_reused');
      expect(differs.text).not.toContain(first.body.id);
      expect([await sessionsOf(a.tenantId), await sessionsOf(b.tenantId)]).toEqual([1, 1]);
    });

    it('a validation failure stores nothing: the corrected body with the same key executes', async () => {
      const tenant = await newTenant();
      const idem = randomUUID();
      problem(await createWithKey(tenant.key, idem, { model: '' }), 400, 'validation_failed');
      expect(await keysOf(tenant.tenantId)).toBe(0);
      expect((await createWithKey(tenant.key, idem, { model: 'gpt-4.1' })).status).toBe(201);
      expect(await sessionsOf(tenant.tenantId)).toBe(1);

      // The same for appends, including failures found inside the transaction (pairing, expectedSeq).
      const sessionId = (await client.createSession(tenant.key)).id;
      const appendKey = randomUUID();
      const send = (body: unknown) => client.append(tenant.key, sessionId, body, { 'Idempotency-Key': appendKey });
      problem(await send({ events: [{ type: 'nope', data: {} }] }), 400, 'unknown_event_type');
      problem(
        await send({ events: [{ type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'ghost', output: 'x' }] } } }] }),
        400,
        'unknown_tool_call',
      );
      problem(await send({ expectedSeq: 7, events: [userMessage('fixed')] }), 409, 'version_conflict');
      const fixed = await send({ expectedSeq: 1, events: [userMessage('fixed')] });
      expect(fixed.status).toBe(201);
      expect(await eventsOf(tenant.tenantId, sessionId)).toBe(2);
    });

    it.each([
      ['256 characters', 'k'.repeat(256)],
      ['a tab (control character)', 'abc\tdef'],
      ['non-ASCII', 'clé'],
      ['an empty value', ''],
    ])('a malformed key (%s) is 400 invalid_idempotency_key with nothing written', async (_, idem) => {
      const tenant = await newTenant();
      problem(await createWithKey(tenant.key, idem, { model: 'gpt-4.1' }), 400, 'invalid_idempotency_key');
      expect(await sessionsOf(tenant.tenantId)).toBe(0);
      expect(await keysOf(tenant.tenantId)).toBe(0);
    });

    it('a 255-character key is accepted (the documented maximum)', async () => {
      const tenant = await newTenant();
      expect((await createWithKey(tenant.key, 'k'.repeat(255), { model: 'gpt-4.1' })).status).toBe(201);
    });
  });

  describe('expectedSeq', () => {
    it('64 simultaneous appends with the same expectedSeq: exactly one 201 and 63 × 409 version_conflict carrying the head', async () => {
      const tenant = await newTenant();
      const sessionId = (await client.createSession(tenant.key)).id;
      const responses = await Promise.all(
        Array.from({ length: 64 }, (_, i) => client.append(tenant.key, sessionId, { expectedSeq: 1, events: [userMessage(`racer ${i}`, `racer-${i}`)] })),
      );
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(63);
      for (const res of responses.filter((r) => r.status === 409)) {
        expect(res.body).toMatchObject({ code: 'version_conflict', expectedSeq: 1, headSeq: 2 });
      }
      expect(await eventsOf(tenant.tenantId, sessionId)).toBe(2);
      const events = await client.allEvents(tenant.key, sessionId);
      expect(events.map((e) => e.seq)).toEqual([1, 2]);
    });
  });
});
