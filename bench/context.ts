/**
 * Context read benchmark: a script, not a test.
 *
 * Three sessions of 1k, 10k and 100k events whose latest pivot
 * (compaction.completed, coveredThroughSeq = pivot - 1) leaves the same
 * 200-message window: a summary prefix plus 50 agent turns of user message,
 * assistant call, tool result (~1.5 KB) and assistant answer. The history
 * before the pivot is the same mix plus step.finished events and an older
 * pivot every 1,000 events. Sessions are created through the API; their
 * events are written straight into session_events as the owner (100k events
 * through HTTP would take minutes), with the session row's head_seq,
 * pivot_seq and covered_through_seq set as the service's append would.
 *
 * Measured, against a running API (BENCH_URL):
 *   1. GET /v1/sessions/{id}/context?format=openai, sequential, p50/p99 per
 *      size (rounds interleave the sizes, so background load hits all alike),
 *      and the ratio 100k/1k;
 *   2. in the same run, the baseline: a raw SQL read of the whole session
 *      (SELECT every event ORDER BY seq, through pg, as the owner) at each size;
 *   3. where the time of one read goes, in this process with the service's
 *      own code: the SQL of readWindow, composeSessionView (fold, normalize,
 *      trim, tokens), renderContext, JSON.stringify.
 *
 * Bounded: fixed counts, warm-up first, the run deletes its scratch tenant
 * (cascading to its sessions and events).
 *
 *   npm run build && npm run bench:context
 *   BENCH_URL=http://127.0.0.1:3400 DATABASE_URL=postgres://postgres@127.0.0.1:5432/session_store node dist/bench/context.js
 *   (add DATABASE_DISTRIBUTION=citus against a Citus coordinator, as for the API)
 */
import os from 'node:os';
import { Client } from 'pg';
import { Database } from '@app/database';
import { canonicalHash, composeSessionView, estimateMessageTokens, Message, renderContext } from '@app/domain';
import { readWindow } from '@app/event-store';
import {
  BASE_URL,
  benchClient,
  createScratchTenant,
  deleteScratchTenant,
  expectStatus,
  int,
  nowMs,
  OWNER_URL,
  printTable,
  requireLoopback,
  runBench,
  sampleStats,
} from './support';

const MODEL = 'gpt-4.1';
const SYSTEM = 'You are a careful coding agent. Use the tools to inspect the repository before you change it.';
const SIZES = [1_000, 10_000, 100_000] as const;
const WINDOW = 200; // messages after the latest pivot
const ROUNDS = { warmup: 50, measured: 300 }; // HTTP reads per size
const RAW = { warmup: 2, measured: { 1_000: 50, 10_000: 50, 100_000: 10 } as Record<number, number> };
const SLICES = 5;
const BREAKDOWN_ROUNDS = 200;
const INSERT_BATCH = 2_000;

requireLoopback('BENCH_URL', BASE_URL);

const client = benchClient(BASE_URL, { maxSockets: 4 });
const { call } = client;

// ---------------------------------------------------------------- the session log

type Row = { type: string; data: unknown; tokens: number };

const USER_TEXT = 'Please look at the failing test in src/orders/checkout.spec.ts and find out why the total is off by one cent; ';
const ASSISTANT_CALL_TEXT = 'I will search the checkout module for the rounding code first, then read the test to compare the expected totals. ';
const ASSISTANT_ANSWER_TEXT =
  'The total is computed from line items rounded one by one, while the test expects the sum to be rounded once at the end. ' +
  'Rounding each line loses a cent when three items of 0.335 are summed. I suggest computing the raw sum and rounding once. ';
const OUTPUT_LINE = (turn: number, n: number) => `src/orders/checkout.ts:${100 + n}:  const line${n} = round(item${n}.price * item${n}.qty, 2); // turn ${turn}`;
const TOOL_OUTPUT = (turn: number) => Array.from({ length: 18 }, (_, n) => OUTPUT_LINE(turn, n)).join('\n');

/** Message `pos` (0..3) of agent turn `turn`: user ask, assistant call, tool result, assistant answer. */
function turnMessage(turn: number, pos: number): Message {
  const callId = `call_${turn}`;
  switch (pos) {
    case 0:
      return { id: `u${turn}`, role: 'user', parts: [{ type: 'text', text: `${USER_TEXT}(turn ${turn})` }] };
    case 1:
      return {
        id: `a${turn}`,
        role: 'assistant',
        parts: [
          { type: 'text', text: ASSISTANT_CALL_TEXT },
          { type: 'tool_call', callId, name: 'bash', input: { cmd: `grep -rn "round(" src/orders --include=*.ts # ${turn}` } },
        ],
      };
    case 2:
      return { id: `t${turn}`, role: 'tool', parts: [{ type: 'tool_result', callId, name: 'bash', output: TOOL_OUTPUT(turn) }] };
    default:
      return { id: `r${turn}`, role: 'assistant', parts: [{ type: 'text', text: `${ASSISTANT_ANSWER_TEXT}(turn ${turn})` }] };
  }
}

