/**
 * Compaction benchmark: a script, not a test.
 *
 * Against a running API and worker (BENCH_URL), with the built-in heuristic
 * summarizer (the default: no network):
 *   1. marker → committed pivot, one compaction at a time, for sessions whose
 *      window holds ~10k and ~100k tokens (agent turns: user ask, assistant
 *      call, a ~2k-token tool result, answer). Each sample is a fresh
 *      session: `POST .../compactions {wait: true}` appends a manual marker,
 *      the worker compacts it, the request answers once the pivot is
 *      committed. Reported: the database's own timestamps (the marker's
 *      transaction start to the pivot's), and the client's round trip;
 *   2. 50 sessions of ~10k tokens compacting at once (50 concurrent POSTs):
 *      jobs per second from the first marker to the last pivot.
 * Sessions are built through the API with automatic compaction off, so
 * only the measured markers compact them.
 *
 * Bounded: fixed counts, warm-up first; the run deletes its scratch tenant
 * (cascading to its sessions and events).
 *
 *   npm run build && npm run bench:compaction
 *   BENCH_URL=http://127.0.0.1:3500 DATABASE_URL=postgres://postgres@127.0.0.1:5432/session_store node dist/bench/compaction.js
 */
import os from 'node:os';
import { Client } from 'pg';
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
const SIZES = [
  { tokens: 10_000, warmup: 2, measured: 20 },
  { tokens: 100_000, warmup: 2, measured: 10 },
] as const;
const CONCURRENT = { sessions: 50, tokens: 10_000 };
const TURNS_PER_APPEND = 1;
const TARGET_P50_MS_100K = 300;

requireLoopback('BENCH_URL', BASE_URL);

const client = benchClient(BASE_URL, { maxSockets: CONCURRENT.sessions + 4 });
const { call } = client;

// ---------------------------------------------------------------- sessions

/** One agent turn: ~2.1k tokens, most of it a failing test's output. */
function turn(session: string, n: number) {
  const callId = `c${n}`;
  const output = [
    `FAIL src/module${n}.spec.ts`,
    `Error: expected ${n} to equal ${n + 1}`,
    ...Array.from({ length: 110 }, (_, line) => `  at check${line} (src/module${n}.ts:${line + 1}:${(line * 7) % 80}) value=${(line * 7919 + n) % 100003}`),
  ].join('\n');
  return [
    { type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: `Fix the failing test in src/module${n}.ts (${session}); keep Node 20.` }] } } },
    {
      type: 'message.added',
      data: {
        message: {
          role: 'assistant',
          parts: [
            { type: 'text', text: `Running the tests for src/module${n}.ts.` },
            { type: 'tool_call', callId, name: 'bash', input: { command: `npm test -- src/module${n}.spec.ts` } },
          ],
        },
      },
    },
    { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name: 'bash', output, isError: true }] } } },
    { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text: `Fixed src/module${n}.ts; decided to keep the public API unchanged.` }] } } },
  ];
}

interface Session {
  id: string;
  tokens: number;
}

/** A session whose window holds at least `tokens` (the context's own estimate). */
async function buildSession(key: string, name: string, tokens: number): Promise<Session> {
  const created = expectStatus(
    // No view-time trim, so the window's token figure counts every tool output the compaction reads.
    await call('POST', '/v1/sessions', key, { id: name, model: MODEL, system: SYSTEM, config: { compaction: { auto: false }, toolOutput: { viewTrim: false } } }),
    201,
    'create session',
  );
  let estimated = 0;
  for (let n = 1; estimated < tokens; n += TURNS_PER_APPEND) {
    const events = Array.from({ length: TURNS_PER_APPEND }, (_, i) => turn(name, n + i)).flat();
    expectStatus(await call('POST', `/v1/sessions/${created.id}/events`, key, { events }), 201, `append to ${name}`);
    estimated = expectStatus(await call('GET', `/v1/sessions/${created.id}/context`, key), 200, 'context').tokens.estimated;
  }
  return { id: created.id, tokens: estimated };
}

// ---------------------------------------------------------------- measurements

/** Compacts now and waits for the pivot; returns the client's round trip and the marker's seq. */
async function compact(key: string, session: Session): Promise<{ roundTripMs: number; markerSeq: number; body: any }> {
  const t0 = nowMs();
  const body = expectStatus(await call('POST', `/v1/sessions/${session.id}/compactions`, key, { wait: true, timeoutMs: 120_000 }), 200, 'compaction');
  if (body.status !== 'completed') throw new Error(`compaction of ${session.id}: ${JSON.stringify(body)}`);
  return { roundTripMs: nowMs() - t0, markerSeq: body.markerSeq, body };
}

