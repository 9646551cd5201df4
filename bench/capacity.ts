/**
 * Capacity benchmark: a script, not a test.
 *
 * Starts its own API processes (dist/apps/api/src/main.js) on a scratch
 * database, once one and once two behind a client-side round robin, and runs
 * an agent workload through them: AGENTS concurrent agents, each on its own
 * session, each turn one POST of five messages (user text, an assistant with
 * two tool calls, two tool results of ~4 KB of log text, every 10th turn one
 * of 100 KB, an assistant text) followed by one context read
 * (format=openai). It reports turns/s, appends/s, context reads/s and their
 * p50/p99, and the CPU the API processes and PostgreSQL used (from /proc),
 * so throughput per API core and per PostgreSQL core follow. On this
 * 2-core machine the API processes, PostgreSQL and the client share the
 * same cores: two APIs show the overhead and correctness of a second
 * replica, not a speed-up. Then, on one API, appends alone and context
 * reads alone, for the API CPU each kind of call costs (calls per core).
 *
 * In the same run, the baseline: raw `pg`, the same five messages per turn
 * as one autocommitted INSERT each into a plain (session_id, seq, payload
 * jsonb) table, the same concurrency.
 *
 * Then the storage per turn (table sizes before and after, over the turns
 * written) and the Redis memory per queued job (10,000 compaction-shaped
 * jobs added to a scratch BullMQ queue, INFO memory before and after).
 *
 *   npm run build && npm run bench:capacity
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run bench:capacity
 */
import { ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { ADMIN_TOKEN, agentTurn, benchClient, BenchClient, databaseUrl, expectStatus, freePort, int, nowMs, printTable, runBench, sampleStats, seededRandom, spawnApi } from './support';

const AGENTS = Number(process.env.BENCH_AGENTS ?? 32);
const TURNS = Number(process.env.BENCH_TURNS ?? 30);
const REPETITIONS = 3;
const ADMIN_URL = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUED_JOBS = 10_000;
const CLOCK_TICKS = 100; // USER_HZ on Linux

const dbUrl = (name: string) => databaseUrl(ADMIN_URL, name);

/** CPU seconds (user + system) of a process, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0; // gone meanwhile (a backend that ended)
  }
}

/** CPU seconds of every PostgreSQL process on the machine (the shared server and its backends). */
function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') total += cpuSeconds(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return total;
}

interface Api {
  url: URL;
  child: ChildProcess;
}

async function startApi(database: string, prefix: string): Promise<Api> {
  const port = await freePort();
  const child = await spawnApi(port, {
    NODE_ENV: 'test',
    DATABASE_URL: dbUrl(database),
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    ADMIN_TOKEN,
    // The workload is one tenant; its own limits are not what is measured.
    TENANT_REQUEST_RATE: '0',
    TENANT_BYTE_RATE: '0',
    TENANT_MAX_CONNECTIONS: '0',
  });
  return { url: new URL(`http://127.0.0.1:${port}`), child };
}

async function stopApi(api: Api): Promise<void> {
  api.child.kill('SIGTERM');
  if (api.child.exitCode === null) await new Promise((r) => api.child.once('exit', r));
}

/** One agent's TURNS turns (bench/support.ts agentTurn), seeded by its session id: agents' tool outputs differ, as the service stores each distinct output once per tenant. */
function agentTurns(session: string) {
  const random = seededRandom(createHash('sha256').update(session).digest().readUInt32LE(0));
  return Array.from({ length: TURNS }, (_, t) => agentTurn(random, t));
}

interface RunResult {
  seconds: number;
  turns: number;
  append: number[];
  context: number[];
  apiCpu: number;
  pgCpu: number;
}

/**
 * AGENTS agents, TURNS turns each, spread over the APIs round robin by agent.
 * `mode`: whole turns (an append, then a context read), appends only, or
 * context reads only (of sessions a run before wrote, named by `tag`).
 */