/** Estimates per position, computed once (the turns differ only in numbers), as the service stores them at append. */
const TOKENS = [0, 1, 2, 3].map((pos) => estimateMessageTokens(turnMessage(0, pos), MODEL));

const summaryPrefix = (seq: number): Message[] => [
  {
    id: `summary-${seq}`,
    role: 'user',
    parts: [{ type: 'text', text: `<summary>\nWe investigated the checkout rounding bug through seq ${seq}; totals are rounded per line.\n</summary>` }],
  },
];

function pivotData(seq: number, coveredThroughSeq: number) {
  return {
    markerSeq: coveredThroughSeq,
    coveredThroughSeq,
    summary: `We investigated the checkout rounding bug through seq ${coveredThroughSeq}.`,
    prefix: summaryPrefix(coveredThroughSeq),
    strategy: 'retain-summary',
    model: MODEL,
    tokensBefore: 180_000,
    tokensAfter: 9_000,
    messagesCompacted: seq - 2,
    durationMs: 4_200,
  };
}

/**
 * The rows of seqs 2..n: history (turns of 4 messages + step.finished, an
 * older pivot every 1,000 seqs), then the latest pivot at n - WINDOW covering
 * through n - WINDOW - 1, then WINDOW messages (50 whole turns).
 */
function* sessionRows(n: number): Generator<Row> {
  const pivotSeq = n - WINDOW;
  let turn = 0;
  let pos = 0;
  for (let seq = 2; seq < pivotSeq; seq++) {
    if (seq % 1_000 === 0 && seq > 500) {
      yield { type: 'compaction.completed', data: pivotData(seq, seq - 400), tokens: 0 };
    } else if (pos === 4) {
      yield { type: 'step.finished', data: { usage: { input_tokens: 40_000, output_tokens: 300, cache_read_tokens: 35_000 }, finishReason: 'stop' }, tokens: 0 };
      pos = 0;
      turn++;
    } else {
      yield { type: 'message.added', data: { message: turnMessage(turn, pos) }, tokens: TOKENS[pos] };
      pos++;
    }
  }
  yield { type: 'compaction.completed', data: pivotData(pivotSeq, pivotSeq - 1), tokens: 0 };
  for (let i = 0; i < WINDOW; i++) {
    const windowTurn = 1_000_000 + Math.floor(i / 4);
    yield { type: 'message.added', data: { message: turnMessage(windowTurn, i % 4) }, tokens: TOKENS[i % 4] };
  }
}

const INSERT_MANY = `INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, tokens, payload_hash)
  SELECT $1, $2, $3::bigint + ord, 'bench-' || ($3::bigint + ord), type, data, tokens, hash
    FROM unnest($4::text[], $5::jsonb[], $6::int[], $7::bytea[]) WITH ORDINALITY AS t(type, data, tokens, hash, ord)`;

/** Writes seqs 2..n of a session created through the API, then moves its head and pivot as the service's append would. */
async function fillSession(owner: Client, tenantId: string, sessionId: string, n: number): Promise<void> {
  await owner.query('BEGIN');
  try {
    await owner.query(`SELECT set_config('app.tenant_id', $1, true)`, [tenantId]);
    let head = 1;
    let batch: Row[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const data = batch.map((r) => JSON.stringify(r.data));
      await owner.query(INSERT_MANY, [
        tenantId,
        sessionId,
        head,
        batch.map((r) => r.type),
        data,
        batch.map((r) => r.tokens),
        // As the service hashes a payload (payloadHash).
        batch.map((r) => canonicalHash(r.type, r.data)),
      ]);
      head += batch.length;
      batch = [];
    };
    for (const row of sessionRows(n)) {
      batch.push(row);
      if (batch.length === INSERT_BATCH) await flush();
    }
    await flush();
    if (head !== n) throw new Error(`session ${sessionId}: wrote up to seq ${head}, expected ${n}`);
    await owner.query(
      `UPDATE sessions SET head_seq = $3, pivot_seq = $4, covered_through_seq = $5, updated_at = statement_timestamp()
        WHERE tenant_id = $1 AND session_id = $2`,
      [tenantId, sessionId, n, n - WINDOW, n - WINDOW - 1],
    );
    await owner.query('COMMIT');
  } catch (error) {
    await owner.query('ROLLBACK');
    throw error;
  }
}

