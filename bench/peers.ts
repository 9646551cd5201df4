/**
 * Peers benchmark: a script, not a test.
 *
 * The agent workload's session of T turns (user text, assistant with two tool
 * calls, two ~4 KB log results, every 10th turn one of ~100 KB, assistant
 * text; bench/support.ts agentTurn, seeded, built before any timing), at
 * T = 50, 200 and 800 (BENCH_TURNS=50,200 overrides), BENCH_REPS repetitions
 * (3), medians printed. Per repetition four sides write their own session of
 * the same shape (own seed: the service stores a tool output once per tenant,
 * so identical outputs would be deduplicated), in alternating slices so
 * background load hits all alike:
 *
 *   raw per message  one autocommitted INSERT per message into a plain
 *                    (session_id, seq, payload jsonb) table, in this process;
 *   raw batched      one multi-row INSERT per turn;
 *   service          over HTTP on loopback: one POST per message, and one
 *                    POST per turn (5 events), each its own session.
 *
 * Then per repetition: bytes stored / payload bytes (payload: the JSON of the
 * messages the client sent; raw: pg_total_relation_size of its table; the
 * service: the growth of every table of its schema, with indexes and TOAST);
 * the whole history (raw SELECT ... ORDER BY seq; the service's events, paged
 * by 1,000; both including the client's JSON parse), the last 20 messages
 * (raw ORDER BY seq DESC LIMIT 20; the service's events after head - 20), the
 * context of the whole session (format=openai, compaction off; service only,
 * the response unparsed), and single small events (a ~100-byte user text).
 * Per-call latencies are the request alone; the status is checked after.
 *
 * Then large results, once: a 186 KB tool result appended inline alone (its
 * call appended before, untimed), against a raw INSERT of the same message;
 * 64 clients appending distinct 100 KB results for 10 s: MB/s (10^6 bytes of
 * message JSON), p50/p99, and the API's VmRSS sampled every 100 ms plus its
 * VmHWM (only when the API is spawned here, the default); then the same flood
 * into a raw table, one pg connection per client, as its baseline.
 *
 * Then throughput, once (the target "at least 5,000 events/s on 2 cores with
 * 32 sessions appending concurrently"): 32 clients per side, each on its own
 * session (raw: its own pg connection; the service: the keep-alive agent),
 * appending back to back, THROUGHPUT.slices slices of THROUGHPUT.sliceSeconds
 * per side and case (2 x 2.5 s), raw and service alternating within each
 * case and slice, every client having made one untimed call first:
 *
 *   per message      the workload's turns, one INSERT / one POST per message;
 *   per turn         one multi-row INSERT / one POST (5 events) per turn;
 *   small events     a user text (userText), one INSERT / one POST each.
 *
 * The turns are THROUGHPUT.turns per client, seeded (a seed of its own for
 * every client of every side and case) and built before timing; a client
 * past them goes round again, raw with the same JSON, the service with its
 * call ids and outputs marked by the lap (no repeated call id, nothing
 * deduplicated). Events/s: the events appended over the slices' wall time,
 * each slice ending with its last call; p50 / p99 per call; the CPU per call
 * of this process (the clients), of the server (when spawned here) and of
 * every PostgreSQL process, from /proc, and the cores they kept busy; each
 * session's head (raw: its row count) is checked against the events
 * appended.
 *
 * By default it creates a scratch database (DATABASE_URL names the server,
 * default postgres://postgres@127.0.0.1:5432/postgres), spawns the built API
 * on it with the tenant limits off (one tenant; its limits are not what is
 * measured) and compaction off in the sessions' config, keeps the raw tables
 * in a schema of their own there, and drops the database at the end. With
 * BENCH_URL it measures that API instead, DATABASE_URL then being the
 * service's own database (as the owner), where it creates and drops a scratch
 * schema and tenant; its table growth then includes anything else written
 * meanwhile.
 *
 * On a server whose autovacuum is off (this project's CI machines), the bench
 * runs ANALYZE of the service's database before each repetition's appends
 * and reads and before the large and throughput phases, in its place: plans
 * otherwise rest on the empty schema's statistics for good (refreshStatistics).
 *
 * Two servers are measured in the same run, each on its own scratch
 * database, their repetitions alternating: bench/floor-server (bare
 * node:http over a raw table, no processing: what a minimal Node HTTP service
 * on this machine pays for being one; it has no context read) and the API.
 * After each side's own tables, a last table sets the service against the
 * floor, target by target (TARGETS). BENCH_TARGET=floor or =service runs one
 * side alone; BENCH_URL measures that API alone.
 *
 *   npm run build && npm run bench:peers
 *   BENCH_TURNS=50 BENCH_REPS=1 npm run bench:peers
 *   BENCH_TARGET=floor npm run bench:peers
 */
import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  ADMIN_TOKEN,
  AgentEvent,
  agentTurn,
  BenchClient,
  benchClient,
  createScratchTenant,
  databaseUrl,
  deleteScratchTenant,
  expectStatus,
  freePort,
  HttpResult,
  IDLE_SOCKET_TIMEOUT_MS,
  int,
  logText,
  nowMs,
  OWNER_URL,
  printTable,
  postgresCpuMs,
  procCpuMs,
  procStatusMiB,
  requireLoopback,
  runBench,
  sampleStats,
  seededRandom,
  spawnApi,
  Stats,
  toolCalls,
  toolResult,
  userText,
} from './support';

const TURNS = (process.env.BENCH_TURNS ?? '50,200,800').split(',').map(Number);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const EXTERNAL = process.env.BENCH_URL;
const DB_URL = process.env.DATABASE_URL ?? (EXTERNAL ? OWNER_URL : 'postgres://postgres@127.0.0.1:5432/postgres');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TARGET = process.env.BENCH_TARGET ?? (process.env.BENCH_URL ? 'service' : 'both');

const MODEL = 'gpt-4.1';
// The context read is of the whole session: no compaction may move its pivot.
const SESSION = { model: MODEL, config: { compaction: { enabled: false } } };
const SLICES = 10;
const SMALL = { warmup: 20, measured: 200 };
const LAST_20 = { warmup: 10, measured: 100 };
/** Whole-history and context reads per repetition: fewer as the session grows. */
const wholeReads = (turns: number) => Math.min(40, Math.max(5, Math.round(2_000 / turns)));
const LARGE = { bytes: 186 * 1024, warmup: 5, measured: 20 };
const FLOOD = { clients: 64, bytes: 100 * 1024, seconds: 10, callsPerBatch: 100 };
const RSS_SAMPLE_MS = 100;
const THROUGHPUT = { clients: 32, slices: 2, sliceSeconds: 2.5, turns: 40 };

