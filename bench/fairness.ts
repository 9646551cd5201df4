/**
 * Fairness and recovery benchmark: a script, not a test.
 *
 * 1. A victim tenant's append latency alone and beside a tenant flooding
 *    appends over 64 connections (bench/flood.js, its own process, ignoring
 *    Retry-After), against an API this script starts on a private Redis:
 *    the victim makes sequential one-event appends 20 ms apart (FAIR_SAMPLES
 *    each, alone then beside). Three cases, set through the admin API on the
 *    flooder alone: no limits (the pool is the only bound), the connection
 *    cap only (TENANT_MAX_CONNECTIONS, default half the pool), and the cap
 *    with a request rate of 100/s. Target: victim p99 beside ≤ 3x alone.
 * 2. The outbox drain rate after a Redis outage. Rows pile up undispatched
 *    while the private redis-server is down (FAIR_OUTAGE_S, default 60 s),
 *    then the worker's sweeper (OutboxRelay.sweep, sweeper role, SKIP LOCKED
 *    batches and one addBulk per batch) drains them once Redis is back.
 *    Same-run baseline: the same rows dispatched one add per row (the
 *    previous sweeper's way), on a smaller count. Target ≥ 5,000 rows/s.
 *
 * Needs a migrated, quiet database (DATABASE_URL, owner), a build (dist/)
 * and `redis-server` on PATH; the run deletes its scratch tenants and stops
 * its API and Redis.
 *
 *   npm run build && node dist/bench/fairness.js      # npm run bench:fairness
 *   FAIR_OUTAGE_S=5 FAIR_ROWS=50000 FAIR_SAMPLES=150 node dist/bench/fairness.js   # quick run
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { Database } from '@app/database';
import { claimUndispatchedOutbox } from '@app/event-store';
import { createRedis, JobDispatcher, JobName, OutboxRelay } from '@app/queue';
import type { FloodReport } from './flood';
import { BenchClient, benchClient, deleteScratchTenant, expectStatus, freePort, int, nowMs, OWNER_URL, printTable, requireLoopback, runBench, sampleStats, spawnApi, Stats } from './support';

const OUTAGE_S = Number(process.env.FAIR_OUTAGE_S ?? 60);
const ROWS = Number(process.env.FAIR_ROWS ?? 50_000);
const BASELINE_ROWS = 2_000;
const SAMPLES = Number(process.env.FAIR_SAMPLES ?? 300);
const FLOOD_CONNECTIONS = 64;

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
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
}

async function insertRows(owner: Client, tenantId: string, tag: string, count: number): Promise<void> {
  await owner.query(
    `INSERT INTO outbox (tenant_id, job_name, job_id, payload, created_at)
     SELECT $1::uuid, $2, $3 || '-' || i, jsonb_build_object('tenantId', $1::text, 'sessionId', 'bench-' || i), now() - interval '1 minute'
       FROM generate_series(1, $4) AS i`,
    [tenantId, JobName.SearchIndex, `bench-${tag}`, count],
  );
}

function startApi(port: number, redisPort: number, adminToken: string): Promise<ChildProcess> {
  return spawnApi(port, {
    NODE_ENV: 'production',
    DATABASE_URL: OWNER_URL,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    QUEUE_PREFIX: `bench-fairness-${randomBytes(4).toString('hex')}`,
    ADMIN_TOKEN: adminToken,
  });
}

async function startFlood(base: URL, key: string, sessionId: string): Promise<() => Promise<FloodReport>> {
  const options = { url: base.origin, key, sessionId, connections: FLOOD_CONNECTIONS };
  const child = spawn(process.execPath, [join(__dirname, 'flood.js'), JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value);
  await next();
  return async () => {
    child.stdin!.end();
    return next();
  };
}

/** Sequential one-event appends of the victim, 20 ms apart (a client well below any limit). */
async function victimLatency(client: BenchClient, key: string, count: number): Promise<Stats> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = nowMs();
    const res = await client.call('POST', '/v1/sessions/victim/events', key, { events: [{ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: `victim ${i}` }] } } }] });
    samples.push(nowMs() - t0);
    expectStatus(res, 201, 'victim append');
    await new Promise((r) => setTimeout(r, 20));
  }
  return sampleStats(samples);
}

