/**
 * Append benchmark: a script, not a test.
 *
 * Against a running API (BENCH_URL), on loopback:
 *   1. sequential single-event appends: latency p50/p99 over HTTP;
 *   2. 32 concurrent clients on distinct sessions, one event per append: events/s;
 *   3. 32 concurrent clients on distinct sessions, 100 events per append: events/s.
 * In the same run, the baseline writes the same rows (same columns, same data
 * JSON, same token estimate and payload hash, both computed before any timing)
 * straight into session_events with `pg` as the owner:
 * one autocommit single-row INSERT per event for 1 and 2, one 100-row INSERT
 * (unnest) per batch for 3, one connection per client. The two sides
 * alternate in slices, so background load on the cores hits both alike. Then
 * it prints ours / baseline per case.
 *
 * Events are built before each timed run. Bounded: fixed counts, loopback
 * only, every case warms up first, the run stops by itself and deletes its
 * scratch tenant (cascading to its sessions and events).
 *
 *   npm run build && npm run bench:append
 *   BENCH_URL=http://127.0.0.1:3300 DATABASE_URL=postgres://postgres@127.0.0.1:5432/session_store npm run bench:append
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { eventTokens, payloadHash } from '@app/domain';
import {
  BASE_URL,
  benchClient,
  createScratchTenant,
  deleteScratchTenant,
  expectStatus,
  IDLE_SOCKET_TIMEOUT_MS,
  int,
  nowMs,
  OWNER_URL,
  printTable,
  requireLoopback,
  runBench,
  sampleStats,
  Stats,
} from './support';

const MODEL = 'gpt-4.1';
const CLIENTS = 32;
const BATCH = 100;
const SEQ = { warmup: 300, measured: 3000 };
const CONC_SINGLE = { warmupPerClient: 20, measuredPerClient: 250 }; // 8,000 measured events
const CONC_BATCH = { warmupPerClient: 2, measuredPerClient: 25 }; // 32 x 25 x 100 = 80,000 measured events
const TEXT_PAD = 'The quick brown fox jumps over the lazy dog. '.repeat(2); // ~90 chars: a short chat turn

requireLoopback('BENCH_URL', BASE_URL);
requireLoopback('DATABASE_URL', new URL(OWNER_URL));

const client = benchClient(BASE_URL, { maxSockets: CLIENTS * 2, timeout: IDLE_SOCKET_TIMEOUT_MS });
const { call } = client;

// ---------------------------------------------------------------- rows

interface BenchEvent {
  id: string;
  type: 'message.added';
  data: { message: { id: string; role: 'user'; parts: Array<{ type: 'text'; text: string }> } };
}

/** What the baseline writes besides the event: the service's token estimate and payload hash, computed untimed. */
interface BaselineExtras {
  tokens: number;
  hash: Buffer;
}

const extras = new WeakMap<BenchEvent, BaselineExtras>();

let counter = 0;


/**
 * One event as the client sends it. The data is already in the stored form
 * (the service fills message.id with the event id when absent), so the
 * baseline can write the very same JSON. The row's other derived columns are
 * computed here, outside every timed section, as the service computes them.
 */
function newEvent(): BenchEvent {
  const id = randomUUID();
  const text = `bench message ${++counter}: ${TEXT_PAD}`;
  const event: BenchEvent = { id, type: 'message.added', data: { message: { id, role: 'user', parts: [{ type: 'text', text }] } } };
  extras.set(event, { tokens: eventTokens(event, MODEL), hash: payloadHash(event) });
  return event;
}

const extrasOf = (e: BenchEvent) => extras.get(e)!;

// ---------------------------------------------------------------- sessions and appenders

interface Ctx {
  tenantId: string;
  key: string;
}

async function newSession(ctx: Ctx): Promise<{ id: string; headSeq: number }> {
  const body = expectStatus(await call('POST', '/v1/sessions', ctx.key, { model: MODEL }), 201, 'create session');
  return { id: body.id, headSeq: body.headSeq };
}

/** Appends a batch through the API; expects 201 and the next seqs. */
async function appendHttp(ctx: Ctx, session: { id: string; headSeq: number }, events: BenchEvent[]): Promise<void> {
  const body = expectStatus(
    await call('POST', `/v1/sessions/${session.id}/events`, ctx.key, { events }),
    201,
    `append to ${session.id}`,
  );
  if (body.headSeq !== session.headSeq + events.length) {
    throw new Error(`append to ${session.id}: headSeq ${body.headSeq}, expected ${session.headSeq + events.length}`);
  }
  session.headSeq = body.headSeq;
}