async function runService(apis: Api[], key: string, tag: string, mode: 'turns' | 'appends' | 'reads' = 'turns'): Promise<RunResult> {
  const clients: BenchClient[] = apis.map((api) => benchClient(api.url, { maxSockets: AGENTS }));
  const sessions = Array.from({ length: AGENTS }, (_, a) => `${tag}-${a}`);
  if (mode !== 'reads') {
    for (const [a, id] of sessions.entries()) {
      expectStatus(await clients[a % clients.length].call('POST', '/v1/sessions', key, { model: 'gpt-4.1', id }), 201, 'create session');
    }
  }
  const bodies = sessions.map((s) => agentTurns(s).map((events) => ({ events })));
  const append: number[] = [];
  const context: number[] = [];
  const apiCpu0 = apis.reduce((s, api) => s + cpuSeconds(api.child.pid!), 0);
  const pgCpu0 = postgresCpuSeconds();
  const t0 = nowMs();
  await Promise.all(
    sessions.map(async (session, a) => {
      const client = clients[a % clients.length];
      for (let t = 0; t < TURNS; t++) {
        let start = nowMs();
        if (mode !== 'reads') {
          expectStatus(await client.call('POST', `/v1/sessions/${session}/events`, key, bodies[a][t]), 201, 'append turn');
          append.push(nowMs() - start);
        }
        if (mode !== 'appends') {
          start = nowMs();
          expectStatus(await client.call('GET', `/v1/sessions/${session}/context?format=openai`, key), 200, 'context');
          context.push(nowMs() - start);
        }
      }
    }),
  );
  const seconds = (nowMs() - t0) / 1000;
  const result = {
    seconds,
    turns: AGENTS * TURNS,
    append,
    context,
    apiCpu: apis.reduce((s, api) => s + cpuSeconds(api.child.pid!), 0) - apiCpu0,
    pgCpu: postgresCpuSeconds() - pgCpu0,
  };
  for (const c of clients) c.agent.destroy();
  return result;
}

/** The same messages as one autocommitted INSERT each, AGENTS connections at once. */
async function runRaw(database: string, tag: string): Promise<{ seconds: number; turns: number; pgCpu: number }> {
  const conns = await Promise.all(Array.from({ length: AGENTS }, async () => {
    const c = new Client({ connectionString: dbUrl(database) });
    await c.connect();
    return c;
  }));
  const bodies = conns.map((_, a) => agentTurns(`${tag}-${a}`).map((turn) => turn.map((m) => JSON.stringify(m.data))));
  const pgCpu0 = postgresCpuSeconds();
  const t0 = nowMs();
  await Promise.all(
    conns.map(async (c, a) => {
      let seq = 0;
      for (let t = 0; t < TURNS; t++) {
        for (const payload of bodies[a][t]) {
          await c.query('INSERT INTO raw_events (session_id, seq, payload) VALUES ($1, $2, $3)', [`${tag}-${a}`, ++seq, payload]);
        }
      }
    }),
  );
  const seconds = (nowMs() - t0) / 1000;
  const pgCpu = postgresCpuSeconds() - pgCpu0;
  await Promise.all(conns.map((c) => c.end()));
  return { seconds, turns: AGENTS * TURNS, pgCpu };
}

const STORED_TABLES = ['sessions', 'session_events', 'session_tool_calls', 'tool_output_contents', 'tool_output_chunks', 'tool_output_refs', 'outbox'];

async function storedBytes(owner: Client): Promise<number> {
  const { rows } = await owner.query(
    `SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes
       FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
        AND (c.relname = ANY($1) OR (c.relispartition AND regexp_replace(c.relname, '_p[0-9]+$', '') = ANY($1)))`,
    [STORED_TABLES],
  );
  return Number(rows[0].bytes);
}

