/**
 * Prune job benchmark: a script, not a test.
 *
 * Sessions of 1,000 tool results: 100 user turns, each with 10 tool uses
 * (assistant call, tool result of ~2,000 chars, ~500 tokens) and an answer;
 * 2,201 events, created and filled through the API (tool-output cache on,
 * as by default). Measured, against a running API (BENCH_URL):
 *   1. `POST /v1/sessions/{id}/prune {wait: true}` on fresh sessions: the
 *      whole job in the API process (window read, view, selection, lock,
 *      fresh re-read and re-selection, append), for OpenCode's prune
 *      (preset opencode: ~920 results pruned) and seed 001's archive (preset
 *      spec-001, no LLM, so the heuristic digest: 990 pairs archived);
 *   2. the same request again on each session: the run that finds nothing,
 *      which is what the automatic job after most steps costs;
 *   3. in this process, the pure selection on one session's window (read
 *      once through the store adapter): selectPrune in OpenCode and
 *      Anthropic mode, selectArchive, heuristicDigest of its 990 pairs, and
 *      composeSessionView (the token figure Anthropic's input_tokens
 *      trigger needs) before and after pruning; and the window's SQL read.
 *
 * Bounded: fixed counts, warm-up first; the run deletes its scratch tenant
 * (cascading to its sessions and events).
 *
 *   npm run build && npm run bench:prune
 *   BENCH_URL=http://127.0.0.1:3500 DATABASE_URL=postgres://postgres@127.0.0.1:5432/session_store node dist/bench/prune.js
 */
import os from 'node:os';
import { Client } from 'pg';
import { Database } from '@app/database';
import { composeSessionView, heuristicDigest, PRESETS, selectArchive, selectPrune, StoredEvent } from '@app/domain';
import { readWindow } from '@app/event-store';
import {
  BASE_URL,
  benchClient,
  createScratchTenant,
  deleteScratchTenant,
  expectStatus,
  IDLE_SOCKET_TIMEOUT_MS,
  nowMs,
  OWNER_URL,
  requireLoopback,
  runBench,
  sampleStats,
} from './support';

const MODEL = 'gpt-4.1';
const TURNS = 100;
const USES_PER_TURN = 10;
const SESSIONS = { warmup: 2, measured: 10 };
const PURE_RUNS = { warmup: 20, measured: 200 };
const SQL_RUNS = { warmup: 5, measured: 50 };

requireLoopback('BENCH_URL', BASE_URL);

const client = benchClient(BASE_URL, { timeout: IDLE_SOCKET_TIMEOUT_MS });
const { call } = client;

/** A test run's log lines: distinct per use, so the cache stores 1,000 contents, not one. */
function toolOutput(turn: number, use: number): string {
  const lines = Array.from({ length: 25 }, (_, i) => `  at step${i} (src/module${turn}/file${use}.ts:${i + 1}:${(i * 7) % 80}) value=${(turn * 7919 + use * 104729 + i) % 100003}`);
  return [`FAIL src/module${turn}/file${use}.spec.ts`, ...lines].join('\n');
}

function turnEvents(turn: number): unknown[] {
  const message = (role: string, parts: unknown[]) => ({ type: 'message.added', data: { message: { role, parts } } });
  const events: unknown[] = [message('user', [{ type: 'text', text: `Turn ${turn}: fix the failing tests in src/module${turn}` }])];
  for (let use = 0; use < USES_PER_TURN; use++) {
    const callId = `t${turn}-u${use}`;
    events.push(message('assistant', [{ type: 'tool_call', callId, name: 'bash', input: { command: `npm test -- src/module${turn}/file${use}.spec.ts` } }]));
    events.push(message('tool', [{ type: 'tool_result', callId, name: 'bash', output: toolOutput(turn, use), isError: true }]));
  }
  events.push(message('assistant', [{ type: 'text', text: `Fixed src/module${turn}.` }]));
  return events;
}

/** 1,000 tool results in appends of 10 turns (211 events each). */
async function fillSession(key: string, config: Record<string, unknown>): Promise<string> {
  const created = expectStatus(await call('POST', '/v1/sessions', key, { model: MODEL, system: 'You are a careful coding agent.', config }), 201, 'create session');
  for (let turn = 1; turn <= TURNS; turn += 10) {
    const events = Array.from({ length: 10 }, (_, i) => turnEvents(turn + i)).flat();
    expectStatus(await call('POST', `/v1/sessions/${created.id}/events`, key, { events }), 201, 'append');
  }
  return created.id;
}

const f = (x: number, digits = 2) => x.toFixed(digits);

async function pruneRuns(key: string, name: string, config: Record<string, unknown>, check: (report: any) => string) {
  const ids: string[] = [];
  for (let i = 0; i < SESSIONS.warmup + SESSIONS.measured; i++) ids.push(await fillSession(key, config));
  const first: number[] = [];
  const second: number[] = [];
  let detail = '';
  for (const [i, id] of ids.entries()) {
    const t0 = nowMs();
    const report = expectStatus(await call('POST', `/v1/sessions/${id}/prune`, key, { wait: true }), 200, `${name}: prune`);
    const t1 = nowMs();
    const again = expectStatus(await call('POST', `/v1/sessions/${id}/prune`, key, { wait: true }), 200, `${name}: prune again`);
    const t2 = nowMs();
    detail = check(report);
    if (again.headSeq !== report.headSeq) throw new Error(`${name}: the second run appended something`);
    if (i < SESSIONS.warmup) continue;
    first.push(t1 - t0);
    second.push(t2 - t1);
  }
  return { name, first: sampleStats(first), second: sampleStats(second), detail };
}