// ---------------------------------------------------------------- measurements

const f = (x: number, digits = 2) => x.toFixed(digits);

interface BenchSession {
  size: number;
  id: string;
}

async function main(): Promise<void> {
  const owner = new Client({ connectionString: OWNER_URL, application_name: 'bench-context' });
  await owner.connect();
  const [{ server_version: pgVersion }] = (await owner.query('SHOW server_version')).rows;
  const [{ shared_buffers: sharedBuffers }] = (await owner.query('SHOW shared_buffers')).rows;

  const { tenantId, key } = await createScratchTenant(client, 'bench-context');
  const db = new Database(OWNER_URL, 2, 'bench-context-breakdown', process.env.DATABASE_DISTRIBUTION === 'citus');

  try {
    const load = () => os.loadavg().map((x) => f(x)).join(' ');
    console.log(`bench/context: ${BASE_URL.origin}, node ${process.version}, ${os.cpus().length} cpus, PostgreSQL ${pgVersion} (shared_buffers=${sharedBuffers})`);

    // ------------------------------------------------------------ setup
    const sessions: BenchSession[] = [];
    for (const size of SIZES) {
      const t0 = nowMs();
      const created = expectStatus(await call('POST', '/v1/sessions', key, { model: MODEL, system: SYSTEM }), 201, 'create session');
      await fillSession(owner, tenantId, created.id, size);
      sessions.push({ size, id: created.id });
      console.log(`session of ${int(size)} events written in ${f((nowMs() - t0) / 1000, 1)} s`);
    }
    await owner.query('VACUUM ANALYZE session_events');
    await owner.query('ANALYZE sessions');

    // Same window everywhere: the rendered context has the same messages, bar the ids and seqs.
    const shapes = new Set<string>();
    for (const s of sessions) {
      const ctx = expectStatus(await call('GET', `/v1/sessions/${s.id}/context?format=openai`, key), 200, `context of ${s.size}`);
      if (ctx.headSeq !== s.size || ctx.pivotSeq !== s.size - WINDOW) {
        throw new Error(`session of ${s.size}: headSeq ${ctx.headSeq}, pivotSeq ${ctx.pivotSeq}; the fill did not take`);
      }
      // system prompt + summary + 200 window messages (50 turns: user, assistant call, tool, assistant answer)
      if (ctx.messages.length !== WINDOW + 2) throw new Error(`session of ${s.size}: ${ctx.messages.length} messages, expected ${WINDOW + 2}`);
      shapes.add(JSON.stringify(ctx.messages.map((m: { role: string }) => m.role)));
      (s as BenchSession & { bytes?: number }).bytes = Buffer.byteLength(JSON.stringify(ctx));
    }
    if (shapes.size !== 1) throw new Error('the sessions do not render the same window');
    const responseBytes = (sessions[0] as BenchSession & { bytes?: number }).bytes!;
    console.log(`window: ${WINDOW} messages + summary + system; context response ${int(responseBytes)} bytes (format=openai)`);
    console.log(`load average before: ${load()} (other processes on these cores skew every figure)`);

    // ------------------------------------------------------------ measured
    const ours = new Map<number, number[]>(SIZES.map((s) => [s, []]));
    const raw = new Map<number, number[]>(SIZES.map((s) => [s, []]));
    const rawRowCounts = new Map<number, number>();

    const readContext = async (s: BenchSession, samples?: number[]) => {
      const t0 = nowMs();
      const res = await call('GET', `/v1/sessions/${s.id}/context?format=openai`, key);
      const ms = nowMs() - t0;
      if (res.status !== 200) throw new Error(`context of ${s.size}: HTTP ${res.status}`);
      samples?.push(ms);
    };
    const readAllRaw = async (s: BenchSession, samples?: number[]) => {
      const t0 = nowMs();
      const result = await owner.query(
        `SELECT seq, event_id, type, data, tokens, created_at FROM session_events
          WHERE tenant_id = $1 AND session_id = $2 ORDER BY seq`,
        [tenantId, s.id],
      );
      const ms = nowMs() - t0;
      rawRowCounts.set(s.size, result.rowCount ?? 0);
      samples?.push(ms);
    };
    /** One round reads every size once, in a rotating order. */
    const httpRounds = async (rounds: number, measure: boolean, offset: number) => {
      for (let r = 0; r < rounds; r++) {
        for (let k = 0; k < sessions.length; k++) {
          const s = sessions[(r + offset + k) % sessions.length];
          await readContext(s, measure ? ours.get(s.size) : undefined);
        }
      }
    };

    console.log('warm-up ...');
    await httpRounds(ROUNDS.warmup, false, 0);
    for (const s of sessions) for (let i = 0; i < RAW.warmup; i++) await readAllRaw(s);
    console.log(`measuring: ${ROUNDS.measured} context reads per size, raw read-all ${SIZES.map((s) => RAW.measured[s]).join('/')} per size, in ${SLICES} alternating slices ...`);
    for (let slice = 0; slice < SLICES; slice++) {
      await httpRounds(ROUNDS.measured / SLICES, true, slice);
      for (const s of sessions) for (let i = 0; i < RAW.measured[s.size] / SLICES; i++) await readAllRaw(s, raw.get(s.size));
    }

    // ------------------------------------------------------------ breakdown (in process, the service's code)
    type Phases = { sql: number[]; compose: number[]; render: number[]; json: number[] };
    const acc = new Map<number, Phases>(SIZES.map((s) => [s, { sql: [], compose: [], render: [], json: [] }]));
    const timeOneRead = async (s: BenchSession, into?: Phases) => {
      const t0 = nowMs();
      const read = await db.tenantTx(tenantId, (tx) => readWindow(tx, s.id));
      const t1 = nowMs();
      const composed = composeSessionView(read!.session, read!);
      const t2 = nowMs();
      const rendered = renderContext(composed.view, 'openai');
      const t3 = nowMs();
      JSON.stringify(rendered);
      const t4 = nowMs();
      into?.sql.push(t1 - t0);
      into?.compose.push(t2 - t1);
      into?.render.push(t3 - t2);
      into?.json.push(t4 - t3);
    };
    for (let r = 0; r < BREAKDOWN_ROUNDS; r++) {
      for (let k = 0; k < sessions.length; k++) {
        const s = sessions[(r + k) % sessions.length];
        await timeOneRead(s, r < 20 ? undefined : acc.get(s.size));
      }
    }
    const phases = new Map(
      SIZES.map((s) => {
        const a = acc.get(s)!;
        return [s, { sql: sampleStats(a.sql), compose: sampleStats(a.compose), render: sampleStats(a.render), json: sampleStats(a.json) }];
      }),
    );

    // ------------------------------------------------------------ report
    const stats = new Map(SIZES.map((s) => [s, { ours: sampleStats(ours.get(s)!), raw: sampleStats(raw.get(s)!) }]));
    const rows: string[][] = [
      ['events', 'window', 'context p50 (ms)', 'context p99 (ms)', 'raw read-all p50 (ms)', 'raw read-all p99 (ms)', 'raw p50 / context p50'],
      ...SIZES.map((size) => {
        const { ours: o, raw: r } = stats.get(size)!;
        return [int(size), `${WINDOW} msgs`, f(o.p50), f(o.p99), f(r.p50), f(r.p99), `${f(r.p50 / o.p50, 1)}x`];
      }),
    ];
    console.log('');
    printTable(rows);
    console.log('');
    console.log('where one read goes (in process, p50 ms): readWindow SQL / compose (fold, normalize, trim, tokens) / render openai / JSON.stringify');
    for (const size of SIZES) {
      const p = phases.get(size)!;
      console.log(`  ${int(size).padStart(7)} events: ${f(p.sql.p50)} / ${f(p.compose.p50)} / ${f(p.render.p50)} / ${f(p.json.p50)}`);
    }
    const small = stats.get(1_000)!.ours;
    const large = stats.get(100_000)!.ours;
    const mid = stats.get(10_000)!;
    const ratio = large.p50 / small.p50;
    const speedup10k = mid.raw.p50 / mid.ours.p50;
    console.log('');
    console.log(`raw read-all rows: ${SIZES.map((s) => int(rawRowCounts.get(s) ?? 0)).join(' / ')}`);
    console.log(`ratio 100k/1k: p50 ${f(ratio)}, p99 ${f(large.p99 / small.p99)}`);
    console.log(`load average after: ${load()}`);
    console.log(`target ratio 100k/1k <= 1.2 (p50): ${ratio <= 1.2 ? 'met' : 'MISSED'} (${f(ratio)})`);
    console.log(`target context >= 5x faster than raw read-all at 10k (p50): ${speedup10k >= 5 ? 'met' : 'MISSED'} (${f(speedup10k, 1)}x)`);
    const worstP50 = Math.max(...SIZES.map((s) => stats.get(s)!.ours.p50));
    console.log(`target p50 <= 10 ms for the ${WINDOW}-message window: ${worstP50 <= 10 ? 'met' : 'MISSED'} (worst size ${f(worstP50)} ms)`);
  } finally {
    await db.close().catch(() => undefined);
    await deleteScratchTenant(owner, tenantId);
    await owner.end();
    client.agent.destroy();
  }
}

runBench(main);
