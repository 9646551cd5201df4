/**
 * HTTP-layer benchmark: the API's own CPU per request, for comparing builds
 * (two HTTP adapters, two commits). A script, not a test.
 *
 * Each run starts a built API (API_MAIN, default this build's) on a fresh
 * scratch database, drives it from one client, in order:
 *   1. appends of one agent turn per POST (5 messages, two ~4 KB results);
 *   2. appends of one small event (~100 bytes) per POST;
 *   3. context reads, GET /v1/sessions/{id}/context?format=openai, of a
 *      session of 8 such turns;
 *   4. GET /healthz: the framework alone (routing, hooks, Nest's pipeline,
 *      a small JSON answer), no guard and no database;
 *   5. an empty page of the raw log past the head: the fixed cost of an
 *      authenticated read (guard, query DTO, tenant transaction, one row);
 *   6. the raw log of a session of LOG_TURNS turns, each 10th with a 100 KB
 *      result (stored in the tool-output tables, the event keeping its
 *      view), as peers reads it: its last 20 events, which hold such a
 *      turn, and the whole history, 1,000 events a page;
 * and reads the API process's utime+stime (/proc/<pid>/stat) around each
 * phase: CPU per request does not depend on how busy the other cores are, as
 * wall time does. Then it stops the API with SIGTERM (so a --cpu-prof profile
 * is written: PROF_DIR) and drops the database. One JSON line per run on
 * stdout.
 *
 *   API_MAIN=dist/apps/api/src/main.js PROF_DIR=/tmp/prof node dist/bench/http-layer.js
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import {
  ADMIN_TOKEN,
  agentTurn,
  benchClient,
  createScratchTenant,
  databaseUrl,
  expectStatus,
  freePort,
  nowMs,
  OWNER_URL,
  procCpuMs,
  runBench,
  sampleStats,
  seededRandom,
  userText,
} from './support';

const API_MAIN = process.env.API_MAIN ?? join(__dirname, '..', 'apps', 'api', 'src', 'main.js');
const PROF_DIR = process.env.PROF_DIR;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TURNS = Number(process.env.TURNS ?? 300);
const SMALL = Number(process.env.SMALL ?? 1500);
const READS = Number(process.env.READS ?? 800);
const PROBES = Number(process.env.PROBES ?? 3000);
const LOG_TURNS = Number(process.env.LOG_TURNS ?? 50);
const WARMUP = 100;

interface Phase {
  cpuMsPerRequest: number;
  p50Ms: number;
  p99Ms: number;
  n: number;
  /** The phase's span on the monotonic clock, in µs: a --cpu-prof profile's samples in it (cpu-profile-groups --window=from:to). */
  window: string;
}

async function phase(pid: number, n: number, request: (i: number) => Promise<void>): Promise<Phase> {
  const latencies: number[] = [];
  const from = process.hrtime.bigint() / 1000n;
  const cpu0 = procCpuMs(pid);
  for (let i = 0; i < n; i++) {
    const t0 = nowMs();
    await request(i);
    latencies.push(nowMs() - t0);
  }
  const cpu = procCpuMs(pid) - cpu0;
  const stats = sampleStats(latencies);
  return { cpuMsPerRequest: cpu / n, p50Ms: stats.p50, p99Ms: stats.p99, n, window: `${from}:${process.hrtime.bigint() / 1000n}` };
}