if (!TURNS.every((t) => Number.isInteger(t) && t >= SLICES)) throw new Error(`BENCH_TURNS must be integers >= ${SLICES}, got ${process.env.BENCH_TURNS}`);
if (TARGET !== 'service' && TARGET !== 'floor' && TARGET !== 'both') throw new Error(`BENCH_TARGET must be both, service or floor, got ${TARGET}`);
if (TARGET !== 'service' && EXTERNAL) throw new Error('BENCH_URL measures that API alone: unset BENCH_TARGET or set it to service');
/** The server a side measures: the API, or bench/floor-server. */
type Kind = 'floor' | 'service';
const KINDS: Kind[] = TARGET === 'both' ? ['floor', 'service'] : [TARGET];
if (EXTERNAL) requireLoopback('BENCH_URL', new URL(EXTERNAL));
requireLoopback('DATABASE_URL', new URL(DB_URL));

// ---------------------------------------------------------------- the service under test

interface Service {
  kind: Kind;
  http: BenchClient;
  key: string;
  /** The service's database, as its owner: its table sizes; the raw side connects there too, in a schema of its own. */
  dbUrl: string;
  owner: Client;
  /** The server runs without autovacuum: the bench analyzes in its place (refreshStatistics). */
  autovacuumOff?: boolean;
  /** Set when this run spawned the API: its memory can be read. */
  api?: ChildProcess;
  close: () => Promise<void>;
}