async function victimBesideFlood(owner: Client, redisPort: number): Promise<void> {
  const adminToken = randomBytes(24).toString('hex');
  const port = await freePort();
  const api = await startApi(port, redisPort, adminToken);
  const client = benchClient(new URL(`http://127.0.0.1:${port}`), { maxSockets: 4 });
  const tenants: string[] = [];
  const tenant = async (name: string) => {
    const created = expectStatus(await client.call('POST', '/v1/admin/tenants', adminToken, { name: `bench-fairness-${name}` }), 201, 'tenant');
    tenants.push(created.tenantId);
    expectStatus(await client.call('POST', '/v1/sessions', created.apiKey.key, { id: name, model: 'gpt-4.1' }), 201, 'session');
    return { tenantId: created.tenantId as string, key: created.apiKey.key as string };
  };
  try {
    const victim = await tenant('victim');
    const flooder = await tenant('flood');
    const cases: Array<[string, Record<string, number | null>]> = [
      ['no limits', { requestsPerSecond: 0, bytesPerSecond: 0, maxConnections: 0 }],
      ['connection cap only', { requestsPerSecond: 0, bytesPerSecond: 0, maxConnections: null }],
      ['connection cap + 100 requests/s', { requestsPerSecond: 100, bytesPerSecond: null, maxConnections: null }],
    ];
    const rows = [['flooder limits', 'p50 alone', 'p99 alone', 'p50 beside', 'p99 beside', 'p99 ratio', 'flood 2xx/s', 'flood 429/s']];
    await victimLatency(client, victim.key, 30); // warm-up
    for (const [label, limits] of cases) {
      expectStatus(await client.call('PATCH', `/v1/admin/tenants/${flooder.tenantId}`, adminToken, { limits }), 200, 'flooder limits');
      const alone = await victimLatency(client, victim.key, SAMPLES);
      const stop = await startFlood(client.base, flooder.key, 'flood');
      const t0 = nowMs();
      const beside = await victimLatency(client, victim.key, SAMPLES);
      const report = await stop();
      const seconds = (nowMs() - t0) / 1000;
      const perSecond = (status: number) => int((report.statuses[status] ?? 0) / seconds);
      const other = Object.keys(report.statuses).filter((s) => s !== '201' && s !== '429');
      if (other.length > 0 || report.errors.length > 0) throw new Error(`flooder saw ${JSON.stringify(report)}`);
      rows.push([label, alone.p50.toFixed(1), alone.p99.toFixed(1), beside.p50.toFixed(1), beside.p99.toFixed(1), `${(beside.p99 / alone.p99).toFixed(2)}x`, perSecond(201), perSecond(429)]);
      // The flood's queued work drains before the next case measures the victim alone.
      await new Promise((r) => setTimeout(r, 2000));
    }
    console.log(`victim append latency (ms), alone and beside a tenant flooding over ${FLOOD_CONNECTIONS} connections (${SAMPLES} samples each)\n`);
    printTable(rows);
    console.log();
  } finally {
    client.agent.destroy();
    api.kill('SIGTERM');
    await new Promise((r) => api.once('exit', r));
    for (const tenantId of tenants) await deleteScratchTenant(owner, tenantId);
  }
}

/** `redis.child` is the running redis-server, replaced when it restarts. */
async function drainAfterOutage(owner: Client, port: number, redis: { child: ChildProcess }): Promise<void> {
  const sweeperUrl = new URL(OWNER_URL);
  sweeperUrl.username = 'session_store_sweeper';
  const tenantId = randomUUID();
  await owner.query('INSERT INTO tenants (tenant_id, name) VALUES ($1, $2)', [tenantId, `bench-fairness-${Date.now()}`]);
  // Other rows in this database would be swept too and skew the figures.
  const [{ count: foreign }] = (await owner.query('SELECT count(*)::int AS count FROM outbox WHERE dispatched_at IS NULL')).rows;
  if (foreign > 0) throw new Error(`${foreign} undispatched outbox rows already in this database; use a quiet database`);

  const connection = createRedis({ url: `redis://127.0.0.1:${port}`, clusterNodes: null }, 'worker', 'bench');
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
    await stopRedis(redis.child);
    await insertRows(owner, tenantId, 'outage', ROWS);
    await new Promise((r) => setTimeout(r, OUTAGE_S * 1000));
    redis.child = await startRedis(port);
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
      ['one add per row (baseline)', int(BASELINE_ROWS), (BASELINE_ROWS / baselineRate).toFixed(2), int(baselineRate)],
      ['batches of 1000, addBulk', int(ROWS), seconds.toFixed(2), int(ROWS / seconds)],
    ]);
  } finally {
    await sweeperDb.close();
    await dispatcher.close().catch(() => undefined);
    connection.disconnect();
    await deleteScratchTenant(owner, tenantId);
  }
}

runBench(async () => {
  requireLoopback('DATABASE_URL', new URL(OWNER_URL));
  const owner = new Client({ connectionString: OWNER_URL });
  await owner.connect();
  const port = await freePort();
  const redis = { child: await startRedis(port) };
  try {
    await victimBesideFlood(owner, port);
    await drainAfterOutage(owner, port, redis);
  } finally {
    await stopRedis(redis.child);
    await owner.end();
  }
});