const INSERT_ONE = `INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, tokens, payload_hash)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;

const INSERT_MANY = `INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, tokens, payload_hash)
  SELECT $1, $2, $3::bigint + ord, id, type, data, tokens, hash
    FROM unnest($4::text[], $5::text[], $6::jsonb[], $7::int[], $8::bytea[]) WITH ORDINALITY AS t(id, type, data, tokens, hash, ord)`;

/** Baseline: the same rows written directly, as the owner, into a scratch session made through the API. */
async function appendRaw(pg: Client, ctx: Ctx, session: { id: string; headSeq: number }, events: BenchEvent[]): Promise<void> {
  if (events.length === 1) {
    const e = events[0];
    const { tokens, hash } = extrasOf(e);
    await pg.query(INSERT_ONE, [ctx.tenantId, session.id, session.headSeq + 1, e.id, e.type, JSON.stringify(e.data), tokens, hash]);
  } else {
    await pg.query(INSERT_MANY, [
      ctx.tenantId,
      session.id,
      session.headSeq,
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => JSON.stringify(e.data)),
      events.map((e) => extrasOf(e).tokens),
      events.map((e) => extrasOf(e).hash),
    ]);
  }
  session.headSeq += events.length;
}

type Append = (worker: number, events: BenchEvent[]) => Promise<void>;

const batchOf = (n: number) => Array.from({ length: n }, newEvent);

// ---------------------------------------------------------------- measurements

// Measured work is cut into SLICES and the two sides alternate slice by slice,
// so drift (other processes on the cores, checkpoints) hits both alike.
const SLICES = 5;

/** Sequential one-event appends on one session per side. */
async function sequential(ours: Append, base: Append): Promise<{ ours: Stats; base: Stats }> {
  const slice = async (append: Append, n: number, samples?: number[]) => {
    const planned = Array.from({ length: n }, () => batchOf(1)); // built before any timing
    for (const events of planned) {
      const t0 = nowMs();
      await append(0, events);
      samples?.push(nowMs() - t0);
    }
  };
  await slice(ours, SEQ.warmup);
  await slice(base, SEQ.warmup);
  const samples = { ours: [] as number[], base: [] as number[] };
  for (let s = 0; s < SLICES; s++) {
    await slice(ours, SEQ.measured / SLICES, samples.ours);
    await slice(base, SEQ.measured / SLICES, samples.base);
  }
  return { ours: sampleStats(samples.ours), base: sampleStats(samples.base) };
}

interface Throughput {
  eventsPerSec: number;
  events: number;
  seconds: number;
  p50: number;
  p99: number;
}

/** CLIENTS workers, each on its own session, each appending `size`-event batches back to back. */
async function concurrent(
  ours: Append,
  base: Append,
  counts: { warmupPerClient: number; measuredPerClient: number },
  size: number,
): Promise<{ ours: Throughput; base: Throughput }> {
  const run = async (append: Append, rounds: number, samples?: number[]) => {
    // Built before the clock starts: generating events (and the baseline's token
    // estimates) must not take CPU from the server while requests are in flight.
    const planned = Array.from({ length: CLIENTS }, () => Array.from({ length: rounds }, () => batchOf(size)));
    const t0 = nowMs();
    await Promise.all(
      planned.map(async (batches, w) => {
        for (const events of batches) {
          const t = nowMs();
          await append(w, events);
          samples?.push(nowMs() - t);
        }
      }),
    );
    return nowMs() - t0;
  };
  await run(ours, counts.warmupPerClient);
  await run(base, counts.warmupPerClient);
  const acc = { ours: { ms: 0, samples: [] as number[] }, base: { ms: 0, samples: [] as number[] } };
  for (let s = 0; s < SLICES; s++) {
    acc.ours.ms += await run(ours, counts.measuredPerClient / SLICES, acc.ours.samples);
    acc.base.ms += await run(base, counts.measuredPerClient / SLICES, acc.base.samples);
  }
  const events = CLIENTS * counts.measuredPerClient * size;
  const result = (a: { ms: number; samples: number[] }): Throughput => {
    const l = sampleStats(a.samples);
    return { eventsPerSec: events / (a.ms / 1000), events, seconds: a.ms / 1000, p50: l.p50, p99: l.p99 };
  };
  return { ours: result(acc.ours), base: result(acc.base) };
}

// ---------------------------------------------------------------- main

const f = (x: number, digits = 2) => x.toFixed(digits);

async function main(): Promise<void> {
  const owner = new Client({ connectionString: OWNER_URL, application_name: 'bench-append' });
  await owner.connect();
  const [{ server_version: pgVersion }] = (await owner.query('SHOW server_version')).rows;
  const [{ synchronous_commit: syncCommit }] = (await owner.query('SHOW synchronous_commit')).rows;
  const [{ fsync }] = (await owner.query('SHOW fsync')).rows;

  const ctx: Ctx = await createScratchTenant(client, 'bench-append');
  const pgClients: Client[] = [];

  try {
    // Distinct sessions per case and per side; the baseline's are created through the API too (FK, RLS-valid tenant).
    const sessions = async (n: number) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await newSession(ctx));
      return out;
    };
    const ours = { seq: await sessions(1), single: await sessions(CLIENTS), batch: await sessions(CLIENTS) };
    const base = { seq: await sessions(1), single: await sessions(CLIENTS), batch: await sessions(CLIENTS) };
    for (let i = 0; i < CLIENTS; i++) {
      const c = new Client({ connectionString: OWNER_URL, application_name: 'bench-append-baseline' });
      await c.connect();
      pgClients.push(c);
    }

    const http1: Append = (w, ev) => appendHttp(ctx, ours.seq[w], ev);
    const httpSingle: Append = (w, ev) => appendHttp(ctx, ours.single[w], ev);
    const httpBatch: Append = (w, ev) => appendHttp(ctx, ours.batch[w], ev);
    const raw1: Append = (w, ev) => appendRaw(pgClients[w], ctx, base.seq[w], ev);
    const rawSingle: Append = (w, ev) => appendRaw(pgClients[w], ctx, base.single[w], ev);
    const rawBatch: Append = (w, ev) => appendRaw(pgClients[w], ctx, base.batch[w], ev);

    const load = () => os.loadavg().map((x) => f(x)).join(' ');
    console.log(`bench/append: ${BASE_URL.origin}, node ${process.version}, ${os.cpus().length} cpus, PostgreSQL ${pgVersion} (synchronous_commit=${syncCommit}, fsync=${fsync})`);
    console.log(`load average before: ${load()} (other processes on these cores skew every figure)`);
    console.log('sequential single-event ...');
    const { ours: seqOurs, base: seqBase } = await sequential(http1, raw1);
    console.log(`${CLIENTS} concurrent single-event ...`);
    const { ours: singleOurs, base: singleBase } = await concurrent(httpSingle, rawSingle, CONC_SINGLE, 1);
    console.log(`${CLIENTS} concurrent ${BATCH}-event batches ...`);
    const { ours: batchOurs, base: batchBase } = await concurrent(httpBatch, rawBatch, CONC_BATCH, BATCH);

    // Same rows: the stored data of an API-appended event equals what the baseline writes.
    const sample = newEvent();
    await appendHttp(ctx, ours.seq[0], [sample]);
    const stored = await owner.query(
      `SELECT data = $4::jsonb AS same_data, payload_hash = $5 AS same_hash, type = $6 AS same_type, tokens = $7 AS same_tokens
         FROM session_events WHERE tenant_id = $1 AND session_id = $2 AND event_id = $3`,
      [ctx.tenantId, ours.seq[0].id, sample.id, JSON.stringify(sample.data), extrasOf(sample).hash, sample.type, extrasOf(sample).tokens],
    );
    const sameRow = stored.rows.length === 1 && Object.values(stored.rows[0]).every((v) => v === true);

    const rows: string[][] = [
      ['case', 'ours', 'baseline (raw pg)', 'ours / baseline'],
      ['sequential 1-event append, p50 (ms)', f(seqOurs.p50, 3), f(seqBase.p50, 3), `${f(seqOurs.p50 / seqBase.p50)}x`],
      ['sequential 1-event append, p99 (ms)', f(seqOurs.p99, 3), f(seqBase.p99, 3), `${f(seqOurs.p99 / seqBase.p99)}x`],
      [`${CLIENTS} clients, 1-event appends (events/s)`, int(singleOurs.eventsPerSec), int(singleBase.eventsPerSec), f(singleOurs.eventsPerSec / singleBase.eventsPerSec)],
      [`${CLIENTS} clients, ${BATCH}-event batches (events/s)`, int(batchOurs.eventsPerSec), int(batchBase.eventsPerSec), f(batchOurs.eventsPerSec / batchBase.eventsPerSec)],
    ];
    console.log('');
    printTable(rows);
    console.log('');
    console.log(
      `under load (per request p50/p99 ms): 1-event ours ${f(singleOurs.p50)}/${f(singleOurs.p99)}, raw ${f(singleBase.p50)}/${f(singleBase.p99)}; ` +
        `${BATCH}-event ours ${f(batchOurs.p50)}/${f(batchOurs.p99)}, raw ${f(batchBase.p50)}/${f(batchBase.p99)}`,
    );
    console.log(
      `counts: sequential ${SEQ.measured} (+${SEQ.warmup} warm-up); concurrent 1-event ${int(singleOurs.events)} events in ${f(singleOurs.seconds)} s (raw ${f(singleBase.seconds)} s); ` +
        `batched ${int(batchOurs.events)} events in ${f(batchOurs.seconds)} s (raw ${f(batchBase.seconds)} s)`,
    );
    console.log(`load average after: ${load()}`);
    console.log(
      `same rows check (stored data, type, tokens and payload_hash of an API append equal the baseline's): ${sameRow ? 'ok' : `MISMATCH ${JSON.stringify(stored.rows)}`}`,
    );
    console.log(`target p50 <= 1.5 ms single event: ${seqOurs.p50 <= 1.5 ? 'met' : 'MISSED'} (${f(seqOurs.p50, 3)} ms)`);
    console.log(`target >= 20,000 events/s batched: ${batchOurs.eventsPerSec >= 20_000 ? 'met' : 'MISSED'} (${int(batchOurs.eventsPerSec)} events/s)`);
  } finally {
    await Promise.all(pgClients.map((c) => c.end().catch(() => undefined)));
    await deleteScratchTenant(owner, ctx.tenantId);
    await owner.end();
    client.agent.destroy();
  }
}

runBench(main);
