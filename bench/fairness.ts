/**
 * Fairness and recovery benchmark (issue 11): a script, not a test.
 *
 * Measured here: the outbox drain rate after a Redis outage. Rows pile up
 * undispatched while a private redis-server is down (FAIR_OUTAGE_S, default
 * 60 s), then the worker's sweeper (OutboxRelay.sweep, sweeper role, SKIP
 * LOCKED batches and one addBulk per batch) drains them once Redis is back.
 * Same-run baseline: the same rows dispatched one add per row (the previous
 * sweeper's way), on a smaller count. The victim/flooder latency half of
 * issue 11's benchmark needs the per-tenant rate limits, not built yet.
 *
 * Needs a migrated database (DATABASE_URL, owner) and `redis-server` on PATH;
 * the run deletes its scratch tenant and stops its Redis.
 *
 *   npm run build && node dist/bench/fairness.js
 *   FAIR_OUTAGE_S=5 FAIR_ROWS=50000 node dist/bench/fairness.js   # quick run
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { Database } from '@app/database';
import { claimUndispatchedOutbox } from '@app/event-store';
import { createRedis, JobDispatcher, JobName, OutboxRelay } from '@app/queue';
import { deleteScratchTenant, int, nowMs, OWNER_URL, printTable, requireLoopback, runBench } from './support';

const OUTAGE_S = Number(process.env.FAIR_OUTAGE_S ?? 60);
const ROWS = Number(process.env.FAIR_ROWS ?? 50_000);
const BASELINE_ROWS = 2_000;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    const up = await probe.connect().then(() => true, () => false);
    probe.disconnect();
    if (up) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('redis-server did not start');
}

async function stopRedis(child: ChildProcess): Promise<void> {
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
}

async function insertRows(owner: Client, tenantId: string, tag: string, count: number): Promise<void> {
  await owner.query(
    `INSERT INTO outbox (tenant_id, job_name, job_id, payload, created_at)
     SELECT $1::uuid, $2, $3 || '-' || i, jsonb_build_object('tenantId', $1::text, 'sessionId', 'bench-' || i), now() - interval '1 minute'
       FROM generate_series(1, $4) AS i`,
    [tenantId, JobName.Noop, `bench-${tag}`, count],
  );
}

runBench(async () => {
  const ownerUrl = new URL(OWNER_URL);
  requireLoopback('DATABASE_URL', ownerUrl);
  const sweeperUrl = new URL(OWNER_URL);
  sweeperUrl.username = 'session_store_sweeper';
  const owner = new Client({ connectionString: OWNER_URL });
  await owner.connect();
  const tenantId = randomUUID();
  await owner.query('INSERT INTO tenants (tenant_id, name) VALUES ($1, $2)', [tenantId, `bench-fairness-${Date.now()}`]);
  // Other rows in this database would be swept too and skew the figures.
  const [{ count: foreign }] = (await owner.query('SELECT count(*)::int AS count FROM outbox WHERE dispatched_at IS NULL')).rows;
  if (foreign > 0) throw new Error(`${foreign} undispatched outbox rows already in this database; use a quiet database`);

  const port = await freePort();
  let redis = await startRedis(port);
  const connection = createRedis(`redis://127.0.0.1:${port}`, 'worker', 'bench');
  const dispatcher = new JobDispatcher(connection, `bench-${Date.now()}`);
  const relay = new OutboxRelay(dispatcher);
  const sweeperDb = new Database(sweeperUrl.toString(), 2, 'bench-fairness');
  try {
    // Baseline: one add per row, as the sweeper did before.
    await insertRows(owner, tenantId, 'baseline', BASELINE_ROWS);
    let t0 = nowMs();
    await sweeperDb.systemTx(async (tx) => {
      for (const row of await claimUndispatchedOutbox(tx, 0, BASELINE_ROWS)) await dispatcher.dispatch(row);
    });
    const baselineRate = BASELINE_ROWS / ((nowMs() - t0) / 1000);
    await owner.query('UPDATE outbox SET dispatched_at = now() WHERE tenant_id = $1', [tenantId]);

    // The outage: rows arrive while Redis is down, and a sweep meanwhile fails without losing them.
    await stopRedis(redis);
    await insertRows(owner, tenantId, 'outage', ROWS);
    await new Promise((r) => setTimeout(r, OUTAGE_S * 1000));
    redis = await startRedis(port);
    while (!dispatcher.connected) await new Promise((r) => setTimeout(r, 20));

    t0 = nowMs();
    let drained = 0;
    for (let n = -1; n !== 0; ) drained += n = await relay.sweep(sweeperDb, 0);
    const seconds = (nowMs() - t0) / 1000;
    const [{ left }] = (await owner.query('SELECT count(*)::int AS left FROM outbox WHERE tenant_id = $1 AND dispatched_at IS NULL', [tenantId])).rows;
    if (drained !== ROWS || left !== 0) throw new Error(`drained ${drained} of ${ROWS}, ${left} left`);

    console.log(`outbox drain after a ${OUTAGE_S} s Redis outage (${int(ROWS)} rows; baseline ${int(BASELINE_ROWS)} rows one add each)\n`);
    printTable([
      ['sweeper', 'rows', 'seconds', 'rows/s'],
      ['one add per row (baseline)', int(BASELINE_ROWS), ((BASELINE_ROWS / baselineRate)).toFixed(2), int(baselineRate)],
      ['batches of 1000, addBulk', int(ROWS), seconds.toFixed(2), int(ROWS / seconds)],
    ]);
  } finally {
    await sweeperDb.close();
    await dispatcher.close().catch(() => undefined);
    connection.disconnect();
    await stopRedis(redis);
    await deleteScratchTenant(owner, tenantId);
    await owner.end();
  }
});
