import type { Tx } from '@app/database';
import { decideAppend, NewEvent, payloadHash } from '@app/domain';
import { findToolCalls, insertEvents, insertSession, lockSessionForAppend, logWriter, readWindow, recordToolCalls } from '.';
import { StoreDatabase, storeDatabase } from './testing/store-database';

/**
 * The session log's SQL where it lives: events written at the head with
 * gap-free seqs, the head moved in the same statement, ids looked up under
 * the session lock, the window read back in order, the tool-call ledger, and
 * row-level security between tenants.
 */

const say = (id: string, role: 'user' | 'assistant', text: string): NewEvent => ({
  id,
  type: 'message.added',
  data: { message: { id, role, parts: [{ type: 'text', text }] } },
});
const row = (event: NewEvent) => ({ event, payloadHash: payloadHash(event), tokens: 3 });

describe('session log (store, real PostgreSQL)', () => {
  let store: StoreDatabase;
  let tenantId: string;

  beforeAll(async () => {
    store = await storeDatabase();
    tenantId = await store.tenant();
  });
  afterAll(() => store?.close());

  const inTenant = <T>(work: (tx: Tx) => Promise<T>, tenant = tenantId) => store.db.tenantTx(tenant, work);
  const newSession = (sessionId: string, tenant = tenantId) =>
    store.db.tenantTx(tenant, (tx) => insertSession(tx, tenant, { sessionId, model: 'gpt-4.1', system: null, systemTokens: 0, config: {}, metadata: {} }));

  it('given a new session, when two batches are written at its head, then seqs run on from the head with no gap and the head moves', async () => {
    // given
    await newSession('log-a');
    // when
    const first = await inTenant((tx) => insertEvents(tx, 'log-a', 0, [row(say('e1', 'user', 'hi')), row(say('e2', 'assistant', 'hello'))]));
    const second = await inTenant((tx) => insertEvents(tx, 'log-a', null, [row(say('e3', 'user', 'bye'))]));
    // then
    expect([first, second]).toEqual([2, 3]);
    const read = await inTenant((tx) => readWindow(tx, 'log-a'));
    expect(read!.session.headSeq).toBe(3);
    expect(read!.events.map((e) => [e.seq, e.id])).toEqual([
      [1, 'e1'],
      [2, 'e2'],
      [3, 'e3'],
    ]);
  });

  it('given stored events, when the lock looks their ids up, then it finds them with their seqs and body hashes, and not the unknown one', async () => {
    // given
    await newSession('log-b');
    const stored = say('b1', 'user', 'once');
    await inTenant((tx) => insertEvents(tx, 'log-b', 0, [row(stored)]));
    // when
    const locked = await inTenant((tx) => lockSessionForAppend(tx, 'log-b', { eventIds: ['b1', 'b2'] }));
    // then
    expect(locked).toMatchObject({ headSeq: 1, model: 'gpt-4.1', archived: false });
    expect(locked!.existing.map((e) => ({ id: e.id, seq: e.seq, sameBody: e.payloadHash.equals(payloadHash(stored)) }))).toEqual([{ id: 'b1', seq: 1, sameBody: true }]);
  });

  it('given a write at a head that moved, when it is sent with the old head, then PostgreSQL refuses the duplicate seq and nothing is written', async () => {
    // given
    await newSession('log-c');
    await inTenant((tx) => insertEvents(tx, 'log-c', 0, [row(say('c1', 'user', 'first'))]));
    // when
    const stale = inTenant((tx) => insertEvents(tx, 'log-c', 0, [row(say('c2', 'user', 'second'))]));
    // then
    await expect(stale).rejects.toThrow();
    expect((await inTenant((tx) => readWindow(tx, 'log-c')))!.events.map((e) => e.id)).toEqual(['c1']);
  });

  it('given issued calls, when one is answered later, then the ledger knows both, answered or not, with their seqs', async () => {
    // given
    await newSession('log-d');
    await inTenant((tx) =>
      recordToolCalls(tx, 'log-d', {
        issued: [
          { callId: 'call-1', name: 'bash', seq: 2 },
          { callId: 'call-2', name: 'read', seq: 2 },
        ],
        answered: [],
      }),
    );
    // when
    await inTenant((tx) => recordToolCalls(tx, 'log-d', { issued: [], answered: [{ callId: 'call-1', seq: 3 }] }));
    // then
    const calls = await inTenant((tx) => findToolCalls(tx, 'log-d', ['call-1', 'call-2', 'call-9']));
    expect(calls.sort((a, b) => a.callId.localeCompare(b.callId))).toEqual([
      { callId: 'call-1', name: 'bash', answered: true, issuedSeq: 2, answeredSeq: 3 },
      { callId: 'call-2', name: 'read', answered: false, issuedSeq: 2, answeredSeq: null },
    ]);
  });

  it("given a client's records among the messages, when the window is read, then it holds the messages only", async () => {
    // given
    await newSession('log-f');
    const record: NewEvent = { id: 'r1', type: 'record.added', data: { kind: 'checkpoint', value: { step: 1, blob: 'x'.repeat(10_000) } } };
    await inTenant((tx) => insertEvents(tx, 'log-f', 0, [row(say('f1', 'user', 'hi')), row(record), row(say('f2', 'assistant', 'hello'))]));
    // when
    const read = await inTenant((tx) => readWindow(tx, 'log-f'));
    // then
    expect(read!.events.map((e) => [e.seq, e.id])).toEqual([
      [1, 'f1'],
      [3, 'f2'],
    ]);
    expect(read!.session.headSeq).toBe(3);
  });

  it("given another tenant's session, when this tenant reads, locks or writes it, then it does not exist for this tenant", async () => {
    // given
    const other = await store.tenant();
    await newSession('log-e', other);
    await store.db.tenantTx(other, (tx) => insertEvents(tx, 'log-e', 0, [row(say('x1', 'user', 'secret'))]));
    // when
    const read = await inTenant((tx) => readWindow(tx, 'log-e'));
    const locked = await inTenant((tx) => lockSessionForAppend(tx, 'log-e', { eventIds: ['x1'] }));
    const written = inTenant((tx) => insertEvents(tx, 'log-e', null, [row(say('x2', 'user', 'planted'))]));
    // then
    expect({ read, locked }).toEqual({ read: undefined, locked: undefined });
    await expect(written).rejects.toThrow();
    expect((await store.db.tenantTx(other, (tx) => readWindow(tx, 'log-e')))!.events.map((e) => e.id)).toEqual(['x1']);
  });
  it('given a stored event and an issued call, when the port locks for a batch, then its state holds them for the decider; when it writes the decision, then the rows and the ledger are stored', async () => {
    // given
    await newSession('log-port');
    const asked = say('p1', 'user', 'list the files');
    const call: NewEvent = { id: 'p2', type: 'message.added', data: { message: { id: 'p2', role: 'assistant', parts: [{ type: 'tool_call', callId: 'c1', name: 'bash', input: {} }] } } };
    await inTenant((tx) => insertEvents(tx, 'log-port', 0, [row(asked), row(call)]));
    await inTenant((tx) => recordToolCalls(tx, 'log-port', { issued: [{ callId: 'c1', name: 'bash', seq: 2 }], answered: [] }));
    // when
    const lookup = { eventIds: ['p1', 'p3'], lookup: 'log' as const, callIds: ['c1'], withConfigs: false };
    const locked = await inTenant((tx) => logWriter.lock(tx, 'log-port', lookup));
    // then
    expect(locked!.state).toMatchObject({ sessionId: 'log-port', headSeq: 2, model: 'gpt-4.1', archived: false, knownCalls: [{ callId: 'c1', name: 'bash', answered: false }] });
    expect(locked!.state.stored.map((e) => [e.id, e.seq])).toEqual([['p1', 1]]);
    // when a call is issued and the decision written
    const next: NewEvent = { id: 'p3', type: 'message.added', data: { message: { id: 'p3', role: 'assistant', parts: [{ type: 'tool_call', callId: 'c2', name: 'bash', input: {} }] } } };
    const headSeq = await inTenant(async (tx) => {
      const { state } = (await logWriter.lock(tx, 'log-port', { ...lookup, eventIds: ['p3'], callIds: ['c2'] }))!;
      const decision = decideAppend(state, { events: [next], hashes: [payloadHash(next)], quotas: false });
      if (decision.kind !== 'write') throw new Error('expected a write');
      return logWriter.write(tx, 'log-port', { ...decision, rows: decision.rows! });
    });
    // then
    expect(headSeq).toBe(3);
    expect((await inTenant((tx) => readWindow(tx, 'log-port')))!.events.map((e) => [e.seq, e.id])).toEqual([
      [1, 'p1'],
      [2, 'p2'],
      [3, 'p3'],
    ]);
    expect(await inTenant((tx) => findToolCalls(tx, 'log-port', ['c2']))).toMatchObject([{ callId: 'c2', issuedSeq: 3, answered: false }]);
  });
});
