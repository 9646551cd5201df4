import type { Socket } from 'node:net';
import type { PoolClient } from 'pg';
// The class itself, not the package index: that also loads the Nest module, which Jest cannot require.
import { Database } from '../libs/database/src/database';
import { createTestDatabase } from './support/database';

/**
 * How the pooled connections write to PostgreSQL (docs/decisions.md, "One
 * socket write per batch of statements"): what a transaction sends together
 * (in one synchronous run) leaves in one socket write, not one per statement.
 * Counted at the socket's flushes (`_write` for one buffer, `_writev` for
 * several), against a real server.
 */
describe('database: statements sent together leave in one socket write', () => {
  const TENANT = '00000000-0000-4000-8000-000000000001';
  let db: { url: string; drop: () => Promise<void> };
  let database: Database;
  let flushes: () => number;

  beforeAll(async () => {
    db = await createTestDatabase();
    // One connection, so every transaction below runs on the socket watched here.
    database = new Database(db.url, 1, 'database-writes-spec');
    const client: PoolClient = await database.pool.connect();
    const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
    client.release();
    const write = jest.spyOn(socket as unknown as { _write: () => void }, '_write');
    const writev = jest.spyOn(socket as unknown as { _writev: () => void }, '_writev');
    flushes = () => write.mock.calls.length + writev.mock.calls.length;
  });

  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  it('a one-round-trip transaction (BEGIN with the tenant, two statements, COMMIT) is one write', async () => {
    const before = flushes();
    const rows = await database.tenantOneTrip(TENANT, async (tx) => {
      const [first, second] = await Promise.all([tx.query<{ a: number }>('SELECT 1 AS a'), tx.query<{ tenant: string }>(`SELECT current_setting('app.tenant_id') AS tenant`)]);
      return [first[0].a, second[0].tenant];
    });
    expect(rows).toEqual([1, TENANT]);
    expect(flushes() - before).toBe(1);
  });

  it('statements sent after an answer go in a later write: one per batch, not one per transaction', async () => {
    const before = flushes();
    const tenant = await database.tenantTx(TENANT, async (tx) => {
      await tx.query('SELECT 1');
      return (await tx.query<{ tenant: string }>(`SELECT current_setting('app.tenant_id') AS tenant`))[0].tenant;
    });
    expect(tenant).toBe(TENANT);
    // BEGIN with the first statement; the second after the first's answer; COMMIT after the second's.
    expect(flushes() - before).toBe(3);
  });
});