/** Bytes of Redis memory per waiting BullMQ job of the compaction queue's shape. */
async function redisBytesPerJob(): Promise<number> {
  const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
  const prefix = `bench-capacity-${randomBytes(4).toString('hex')}`;
  const queue = new Queue('compaction', { connection: redis, prefix });
  const used = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
  try {
    const before = await used();
    for (let start = 0; start < QUEUED_JOBS; start += 1000) {
      await queue.addBulk(
        Array.from({ length: 1000 }, (_, i) => ({
          name: 'compact',
          data: { tenantId: randomUUID(), sessionId: `session-${start + i}`, markerSeq: 1000 + i },
          opts: { jobId: `compact-${randomUUID()}-${start + i}`, attempts: 5, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: 1000, removeOnFail: 5000 },
        })),
      );
    }
    return (await used() - before) / QUEUED_JOBS;
  } finally {
    await queue.obliterate({ force: true });
    await queue.close();
    redis.disconnect();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

runBench(async () => {
  const database = `sst_bench_capacity_${Date.now()}`;
  const admin = new Client({ connectionString: ADMIN_URL.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  const owner = new Client({ connectionString: dbUrl(database) });
  const apis: Api[] = [];
  try {
    const prefix = `bench-capacity-${randomBytes(4).toString('hex')}`;
    apis.push(await startApi(database, prefix)); // migrates the scratch database
    await owner.connect();
    await owner.query('CREATE TABLE raw_events (session_id text NOT NULL, seq bigint NOT NULL, payload jsonb NOT NULL, PRIMARY KEY (session_id, seq))');
    const admin0 = benchClient(apis[0].url);
    const tenant = expectStatus(await admin0.call('POST', '/v1/admin/tenants', ADMIN_TOKEN, { name: 'capacity' }), 201, 'create tenant');
    const key = tenant.apiKey.key as string;
    admin0.agent.destroy();

    const rows: string[][] = [['case (medians of 3)', 'turns/s', 'messages/s', 'append p50 / p99 (ms)', 'context p50 / p99 (ms)', 'API CPU s / 1k turns', 'PG CPU s / 1k turns']];
    const perTurnBytes: number[] = [];
    for (const count of [1, 2]) {
      while (apis.length < count) apis.push(await startApi(database, prefix));
      const runs: RunResult[] = [];
      for (let r = 0; r < REPETITIONS; r++) {
        const before = await storedBytes(owner);
        runs.push(await runService(apis.slice(0, count), key, `api${count}-r${r}`));
        perTurnBytes.push((await storedBytes(owner) - before) / runs[r].turns);
      }
      const a = sampleStats(runs.flatMap((x) => x.append));
      const c = sampleStats(runs.flatMap((x) => x.context));
      rows.push([
        `service, ${count} API process${count > 1 ? 'es' : ''}`,
        int(median(runs.map((x) => x.turns / x.seconds))),
        int(median(runs.map((x) => (x.turns * 5) / x.seconds))),
        `${a.p50.toFixed(1)} / ${a.p99.toFixed(1)}`,
        `${c.p50.toFixed(1)} / ${c.p99.toFixed(1)}`,
        median(runs.map((x) => (x.apiCpu / x.turns) * 1000)).toFixed(1),
        median(runs.map((x) => (x.pgCpu / x.turns) * 1000)).toFixed(1),
      ]);
    }
    // Per API core: appends alone, then context reads alone of the sessions just written, on one API.
    const perCore: string[][] = [['one API process, one kind of call (medians of 3)', 'calls/s', 'p50 / p99 (ms)', 'API CPU ms per call', 'calls per API core-second']];
    for (const mode of ['appends', 'reads'] as const) {
      const runs: RunResult[] = [];
      for (let r = 0; r < REPETITIONS; r++) runs.push(await runService(apis.slice(0, 1), key, `only-r${r}`, mode));
      const samples = runs.flatMap((x) => (mode === 'appends' ? x.append : x.context));
      const st = sampleStats(samples);
      const cpuPerCall = median(runs.map((x) => (x.apiCpu / x.turns) * 1000));
      perCore.push([
        mode === 'appends' ? 'append of a turn (5 messages, 2 tool results)' : 'context read (format=openai)',
        int(median(runs.map((x) => x.turns / x.seconds))),
        `${st.p50.toFixed(1)} / ${st.p99.toFixed(1)}`,
        cpuPerCall.toFixed(2),
        int(1000 / cpuPerCall),
      ]);
    }
    const raw = [];
    for (let r = 0; r < REPETITIONS; r++) raw.push(await runRaw(database, `raw-r${r}`));
    rows.push([
      'raw pg, 5 INSERTs per turn',
      int(median(raw.map((x) => x.turns / x.seconds))),
      int(median(raw.map((x) => (x.turns * 5) / x.seconds))),
      '—',
      '—',
      '—',
      median(raw.map((x) => (x.pgCpu / x.turns) * 1000)).toFixed(1),
    ]);
    console.log(`\n${AGENTS} agents x ${TURNS} turns per run, ${REPETITIONS} runs per case, on ${process.env.BENCH_MACHINE ?? 'this machine'}\n`);
    printTable(rows);
    console.log('');
    printTable(perCore);
    const bytesPerTurn = median(perTurnBytes);
    const jobBytes = await redisBytesPerJob();
    console.log('');
    printTable([
      ['capacity figure', 'value'],
      ['stored bytes per turn (5 messages, tool outputs, indexes)', int(bytesPerTurn)],
      ['stored bytes per session-hour (a turn every 10 s: 360 turns)', int(bytesPerTurn * 360)],
      ['Redis memory per waiting compaction job (bytes)', int(jobBytes)],
    ]);
  } finally {
    await Promise.all(apis.map(stopApi));
    await owner.end().catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  }
});