async function spawnService(kind: Kind): Promise<Service> {
  const name = `sst_bench_peers_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: DB_URL, application_name: 'bench-peers' });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const port = await freePort();
  let api: ChildProcess | undefined;
  const owner = new Client({ connectionString: databaseUrl(DB_URL, name), application_name: 'bench-peers' });
  const http = benchClient(new URL(`http://127.0.0.1:${port}`), { maxSockets: FLOOD.clients, timeout: IDLE_SOCKET_TIMEOUT_MS });
  const close = async () => {
    http.agent.destroy();
    if (api && api.exitCode === null) {
      api.kill('SIGTERM');
      await new Promise((r) => api!.once('exit', r));
    }
    await owner.end().catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((e) => console.error(`cleanup failed: ${e.message}`));
    await admin.end();
  };
  try {
    api =
      kind === 'floor'
        ? await spawnApi(port, { DATABASE_URL: databaseUrl(DB_URL, name) }, join(__dirname, 'floor-server.js'))
      : await spawnApi(port, {
          NODE_ENV: 'test',
          DATABASE_URL: databaseUrl(DB_URL, name),
          REDIS_URL,
          QUEUE_PREFIX: `bench-peers-${randomBytes(4).toString('hex')}`,
          ADMIN_TOKEN,
          TENANT_REQUEST_RATE: '0',
          TENANT_BYTE_RATE: '0',
          TENANT_MAX_CONNECTIONS: '0',
        });
    await owner.connect();
    const { key } = await createScratchTenant(http, 'bench-peers');
    console.error(`scratch database ${name}, API pid ${api.pid} on port ${port}`);
    return { kind, http, key, dbUrl: databaseUrl(DB_URL, name), owner, api, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function externalService(url: string): Promise<Service> {
  const owner = new Client({ connectionString: DB_URL, application_name: 'bench-peers' });
  await owner.connect();
  const http = benchClient(new URL(url), { maxSockets: FLOOD.clients, timeout: IDLE_SOCKET_TIMEOUT_MS });
  const { tenantId, key } = await createScratchTenant(http, 'bench-peers');
  const close = async () => {
    http.agent.destroy();
    await deleteScratchTenant(owner, tenantId);
    await owner.end();
  };
  return { kind: 'service', http, key, dbUrl: DB_URL, owner, close };
}

// ---------------------------------------------------------------- sides

/** Throws unless `result` has `status`; the body is only parsed for the error. */
function ok(result: HttpResult, status: number, what: string): void {
  if (result.status !== status) expectStatus(result, status, what);
}

class ServiceSession {
  head = 1; // session.created

  private constructor(
    private readonly svc: Service,
    readonly id: string,
  ) {}

  static async create(svc: Service): Promise<ServiceSession> {
    const body = expectStatus(await svc.http.call('POST', '/v1/sessions', svc.key, SESSION), 201, 'create session');
    return new ServiceSession(svc, body.id);
  }

  /** One POST; returns its latency (the request alone). */
  async append(events: AgentEvent[]): Promise<number> {
    const t0 = nowMs();
    const res = await this.svc.http.call('POST', `/v1/sessions/${this.id}/events`, this.svc.key, { events });
    const ms = nowMs() - t0;
    ok(res, 201, `append to ${this.id}`);
    this.head += events.length;
    return ms;
  }

  /** Every event, 1,000 a page; returns how many. */
  async readAll(): Promise<number> {
    let afterSeq = 0;
    let count = 0;
    for (;;) {
      const page = expectStatus(await this.svc.http.call('GET', `/v1/sessions/${this.id}/events?afterSeq=${afterSeq}&limit=1000`, this.svc.key), 200, 'read events');
      count += page.events.length;
      if (page.nextAfterSeq === null) return count;
      afterSeq = page.nextAfterSeq;
    }
  }

  async readLast20(): Promise<number> {
    const page = expectStatus(await this.svc.http.call('GET', `/v1/sessions/${this.id}/events?afterSeq=${this.head - 20}&limit=20`, this.svc.key), 200, 'read last 20');
    return page.events.length;
  }

  async context(): Promise<number> {
    const t0 = nowMs();
    const res = await this.svc.http.call('GET', `/v1/sessions/${this.id}/context?format=openai`, this.svc.key);
    const ms = nowMs() - t0;
    ok(res, 200, `context of ${this.id}`);
    return ms;
  }

  async storedHead(): Promise<number> {
    return expectStatus(await this.svc.http.call('GET', `/v1/sessions/${this.id}`, this.svc.key), 200, 'get session').headSeq;
  }
}

/** A session in a raw table: payload is the message JSON as the client sent it. */
class RawSession {
  head = 0;

  constructor(
    private readonly pg: Client,
    private readonly table: string,
    readonly id: string,
  ) {}

  /** One autocommitted INSERT of `payloads` (JSON text), one row each; returns its latency. */
  async insert(payloads: string[]): Promise<number> {
    const values = payloads.map((_, i) => `($1, $${2 * i + 2}, $${2 * i + 3})`).join(', ');
    const params: unknown[] = [this.id];
    payloads.forEach((p, i) => params.push(this.head + i + 1, p));
    const t0 = nowMs();
    await this.pg.query(`INSERT INTO ${this.table} (session_id, seq, payload) VALUES ${values}`, params);
    const ms = nowMs() - t0;
    this.head += payloads.length;
    return ms;
  }

  async readAll(): Promise<number> {
    return (await this.pg.query(`SELECT payload FROM ${this.table} WHERE session_id = $1 ORDER BY seq`, [this.id])).rowCount ?? 0;
  }

  async readLast20(): Promise<number> {
    return (await this.pg.query(`SELECT payload FROM ${this.table} WHERE session_id = $1 ORDER BY seq DESC LIMIT 20`, [this.id])).rowCount ?? 0;
  }
}

async function createRawTable(pg: Client, table: string): Promise<void> {
  await pg.query(`CREATE TABLE ${table} (session_id text NOT NULL, seq bigint NOT NULL, payload jsonb NOT NULL, PRIMARY KEY (session_id, seq))`);
}

/** The end of a raw side with its own connections: they close and its table goes, whatever failed. */
async function dropRawSide(pg: Client, conns: Client[], table: string): Promise<void> {
  await Promise.all(conns.map((c) => c.end().catch(() => undefined)));
  await pg.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
}

// ---------------------------------------------------------------- one repetition at T turns

/** A session's turns and, built with them, the JSON text of each message. */
interface Workload {
  turns: AgentEvent[][];
  json: string[][];
  bytes: number;
}

function workload(turns: number, seed: number): Workload {
  const random = seededRandom(seed);
  const events = Array.from({ length: turns }, (_, t) => agentTurn(random, t));
  const json = events.map((turn) => turn.map((e) => JSON.stringify(e)));
  return { turns: events, json, bytes: json.flat().reduce((s, j) => s + Buffer.byteLength(j), 0) };
}

interface Rep {
  payloadBytes: number;
  /** Mean ms per turn of each side. */
  perTurn: { rawMessage: number; rawBatched: number; serviceMessage: number; serviceTurn: number };
  calls: { rawMessage: Stats; rawBatched: Stats; serviceMessage: Stats; serviceTurn: Stats };
  small: { raw: Stats; service: Stats };
  stored: { raw: number; service: number };
  history: { raw: number; service: number };
  last20: { raw: number; service: number };
  context: number;
}

/**
 * Statistics of the tables as they are now, what autovacuum keeps up to date as they grow. Where the server
 * runs it (PostgreSQL's default) this does nothing. Where it is off, as on this project's CI machines, every
 * plan would rest on the statistics of the empty schema, and a plan cached on them (a prepared statement's,
 * a foreign key check's) stays: a foreign key's check seq-scanned its partition, growing with every row.
 */
async function refreshStatistics(svc: Service): Promise<void> {
  if (svc.autovacuumOff) await svc.owner.query('ANALYZE');
}

/** Sum of pg_total_relation_size (heap, TOAST, indexes) over the service's tables. */
async function serviceBytes(owner: Client): Promise<number> {
  const { rows } = await owner.query(
    `SELECT coalesce(sum(pg_total_relation_size(oid)), 0)::bigint AS bytes FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'm')`,
  );
  return Number(rows[0].bytes);
}

/** The `runs` take turns: in each of `slices` slices each runs its items `perSlice(slice)` = [from, to), the first runner rotating. */
async function alternate(slices: number, runs: Array<(round: number) => Promise<void>>, perSlice: (slice: number) => [number, number]): Promise<void> {
  for (let s = 0; s < slices; s++) {
    const [from, to] = perSlice(s);
    for (let k = 0; k < runs.length; k++) {
      const run = runs[(s + k) % runs.length];
      for (let i = from; i < to; i++) await run(i);
    }
  }
}

async function repetition(svc: Service, pg: Client, schema: string, turns: number, rep: number, label: string): Promise<Rep> {
  const tag = `${turns}-${rep}`;
  // Each side its own seed (same shape, distinct outputs); seeds differ per T and repetition too.
  const [rawMsgLoad, rawBatchLoad, svcMsgLoad, svcTurnLoad] = [1, 2, 3, 4].map((side) => workload(turns, turns * 1_000 + rep * 10 + side));
  const table = `${schema}.events_${turns}_${rep}`;
  await createRawTable(pg, table);
  const rawMsg = new RawSession(pg, table, `raw-message-${tag}`);
  const rawBatch = new RawSession(pg, table, `raw-batched-${tag}`);
  const svcMsg = await ServiceSession.create(svc);
  const svcTurn = await ServiceSession.create(svc);
  await refreshStatistics(svc);

  // ---- appends
  const samples = { rawMessage: [] as number[], rawBatched: [] as number[], serviceMessage: [] as number[], serviceTurn: [] as number[] };
  const totals = { rawMessage: 0, rawBatched: 0, serviceMessage: 0, serviceTurn: 0 };
  const record = (side: keyof typeof samples, ms: number) => {
    samples[side].push(ms);
    totals[side] += ms;
  };
  const before = await serviceBytes(svc.owner);
  console.error(`${label}: appending ${int(turns * 5)} messages per side ...`);
  await alternate(
    SLICES,
    [
      async (t) => {
        for (const json of rawMsgLoad.json[t]) record('rawMessage', await rawMsg.insert([json]));
      },
      async (t) => record('rawBatched', await rawBatch.insert(rawBatchLoad.json[t])),
      async (t) => {
        for (const event of svcMsgLoad.turns[t]) record('serviceMessage', await svcMsg.append([event]));
      },
      async (t) => record('serviceTurn', await svcTurn.append(svcTurnLoad.turns[t])),
    ],
    (s) => [Math.floor((s * turns) / SLICES), Math.floor(((s + 1) * turns) / SLICES)],
  );
  for (const s of [svcMsg, svcTurn]) {
    const head = await s.storedHead();
    if (head !== 1 + 5 * turns) throw new Error(`session ${s.id}: head ${head}, expected ${1 + 5 * turns}`);
  }

  // ---- storage
  const serviceGrowth = (await serviceBytes(svc.owner)) - before;
  const rawSize = Number((await pg.query(`SELECT pg_total_relation_size($1::regclass)::bigint AS bytes`, [table])).rows[0].bytes);
  const stored = {
    raw: rawSize / (rawMsgLoad.bytes + rawBatchLoad.bytes),
    service: serviceGrowth / (svcMsgLoad.bytes + svcTurnLoad.bytes),
  };

  // ---- reads
  await refreshStatistics(svc);
  const reads = { historyRaw: [] as number[], historyService: [] as number[], last20Raw: [] as number[], last20Service: [] as number[], context: [] as number[] };
  const timed = async (into: number[] | undefined, expected: number, what: string, read: () => Promise<number>) => {
    const t0 = nowMs();
    const n = await read();
    into?.push(nowMs() - t0);
    if (n !== expected) throw new Error(`${what}: ${n} rows, expected ${expected}`);
  };
  const whole = wholeReads(turns);
  console.error(`${label}: reading (${whole} whole histories and contexts, ${LAST_20.measured} last-20 reads per side) ...`);
  const historyRuns = (measure: boolean) => [
    () => timed(measure ? reads.historyRaw : undefined, 5 * turns, 'raw history', () => rawMsg.readAll()),
    () => timed(measure ? reads.historyService : undefined, 1 + 5 * turns, 'service history', () => svcTurn.readAll()),
    ...(svc.kind === 'floor'
      ? []
      : [
          async () => {
            const ms = await svcTurn.context();
            if (measure) reads.context.push(ms);
          },
        ]),
  ];
  await alternate(1, historyRuns(false), () => [0, 1]);
  await alternate(whole, historyRuns(true), () => [0, 1]);
  const last20Runs = (measure: boolean) => [
    () => timed(measure ? reads.last20Raw : undefined, 20, 'raw last 20', () => rawMsg.readLast20()),
    () => timed(measure ? reads.last20Service : undefined, 20, 'service last 20', () => svcTurn.readLast20()),
  ];
  await alternate(1, last20Runs(false), () => [0, LAST_20.warmup]);
  await alternate(SLICES, last20Runs(true), () => [0, LAST_20.measured / SLICES]);

  // ---- single small events, appended after the session's turns
  const small = { raw: [] as number[], service: [] as number[] };
  const smallRuns = (measure: boolean) => [
    async (i: number) => {
      const ms = await rawMsg.insert([JSON.stringify(userText(i))]);
      if (measure) small.raw.push(ms);
    },
    async (i: number) => {
      const ms = await svcMsg.append([userText(i)]);
      if (measure) small.service.push(ms);
    },
  ];
  await alternate(1, smallRuns(false), () => [0, SMALL.warmup]);
  await alternate(SLICES, smallRuns(true), (s) => [(s * SMALL.measured) / SLICES, ((s + 1) * SMALL.measured) / SLICES]);

  await pg.query(`DROP TABLE ${table}`);
  const p50 = (xs: number[]) => sampleStats(xs).p50;
  return {
    payloadBytes: svcTurnLoad.bytes,
    perTurn: {
      rawMessage: totals.rawMessage / turns,
      rawBatched: totals.rawBatched / turns,
      serviceMessage: totals.serviceMessage / turns,
      serviceTurn: totals.serviceTurn / turns,
    },
    calls: {
      rawMessage: sampleStats(samples.rawMessage),
      rawBatched: sampleStats(samples.rawBatched),
      serviceMessage: sampleStats(samples.serviceMessage),
      serviceTurn: sampleStats(samples.serviceTurn),
    },
    small: { raw: sampleStats(small.raw), service: sampleStats(small.service) },
    stored,
    history: { raw: p50(reads.historyRaw), service: p50(reads.historyService) },
    last20: { raw: p50(reads.last20Raw), service: p50(reads.last20Service) },
    context: p50(reads.context),
  };
}

// ---------------------------------------------------------------- large results

interface Large {
  single: { raw: number; service: number };
  flood: { mbPerSec: number; appends: number; seconds: number; p50: number; p99: number; rssBefore?: number; rssPeak?: number; hwm?: number };
  rawFlood: { mbPerSec: number; p50: number; p99: number };
}

/** Distinct outputs of ~`bytes` each (a unique first line over a seeded body): no two are deduplicated. */
const distinctOutput = (body: string, tag: string) => `run ${tag}\n${body}`;

async function largeResults(svc: Service, pg: Client, schema: string): Promise<Large> {
  // One 186 KB result alone: its call untimed first, then the result, against a raw INSERT of the same message.
  console.error(`large: ${LARGE.warmup + LARGE.measured} appends of one ${int(LARGE.bytes / 1024)} KB tool result ...`);
  const body = logText(seededRandom(186), LARGE.bytes);
  const table = `${schema}.large`;
  await createRawTable(pg, table);
  const raw = new RawSession(pg, table, 'raw-large');
  const session = await ServiceSession.create(svc);
  const times = { raw: [] as number[], service: [] as number[] };
  for (let i = 0; i < LARGE.warmup + LARGE.measured; i++) {
    const callId = `large_${i}`;
    const result = toolResult(callId, distinctOutput(body, `large-${i}`));
    const json = JSON.stringify(result);
    await session.append([toolCalls([callId])]);
    const msService = await session.append([result]);
    const msRaw = await raw.insert([json]);
    if (i >= LARGE.warmup) {
      times.service.push(msService);
      times.raw.push(msRaw);
    }
  }
  const single = { raw: sampleStats(times.raw).p50, service: sampleStats(times.service).p50 };

  // 64 clients, each on its own session, appending 100 KB results back to back for FLOOD.seconds.
  console.error(`large: ${FLOOD.clients} clients appending ${int(FLOOD.bytes / 1024)} KB results for ${FLOOD.seconds} s ...`);
  const clients = await Promise.all(
    Array.from({ length: FLOOD.clients }, async (_, c) => ({ session: await ServiceSession.create(svc), body: logText(seededRandom(1_000 + c), FLOOD.bytes), issued: 0, used: 0 })),
  );
  const issue = async (client: (typeof clients)[number]) => {
    const ids = Array.from({ length: FLOOD.callsPerBatch }, (_, i) => `flood_${client.issued + i}`);
    await client.session.append([toolCalls(ids)]);
    client.issued += ids.length;
  };
  for (const client of clients) await issue(client);
  const pid = svc.api?.pid;
  const rssBefore = pid ? procStatusMiB(pid, 'VmRSS') : undefined;
  let rssPeak = rssBefore;
  const sampler = pid ? setInterval(() => (rssPeak = Math.max(rssPeak!, procStatusMiB(pid, 'VmRSS'))), RSS_SAMPLE_MS) : undefined;
  const latencies: number[] = [];
  let bytes = 0;
  const t0 = nowMs();
  const deadline = t0 + FLOOD.seconds * 1000;
  try {
    await Promise.all(
      clients.map(async (client, c) => {
        while (nowMs() < deadline) {
          if (client.used === client.issued) await issue(client); // rare: not a sample
          const result = toolResult(`flood_${client.used}`, distinctOutput(client.body, `${c}-${client.used}`));
          const size = Buffer.byteLength(JSON.stringify(result));
          latencies.push(await client.session.append([result]));
          client.used++;
          bytes += size;
        }
      }),
    );
  } finally {
    clearInterval(sampler);
  }
  const seconds = (nowMs() - t0) / 1000;
  if (pid) rssPeak = Math.max(rssPeak!, procStatusMiB(pid, 'VmRSS'));
  const st = sampleStats(latencies);
  console.error(`large: the same flood into a raw table, ${FLOOD.clients} pg connections, for ${FLOOD.seconds} s ...`);
  const rawFlood = await floodRaw(svc, pg, schema, clients.map((client) => client.body));
  return {
    single,
    rawFlood,
    flood: {
      mbPerSec: bytes / 1e6 / seconds,
      appends: latencies.length,
      seconds,
      p50: st.p50,
      p99: st.p99,
      rssBefore,
      rssPeak,
      hwm: pid ? procStatusMiB(pid, 'VmHWM') : undefined,
    },
  };
}

/** The flood's baseline: one pg connection per client, one autocommitted INSERT per result of the same size. */
async function floodRaw(svc: Service, pg: Client, schema: string, bodies: string[]): Promise<Large['rawFlood']> {
  const table = `${schema}.flood`;
  await createRawTable(pg, table);
  const conns = bodies.map(() => new Client({ connectionString: svc.dbUrl, application_name: 'bench-peers-raw' }));
  try {
    await Promise.all(conns.map((c) => c.connect()));
    let bytes = 0;
    const steps: Step[] = conns.map((conn, c) => {
      const session = new RawSession(conn, table, `flood-${c}`);
      let n = 0;
      return async () => {
        const json = JSON.stringify(toolResult(`flood_${n}`, distinctOutput(bodies[c], `${c}-${n++}`)));
        bytes += Buffer.byteLength(json);
        return [await session.insert([json]), 1];
      };
    });
    const flow = newFlow();
    await runFor(FLOOD.seconds, steps, flow);
    const st = sampleStats(flow.latencies);
    return { mbPerSec: bytes / 1e6 / flow.seconds, p50: st.p50, p99: st.p99 };
  } finally {
    await dropRawSide(pg, conns, table);
  }
}

// ---------------------------------------------------------------- throughput

const FLOW_CASES = ['message', 'turn', 'small'] as const;
type FlowCase = (typeof FLOW_CASES)[number];

/**
 * One side of one case: its calls' latencies and the events they appended, over `seconds` of wall time,
 * and the CPU (ms) that time took in this process (the clients), the server under test and PostgreSQL.
 */
interface Flow {
  events: number;
  seconds: number;
  latencies: number[];
  /** `server`: undefined where no server was read (raw pg's side, or an API not spawned here). */
  cpu: { clients: number; server?: number; postgres: number };
}

const newFlow = (): Flow => ({ events: 0, seconds: 0, latencies: [], cpu: { clients: 0, postgres: 0 } });

/** A client's next call: its latency (the request alone) and how many events it appended. */
type Step = () => Promise<[ms: number, events: number]>;

type Throughput = Record<FlowCase, { raw: Flow; service: Flow }>;

/** Turn `t` of a client's prebuilt turns; past them, lap k >= 1 marks the call ids and outputs, so the service sees no repeat. */
function serviceTurn(load: Workload, t: number): AgentEvent[] {
  const turn = load.turns[t % load.turns.length];
  const lap = Math.floor(t / load.turns.length);
  if (lap === 0) return turn;
  const part = (p: Record<string, unknown>): Record<string, unknown> => {
    if (p.type === 'tool_call') return { ...p, callId: `${p.callId}_lap${lap}` };
    if (p.type === 'tool_result') return { ...p, callId: `${p.callId}_lap${lap}`, output: `lap ${lap}\n${p.output}` };
    return p;
  };
  return turn.map((e) => ({ ...e, data: { message: { ...e.data.message, parts: e.data.message.parts.map(part) } } }));
}

/**
 * Every step, all at once, back to back until `seconds` have passed; the flow's time ends with the last call.
 * `serverPid`: the server whose CPU the calls cost (none for raw pg's side).
 */
async function runFor(seconds: number, steps: Step[], into: Flow, serverPid?: number): Promise<void> {
  // The clients' reading last: the /proc scans are not theirs.
  const cpu0 = { server: serverPid ? procCpuMs(serverPid) : 0, postgres: postgresCpuMs(), clients: process.cpuUsage() };
  const t0 = nowMs();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    steps.map(async (step) => {
      while (nowMs() < deadline) {
        const [ms, events] = await step();
        into.latencies.push(ms);
        into.events += events;
      }
    }),
  );
  into.seconds += (nowMs() - t0) / 1000;
  const clients = process.cpuUsage(cpu0.clients); // first, before the /proc scans
  into.cpu.clients += (clients.user + clients.system) / 1000;
  if (serverPid) into.cpu.server = (into.cpu.server ?? 0) + procCpuMs(serverPid) - cpu0.server;
  into.cpu.postgres += postgresCpuMs() - cpu0.postgres;
}

async function throughput(svc: Service, pg: Client, schema: string): Promise<Throughput> {
  const { clients, turns } = THROUGHPUT;
  const started = nowMs();
  console.error(`throughput: building ${int(turns)} turns for each of ${4 * clients} clients ...`);
  // A seed per client, side and case, apart from the repetitions' (turns * 1,000 + ...).
  const loads = (base: number) => Array.from({ length: clients }, (_, c) => workload(turns, base + c));
  const rawLoads = { message: loads(2_000_000_000), turn: loads(2_000_001_000) };
  const serviceLoads = { message: loads(2_000_002_000), turn: loads(2_000_003_000) };

  const table = `${schema}.throughput`;
  await createRawTable(pg, table);
  const conns = Array.from({ length: clients }, () => new Client({ connectionString: svc.dbUrl, application_name: 'bench-peers-raw' }));
  try {
    await Promise.all(conns.map((c) => c.connect()));
    const raw = Object.fromEntries(FLOW_CASES.map((k) => [k, conns.map((conn, c) => new RawSession(conn, table, `throughput-${k}-${c}`))])) as Record<FlowCase, RawSession[]>;
    const service = Object.fromEntries(
      await Promise.all(FLOW_CASES.map(async (k) => [k, await Promise.all(Array.from({ length: clients }, () => ServiceSession.create(svc)))])),
    ) as Record<FlowCase, ServiceSession[]>;
    const appended = {
      raw: Object.fromEntries(FLOW_CASES.map((k) => [k, new Array<number>(clients).fill(0)])) as Record<FlowCase, number[]>,
      service: Object.fromEntries(FLOW_CASES.map((k) => [k, new Array<number>(clients).fill(0)])) as Record<FlowCase, number[]>,
    };
    const counted =
      (into: number[], c: number, step: Step): Step =>
      async () => {
        const [ms, events] = await step();
        into[c] += events;
        return [ms, events];
      };

    // One step per client, side and case; each keeps its place in its workload across slices.
    const steps: Record<FlowCase, { raw: Step[]; service: Step[] }> = {
      message: {
        raw: raw.message.map((s, c) => {
          const { json } = rawLoads.message[c];
          let i = 0; // message index over the turns, round and round
          return counted(appended.raw.message, c, async () => {
            const turn = json[Math.floor(i / 5) % json.length];
            return [await s.insert([turn[i++ % 5]]), 1];
          });
        }),
        service: service.message.map((s, c) => {
          const load = serviceLoads.message[c];
          let t = 0;
          let m = 0;
          let turn = serviceTurn(load, 0);
          return counted(appended.service.message, c, async () => {
            const event = turn[m++];
            if (m === turn.length) [t, m, turn] = [t + 1, 0, serviceTurn(load, t + 1)];
            return [await s.append([event]), 1];
          });
        }),
      },
      turn: {
        raw: raw.turn.map((s, c) => {
          const { json } = rawLoads.turn[c];
          let t = 0;
          return counted(appended.raw.turn, c, async () => {
            const turn = json[t++ % json.length];
            return [await s.insert(turn), turn.length];
          });
        }),
        service: service.turn.map((s, c) => {
          const load = serviceLoads.turn[c];
          let t = 0;
          return counted(appended.service.turn, c, async () => {
            const turn = serviceTurn(load, t++);
            return [await s.append(turn), turn.length];
          });
        }),
      },
      small: {
        raw: raw.small.map((s, c) => {
          let i = 0;
          return counted(appended.raw.small, c, async () => [await s.insert([JSON.stringify(userText(c * 1_000_000 + i++))]), 1]);
        }),
        service: service.small.map((s, c) => {
          let i = 0;
          return counted(appended.service.small, c, async () => [await s.append([userText(c * 1_000_000 + i++)]), 1]);
        }),
      },
    };

    // Warm-up: one untimed call per client (new connections, first statements).
    for (const k of FLOW_CASES) for (const side of ['raw', 'service'] as const) await Promise.all(steps[k][side].map((step) => step()));

    const result = Object.fromEntries(FLOW_CASES.map((k) => [k, { raw: newFlow(), service: newFlow() }])) as Throughput;
    const { slices, sliceSeconds } = THROUGHPUT;
    console.error(`throughput: ${clients} clients per side, ${slices} x ${sliceSeconds} s per side and case (${FLOW_CASES.join(', ')}) ...`);
    for (let s = 0; s < slices; s++) {
      for (const [k, name] of FLOW_CASES.entries()) {
        const order = (s + k) % 2 === 0 ? (['raw', 'service'] as const) : (['service', 'raw'] as const);
        for (const side of order) await runFor(sliceSeconds, steps[name][side], result[name][side], side === 'service' ? svc.api?.pid : undefined);
      }
    }

    // Every session holds exactly what its client appended.
    for (const k of FLOW_CASES) {
      const heads = await Promise.all(service[k].map((s) => s.storedHead()));
      heads.forEach((head, c) => {
        if (head !== 1 + appended.service[k][c]) throw new Error(`session ${service[k][c].id}: head ${head}, expected ${1 + appended.service[k][c]}`);
      });
    }
    const { rows } = await pg.query(`SELECT session_id, count(*)::int AS n FROM ${table} GROUP BY session_id`);
    const counts = new Map<string, number>(rows.map((r) => [r.session_id, r.n]));
    for (const k of FLOW_CASES) {
      raw[k].forEach((s, c) => {
        if ((counts.get(s.id) ?? 0) !== appended.raw[k][c]) throw new Error(`raw session ${s.id}: ${counts.get(s.id) ?? 0} rows, expected ${appended.raw[k][c]}`);
      });
    }
    console.error(`throughput: done in ${f((nowMs() - started) / 1000, 1)} s`);
    return result;
  } finally {
    await dropRawSide(pg, conns, table);
  }
}

// ---------------------------------------------------------------- report

const f = (x: number, digits = 2) => x.toFixed(digits);
const ms = (x: number) => (x < 10 ? f(x) : f(x, 1));
const ratio = (service: number, raw: number) => `${f(service / raw)}x`;
/** A side's own tables: raw pg against the server measured. */
const columns = (kind: Kind) => ['raw pg', kind, `${kind} / raw`];
const median = (xs: number[]) => sampleStats(xs).p50;
const MIB = 1024 * 1024;

function reportT(kind: Kind, turns: number, reps: Rep[]): void {
  const m = (pick: (r: Rep) => number) => median(reps.map(pick));
  const pair = (raw: (r: Rep) => Stats, service: (r: Rep) => Stats): string[] => {
    const [r50, r99, s50, s99] = [m((r) => raw(r).p50), m((r) => raw(r).p99), m((r) => service(r).p50), m((r) => service(r).p99)];
    return [`${ms(r50)} / ${ms(r99)}`, `${ms(s50)} / ${ms(s99)}`, `${ratio(s50, r50)} / ${ratio(s99, r99)}`];
  };
  const row = (label: string, raw: number, service: number, digits?: number): string[] => [
    label,
    digits === undefined ? ms(raw) : f(raw, digits),
    digits === undefined ? ms(service) : f(service, digits),
    ratio(service, raw),
  ];
  const perTurn = (k: keyof Rep['perTurn']) => m((r) => r.perTurn[k]);
  const messages = turns * 5;
  printTable([
    [`T = ${int(turns)} turns (${int(messages)} messages, ${f(m((r) => r.payloadBytes) / MIB, 1)} MiB payload), medians of ${reps.length}`, ...columns(kind)],
    row('append per turn (ms): INSERT per message / POST per message', perTurn('rawMessage'), perTurn('serviceMessage')),
    row('append per turn (ms): one INSERT per turn / one POST per turn', perTurn('rawBatched'), perTurn('serviceTurn')),
    row('append per turn (ms): INSERT per message / one POST per turn (target <= 3x)', perTurn('rawMessage'), perTurn('serviceTurn')),
    ['one append call p50 / p99 (ms): INSERT per message / POST per message', ...pair((r) => r.calls.rawMessage, (r) => r.calls.serviceMessage)],
    ['one append call p50 / p99 (ms): INSERT per turn / POST per turn', ...pair((r) => r.calls.rawBatched, (r) => r.calls.serviceTurn)],
    ['one append call p50 / p99 (ms): INSERT per message / POST per turn', ...pair((r) => r.calls.rawMessage, (r) => r.calls.serviceTurn)],
    ['single small event p50 / p99 (ms) (target 1.5 / 10 ms)', ...pair((r) => r.small.raw, (r) => r.small.service)],
    row('bytes stored / payload bytes', m((r) => r.stored.raw), m((r) => r.stored.service), 2),
    row('read the whole history, p50 (ms) (target <= 1.5x)', m((r) => r.history.raw), m((r) => r.history.service)),
    row('last 20 messages, p50 (ms) (target <= 2x)', m((r) => r.last20.raw), m((r) => r.last20.service)),
    ...(kind === 'floor' ? [] : [[`context of the ${int(messages)} messages, format=openai, p50 (ms)`, '—', ms(m((r) => r.context)), '—']]),
  ]);
}

function reportLarge(kind: Kind, large: Large): void {
  const rows: string[][] = [
    ['large tool results', ...columns(kind)],
    [`one ${int(LARGE.bytes / 1024)} KB tool result appended alone, p50 of ${LARGE.measured} (ms) (target <= 10)`, ms(large.single.raw), ms(large.single.service), ratio(large.single.service, large.single.raw)],
  ];
  const fl = large.flood;
  const label = `${FLOOD.clients} clients appending ${int(FLOOD.bytes / 1024)} KB results`;
  rows.push(
    [`${label}: MB/s ingested in all (target >= 40)`, f(large.rawFlood.mbPerSec, 1), f(fl.mbPerSec, 1), ratio(fl.mbPerSec, large.rawFlood.mbPerSec)],
    [
      `${label}: p50 / p99 per append (ms) (target p99 <= 1,000)`,
      `${ms(large.rawFlood.p50)} / ${ms(large.rawFlood.p99)}`,
      `${ms(fl.p50)} / ${ms(fl.p99)}`,
      `${ratio(fl.p50, large.rawFlood.p50)} / ${ratio(fl.p99, large.rawFlood.p99)}`,
    ],
  );
  if (fl.rssBefore !== undefined) {
    const server = kind === 'floor' ? 'floor server' : 'API';
    rows.push([`${label}: ${server} VmRSS before / peak (MiB) (target peak < 300 MB)`, '—', `${int(fl.rssBefore)} / ${int(fl.rssPeak!)}`, '—']);
    rows.push([`${server} VmHWM after the whole run (MiB)`, '—', int(fl.hwm!), '—']);
  }
  printTable(rows);
  console.log(`\n${int(fl.appends)} appends of ${int(FLOOD.bytes / 1024)} KB in ${f(fl.seconds, 1)} s${fl.rssBefore === undefined ? '; API memory not read (BENCH_URL: not spawned here)' : `; VmRSS sampled every ${RSS_SAMPLE_MS} ms`}`);
}

/** A flow's CPU per call, by process. */
function cpuPerCall(flow: Flow): string {
  const per = (x: number) => f(x / flow.latencies.length);
  return `${per(flow.cpu.clients)} / ${flow.cpu.server === undefined ? '—' : per(flow.cpu.server)} / ${per(flow.cpu.postgres)}`;
}

function reportThroughput(kind: Kind, tp: Throughput): void {
  const { clients, slices, sliceSeconds } = THROUGHPUT;
  const rate = (x: Flow) => x.events / x.seconds;
  const rows: string[][] = [[`${clients} sessions appending concurrently, ${slices} x ${sliceSeconds} s per side`, ...columns(kind)]];
  const add = (label: string, k: FlowCase) => {
    const { raw, service } = tp[k];
    const [r, s] = [sampleStats(raw.latencies), sampleStats(service.latencies)];
    rows.push(
      [`${label}: events/s${k === 'turn' ? ' (target >= 5,000 events/s)' : ''}`, int(rate(raw)), int(rate(service)), ratio(rate(service), rate(raw))],
      [`${label}: p50 / p99 per call (ms)`, `${ms(r.p50)} / ${ms(r.p99)}`, `${ms(s.p50)} / ${ms(s.p99)}`, `${ratio(s.p50, r.p50)} / ${ratio(s.p99, r.p99)}`],
      [`${label}: CPU per call (ms): clients / ${kind} / PostgreSQL`, cpuPerCall(raw), cpuPerCall(service), '—'],
    );
  };
  add('turns, INSERT per message / POST per message', 'message');
  add('turns, one INSERT per turn / one POST per turn (5 events)', 'turn');
  add('single small events, one INSERT / one POST each', 'small');
  printTable(rows);
  const calls = (k: FlowCase) => `${int(tp[k].raw.latencies.length)} / ${int(tp[k].service.latencies.length)}`;
  console.log(`\ncalls raw / ${kind}: per message ${calls('message')}, per turn ${calls('turn')}, small ${calls('small')}`);
  const cores = (k: FlowCase, side: 'raw' | 'service') => {
    const { cpu, seconds } = tp[k][side];
    return f((cpu.clients + (cpu.server ?? 0) + cpu.postgres) / 1000 / seconds, 1);
  };
  console.log(
    `cores busy (CPU of the three over wall time; this machine has ${os.cpus().length}), raw / ${kind}: ` +
      `per message ${cores('message', 'raw')} / ${cores('message', 'service')}, per turn ${cores('turn', 'raw')} / ${cores('turn', 'service')}, small ${cores('small', 'raw')} / ${cores('small', 'service')}`,
  );
}

// ---------------------------------------------------------------- main

/** Per T, a side's repetitions; then its large results and throughput. */
interface SideResults {
  reps: Map<number, Rep[]>;
  large: Large;
  throughput: Throughput;
}

/** The targets the service is held to against the floor measured in the same run (docs/benchmarks.md). */
function reportTargets(floor: SideResults, service: SideResults): void {
  const m = (reps: Rep[], pick: (r: Rep) => number) => median(reps.map(pick));
  const rows: string[][] = [['the service against the floor, same run', 'floor', 'service', 'service / floor', 'target', 'met']];
  const check = (label: string, f0: number, s0: number, shown: (x: number) => string, target: string, met: boolean) =>
    rows.push([label, shown(f0), shown(s0), ratio(s0, f0), target, met ? 'yes' : 'NO']);
  for (const turns of TURNS) {
    const [fr, sr] = [floor.reps.get(turns)!, service.reps.get(turns)!];
    const both = (pick: (r: Rep) => number): [number, number] => [m(fr, pick), m(sr, pick)];
    const T = `T = ${int(turns)}`;
    const [fTurn, sTurn] = both((r) => r.perTurn.serviceTurn);
    check(`${T}: a turn in one POST (ms per turn)`, fTurn, sTurn, ms, '<= 2x', sTurn <= 2 * fTurn);
    const [fSmall, sSmall] = both((r) => r.small.service.p50);
    check(`${T}: a small event, p50 (ms)`, fSmall, sSmall, ms, '<= 1.5x', sSmall <= 1.5 * fSmall);
    const [fSmall99, sSmall99] = both((r) => r.small.service.p99);
    check(`${T}: a small event, p99 (ms)`, fSmall99, sSmall99, ms, '<= 10 ms', sSmall99 <= 10);
    const [fLast, sLast] = both((r) => r.last20.service);
    check(`${T}: the last 20 messages, p50 (ms)`, fLast, sLast, ms, '<= 1.3x', sLast <= 1.3 * fLast);
    const [fWhole, sWhole] = both((r) => r.history.service);
    check(`${T}: the whole history, p50 (ms)`, fWhole, sWhole, ms, '<= 1.2x', sWhole <= 1.2 * fWhole);
    const [fStored, sStored] = both((r) => r.stored.service);
    const most = turns >= 800 ? 0.7 : 1.0;
    check(`${T}: bytes stored / payload bytes`, fStored, sStored, (x) => f(x), `<= ${f(most, 1)}x payload`, sStored <= most);
  }
  const [fl, sl] = [floor.large, service.large];
  check('a 186 KB result alone, p50 (ms)', fl.single.service, sl.single.service, ms, '<= 1.5x', sl.single.service <= 1.5 * fl.single.service);
  check('64 clients x 100 KB results (MB/s)', fl.flood.mbPerSec, sl.flood.mbPerSec, (x) => f(x, 1), '>= 0.6x', sl.flood.mbPerSec >= 0.6 * fl.flood.mbPerSec);
  check('64 clients x 100 KB results, p99 (ms)', fl.flood.p99, sl.flood.p99, ms, '<= 1,000 ms', sl.flood.p99 <= 1000);
  if (sl.flood.rssPeak !== undefined) check('server VmRSS peak under the flood (MiB)', fl.flood.rssPeak!, sl.flood.rssPeak, (x) => int(x), '< 300 MB', sl.flood.rssPeak * MIB < 300e6);
  const [ft, st] = [floor.throughput.turn.service, service.throughput.turn.service];
  const rate = (x: Flow) => x.events / x.seconds;
  check('32 sessions, a turn per POST (events/s)', rate(ft), rate(st), (x) => int(x), '>= 0.5x', rate(st) >= 0.5 * rate(ft));
  const perTurn = (x: Flow, cpu: number | undefined) => (cpu ?? NaN) / x.latencies.length;
  const [fPg, sPg] = [perTurn(ft, ft.cpu.postgres), perTurn(st, st.cpu.postgres)];
  check('32 sessions: PostgreSQL CPU per turn (ms)', fPg, sPg, (x) => f(x), '<= 2x', sPg <= 2 * fPg);
  const [fApi, sApi] = [perTurn(ft, ft.cpu.server), perTurn(st, st.cpu.server)];
  check('32 sessions: server CPU per turn (ms)', fApi, sApi, (x) => f(x), '<= 3x', sApi <= 3 * fApi);
  printTable(rows);
  console.log(`
${rows.filter((r) => r[5] === 'yes').length} of ${rows.length - 1} targets met`);
}

async function largeAndThroughput(svc: Service, pg: Client, schema: string): Promise<Omit<SideResults, 'reps'>> {
  await refreshStatistics(svc);
  const large = await largeResults(svc, pg, schema);
  await refreshStatistics(svc);
  return { large, throughput: await throughput(svc, pg, schema) };
}

runBench(async () => {
  const sides: Array<{ svc: Service; pg: Client; schema: string }> = [];
  try {
    for (const kind of KINDS) {
      const svc = EXTERNAL ? await externalService(EXTERNAL) : await spawnService(kind);
      const schema = `bench_peers_raw_${randomBytes(3).toString('hex')}`;
      const pg = new Client({ connectionString: svc.dbUrl, application_name: 'bench-peers-raw' });
      sides.push({ svc, pg, schema });
      await pg.connect();
      await pg.query(`CREATE SCHEMA ${schema}`);
      svc.autovacuumOff = (await pg.query('SHOW autovacuum')).rows[0].autovacuum === 'off';
    }
    const { pg: first } = sides[0];
    const [{ server_version: pgVersion }] = (await first.query('SHOW server_version')).rows;
    const [{ synchronous_commit: syncCommit }] = (await first.query('SHOW synchronous_commit')).rows;
    const load = () => os.loadavg().map((x) => f(x)).join(' ');
    const described = (svc: Service) =>
      EXTERNAL ?? (svc.kind === 'floor' ? `the floor (bench/floor-server, pid ${svc.api!.pid})` : `the API (pid ${svc.api!.pid}, tenant limits off)`);
    console.log(
      `bench/peers: ${sides.map(({ svc }) => described(svc)).join(' and ')}, spawned here; node ${process.version}, ${os.cpus().length} cpus, ` +
        `PostgreSQL ${pgVersion} (synchronous_commit=${syncCommit}, autovacuum ${sides[0].svc.autovacuumOff ? 'off: ANALYZE before each phase in its place' : 'on'}); ` +
        `T = ${TURNS.join(', ')}, ${REPS} repetitions${sides.length > 1 ? ', the sides alternating' : ''}`,
    );
    console.log(`load average before: ${load()} (other processes on these cores skew every figure)`);

    // Warm-up: every path once, on a short session, not recorded.
    for (const { svc, pg, schema } of sides) await repetition(svc, pg, schema, SLICES, 99, `${svc.kind} warm-up`);
    const reps = sides.map(() => new Map<number, Rep[]>());
    for (const turns of TURNS) {
      for (let rep = 0; rep < REPS; rep++) {
        // Alternating which side goes first: background load hits both alike.
        for (let k = 0; k < sides.length; k++) {
          const i = (rep + k) % sides.length;
          const { svc, pg, schema } = sides[i];
          const done = await repetition(svc, pg, schema, turns, rep, `${svc.kind} T=${turns} rep ${rep + 1}/${REPS}`);
          reps[i].set(turns, [...(reps[i].get(turns) ?? []), done]);
        }
      }
    }
    const results: SideResults[] = [];
    for (const [i, { svc, pg, schema }] of sides.entries()) results.push({ reps: reps[i], ...(await largeAndThroughput(svc, pg, schema)) });
    for (const [i, { svc }] of sides.entries()) {
      console.log(`\n=== ${described(svc)}`);
      for (const turns of TURNS) {
        console.log('');
        reportT(svc.kind, turns, results[i].reps.get(turns)!);
      }
      console.log('');
      reportLarge(svc.kind, results[i].large);
      console.log('');
      reportThroughput(svc.kind, results[i].throughput);
    }
    if (sides.length === 2) {
      console.log('');
      reportTargets(results[0], results[1]);
    }
    console.log('');
    console.log('context of a 200-message window after compaction at 1,000 / 10,000 / 100,000 events: see npm run bench:context');
    console.log("a 100 MB tool-output upload's RSS growth: see npm run bench:tool-output");
    console.log(`load average after: ${load()}`);
  } finally {
    for (const { svc, pg, schema } of sides) {
      await pg.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await pg.end().catch(() => undefined);
      await svc.close();
    }
  }
});