async function timed(name: string, run: () => unknown, runs = PURE_RUNS) {
  for (let i = 0; i < runs.warmup; i++) await run();
  const samples: number[] = [];
  for (let i = 0; i < runs.measured; i++) {
    const t0 = nowMs();
    await run();
    samples.push(nowMs() - t0);
  }
  return { name, ...sampleStats(samples) };
}

async function main(): Promise<void> {
  const owner = new Client({ connectionString: OWNER_URL, application_name: 'bench-prune' });
  await owner.connect();
  const [{ server_version: pgVersion }] = (await owner.query('SHOW server_version')).rows;
  const { tenantId, key } = await createScratchTenant(client, 'bench-prune');
  const db = new Database(OWNER_URL, 2, 'bench-prune-pure');
  try {
    console.log(`bench/prune: ${BASE_URL.origin}, node ${process.version}, ${os.cpus().length} cpus, PostgreSQL ${pgVersion}`);
    console.log(`sessions: ${TURNS} turns x ${USES_PER_TURN} tool uses = ${TURNS * USES_PER_TURN} tool results; load average ${os.loadavg().map((x) => f(x)).join(' ')}`);

    const cases = [
      await pruneRuns(key, 'prune (opencode)', { preset: 'opencode' }, (r) => {
        if (r.prune.status !== 'pruned') throw new Error(`opencode: ${JSON.stringify(r.prune)}`);
        return `${r.prune.callIds.length} results pruned, ${r.prune.tokensFreed} tokens freed`;
      }),
      await pruneRuns(key, 'archive (spec-001, heuristic digest)', { preset: 'spec-001' }, (r) => {
        if (r.archive.status !== 'archived') throw new Error(`spec-001: ${JSON.stringify(r.archive)}`);
        return `${r.archive.callIds.length} pairs archived, digest ${r.archive.digestTokens} tokens (${r.archive.digestBy}, ${r.archive.fallback})`;
      }),
    ];
    console.log('\nPOST /v1/sessions/{id}/prune {wait: true}, sequential, ms');
    console.log('| case | runs | first run p50 | first run max | second run (nothing to do) p50 | second run max | what the first run did |');
    for (const c of cases) {
      console.log(`| ${c.name} | ${c.first.n} | ${f(c.first.p50)} | ${f(c.first.max)} | ${f(c.second.p50)} | ${f(c.second.max)} | ${c.detail} |`);
    }

    // One unpruned session's window, read once as the job reads it.
    const id = await fillSession(key, { preset: 'opencode' });
    const read = (await db.tenantTx(tenantId, (tx) => readWindow(tx, id)))!;
    // Before the timings: an idle keep-alive connection may be closed under the next request.
    expectStatus(await call('POST', `/v1/sessions/${id}/prune`, key, { wait: true }), 200, 'prune the measured session');
    const pruned = (await db.tenantTx(tenantId, (tx) => readWindow(tx, id)))!;
    const events: readonly StoredEvent[] = read.events;
    const opencode = PRESETS.opencode.prune;
    const anthropic = { ...opencode, mode: 'anthropic' as const, trigger: { type: 'tool_uses' as const, value: 10 } };
    const archive = { ...PRESETS['spec-001'].archive, strategy: 'heuristic' as const };
    const archived = selectArchive(events, archive)!;
    const rows = [
      await timed('readWindow (SQL through the store adapter)', () => db.tenantTx(tenantId, (tx) => readWindow(tx, id)), SQL_RUNS),
      await timed('selectPrune, OpenCode mode', () => selectPrune(events, opencode)),
      await timed('selectPrune, Anthropic mode (keep 3)', () => selectPrune(events, anthropic)),
      await timed('selectArchive (cutoff 10)', () => selectArchive(events, archive)),
      await timed('heuristicDigest of 990 pairs', () => heuristicDigest(archived.pairs, archive)),
      await timed('composeSessionView, before pruning', () => composeSessionView(read.session, read)),
    ];
    rows.push(await timed('composeSessionView, after pruning', () => composeSessionView(pruned.session, pruned)));
    console.log(`\nin process, on one window of ${events.length} events (${read.events.filter((e) => e.type === 'message.added').length} messages), ms`);
    console.log('| step | runs | p50 | max |');
    for (const r of rows) console.log(`| ${r.name} | ${r.n} | ${f(r.p50, 3)} | ${f(r.max, 3)} |`);
    console.log(`\nload average after: ${os.loadavg().map((x) => f(x)).join(' ')}`);
  } finally {
    await deleteScratchTenant(owner, tenantId);
    await owner.end();
    await db.close();
    client.agent.destroy();
  }
}

runBench(main);