/** Marker → pivot by the database's clock: both events' created_at (their transactions' start). */
async function dbLatencyMs(owner: Client, tenantId: string, session: Session, markerSeq: number): Promise<{ markerAt: number; pivotAt: number }> {
  const { rows } = await owner.query(
    `SELECT extract(epoch FROM m.created_at) * 1000 AS marker_at, extract(epoch FROM c.created_at) * 1000 AS pivot_at
       FROM session_events m JOIN session_events c
         ON c.tenant_id = m.tenant_id AND c.session_id = m.session_id AND c.event_id = 'cmp-' || m.seq || '-completed'
      WHERE m.tenant_id = $1 AND m.session_id = $2 AND m.seq = $3`,
    [tenantId, session.id, markerSeq],
  );
  return { markerAt: Number(rows[0].marker_at), pivotAt: Number(rows[0].pivot_at) };
}

const f = (x: number, digits = 1) => x.toFixed(digits);

async function main(): Promise<void> {
  const owner = new Client({ connectionString: OWNER_URL, application_name: 'bench-compaction' });
  await owner.connect();
  const [{ server_version: pgVersion }] = (await owner.query('SHOW server_version')).rows;
  const { tenantId, key } = await createScratchTenant(client, 'bench-compaction');
  const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
  try {
    console.log(`bench/compaction: ${BASE_URL.origin}, node ${process.version}, ${os.cpus().length} cpus, PostgreSQL ${pgVersion}`);
    console.log(`load average before: ${load()}`);
    const rows: string[][] = [['window', 'samples', 'marker → pivot p50 (ms)', 'p99 (ms)', 'max (ms)', 'POST wait round trip p50 (ms)', 'messages compacted', 'tokens before → after']];
    let p50At100k = Number.NaN;
    for (const size of SIZES) {
      console.log(`building ${size.warmup + size.measured} sessions of ~${int(size.tokens)} tokens ...`);
      const sessions: Session[] = [];
      for (let i = 0; i < size.warmup + size.measured; i++) sessions.push(await buildSession(key, `w${size.tokens}-${i}`, size.tokens));
      const db: number[] = [];
      const roundTrips: number[] = [];
      let example: any;
      for (const [i, session] of sessions.entries()) {
        const { roundTripMs, markerSeq, body } = await compact(key, session);
        if (i < size.warmup) continue;
        const { markerAt, pivotAt } = await dbLatencyMs(owner, tenantId, session, markerSeq);
        db.push(pivotAt - markerAt);
        roundTrips.push(roundTripMs);
        example = { ...body, windowTokens: session.tokens };
      }
      const d = sampleStats(db);
      const r = sampleStats(roundTrips);
      if (size.tokens === 100_000) p50At100k = d.p50;
      rows.push([
        `~${int(example.windowTokens)} tokens`,
        String(size.measured),
        f(d.p50),
        f(d.p99),
        f(d.max),
        f(r.p50),
        String(example.messagesCompacted),
        `${int(example.tokensBefore)} → ${int(example.tokensAfter)}`,
      ]);
    }

    console.log(`building ${CONCURRENT.sessions} sessions of ~${int(CONCURRENT.tokens)} tokens ...`);
    const batch: Session[] = [];
    for (let i = 0; i < CONCURRENT.sessions; i++) batch.push(await buildSession(key, `c-${i}`, CONCURRENT.tokens));
    const t0 = nowMs();
    const results = await Promise.all(batch.map((session) => compact(key, session)));
    const wallMs = nowMs() - t0;
    const spans: Array<{ markerAt: number; pivotAt: number }> = [];
    for (const [i, session] of batch.entries()) spans.push(await dbLatencyMs(owner, tenantId, session, results[i].markerSeq));
    const dbSpanMs = Math.max(...spans.map((s) => s.pivotAt)) - Math.min(...spans.map((s) => s.markerAt));
    const each = sampleStats(spans.map((s) => s.pivotAt - s.markerAt));

    console.log('');
    printTable(rows);
    console.log('');
    console.log(
      `${CONCURRENT.sessions} sessions compacting at once: ${f(CONCURRENT.sessions / (dbSpanMs / 1000))} jobs/s by the database clock ` +
        `(first marker → last pivot ${int(dbSpanMs)} ms), ${f(CONCURRENT.sessions / (wallMs / 1000))} jobs/s by the client's wall clock (${int(wallMs)} ms); ` +
        `per job marker → pivot p50 ${f(each.p50)} ms, max ${f(each.max)} ms`,
    );
    console.log(`load average after: ${load()}`);
    console.log(`target p50 <= ${TARGET_P50_MS_100K} ms at 100k tokens: ${p50At100k <= TARGET_P50_MS_100K ? 'met' : 'MISSED'} (${f(p50At100k)} ms)`);
  } finally {
    await deleteScratchTenant(owner, tenantId);
    await owner.end();
    client.agent.destroy();
  }
}

runBench(main);