async function main(): Promise<void> {
  const name = `bench_http_${randomBytes(4).toString('hex')}`;
  const port = await freePort();
  const admin = new Client({ connectionString: OWNER_URL });
  await admin.connect();
  const args = PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`, API_MAIN] : [API_MAIN];
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl(OWNER_URL, name),
      REDIS_URL,
      QUEUE_PREFIX: `bench-http-${randomBytes(4).toString('hex')}`,
      ADMIN_TOKEN,
      TENANT_REQUEST_RATE: '0',
      TENANT_BYTE_RATE: '0',
      TENANT_MAX_CONNECTIONS: '0',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const base = new URL(`http://127.0.0.1:${port}`);
    const http = benchClient(base, { maxSockets: 4 });
    for (let deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 200))) {
      if (child.exitCode !== null) throw new Error(`${API_MAIN} exited during start-up`);
      if (await http.call('GET', '/healthz', '').then((r) => r.status === 200, () => false)) break;
      if (Date.now() > deadline) throw new Error(`${API_MAIN} did not start within 60 s`);
    }
    const pid = child.pid!;
    const { key } = await createScratchTenant(http, 'bench-http');
    const session = async () => expectStatus(await http.call('POST', '/v1/sessions', key, { model: 'gpt-4.1' }), 201, 'create session').id as string;
    const random = seededRandom(27);
    // A turn without the 100 KB result of every 10th: the HTTP layer, not the storage of a large output, is measured.
    const turn = (i: number) => agentTurn(random, i * 10);

    const turns = await session();
    const appendTurn = async (i: number) => {
      expectStatus(await http.call('POST', `/v1/sessions/${turns}/events`, key, { events: turn(i) }), 201, 'append turn');
    };
    const small = await session();
    const appendSmall = async (i: number) => {
      expectStatus(await http.call('POST', `/v1/sessions/${small}/events`, key, { events: [userText(i)] }), 201, 'append small');
    };
    const context = await session();
    for (let i = 0; i < 8; i++) expectStatus(await http.call('POST', `/v1/sessions/${context}/events`, key, { events: turn(i) }), 201, 'context turn');
    const read = async () => {
      expectStatus(await http.call('GET', `/v1/sessions/${context}/context?format=openai`, key), 200, 'context');
    };

    await phase(pid, WARMUP, (i) => appendTurn(1_000_000 + i));
    await phase(pid, WARMUP, (i) => appendSmall(1_000_000 + i));
    await phase(pid, WARMUP, read);
    const probe = async () => {
      expectStatus(await http.call('GET', '/healthz', ''), 200, 'healthz');
    };
    await phase(pid, WARMUP, probe);
    const emptyPage = async () => {
      expectStatus(await http.call('GET', `/v1/sessions/${small}/events?afterSeq=1000000000&limit=20`, key), 200, 'empty page');
    };
    await phase(pid, WARMUP, emptyPage);
    const log = await session();
    for (let i = 0; i < LOG_TURNS; i++) expectStatus(await http.call('POST', `/v1/sessions/${log}/events`, key, { events: agentTurn(random, i) }), 201, 'log turn');
    const { headSeq } = expectStatus(await http.call('GET', `/v1/sessions/${log}`, key), 200, 'log session');
    const last20 = async () => {
      expectStatus(await http.call('GET', `/v1/sessions/${log}/events?afterSeq=${headSeq - 20}&limit=20`, key), 200, 'last 20');
    };
    const history = async () => {
      for (let afterSeq: number | null = 0; afterSeq !== null; ) {
        afterSeq = expectStatus(await http.call('GET', `/v1/sessions/${log}/events?afterSeq=${afterSeq}&limit=1000`, key), 200, 'history page').nextAfterSeq;
      }
    };
    await phase(pid, WARMUP, last20);
    await phase(pid, WARMUP / 10, history);
    const result = {
      main: API_MAIN,
      turn: await phase(pid, TURNS, appendTurn),
      small: await phase(pid, SMALL, appendSmall),
      context: await phase(pid, READS, read),
      health: await phase(pid, PROBES, probe),
      emptyPage: await phase(pid, PROBES, emptyPage),
      last20: await phase(pid, READS, last20),
      history: await phase(pid, READS / 4, history),
    };
    console.log(JSON.stringify(result));
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((e) => console.error(`cleanup failed: ${e.message}`));
    await admin.end();
  }
}

runBench(main);
