/**
 * Search latency (docs/benchmarks.md): a scratch tenant with --sessions
 * sessions of --events documents each, seeded straight into PostgreSQL
 * (sessions rows, search_documents with terms made by the service's own
 * tokenizer in multi-row batches, search_progress at the head; then VACUUM
 * ANALYZE), then one- and two-word queries (and a phrase, a metadata filter,
 * the commonest word) through `GET /v1/search`, p50/p99 each after a
 * warm-up, and the plan of a two-word query exactly as the API runs it: the
 * statement searchLog sends, prepared and executed as its role with its
 * tenant set, after five runs (when PostgreSQL may switch to a generic plan).
 *
 *   npm run build && npm start   # elsewhere; then
 *   npm run bench:search -- --sessions 10000 --events 100 --queries 200 --keep
 *   npm run bench:search -- --sessions 10000 --events 100 --reuse   # the kept tenant, no new seed
 *
 * Then read-your-writes: a session of --unindexed events appended through
 * the API (run it with no worker, so they stay unindexed), searched inside.
 *
 * --freshness (with a worker running, nothing seeded): how long after its
 * append an event is found by `GET /v1/search`. Idle: one event at a time,
 * each with a word of its own, polled every 25 ms until found. Then a flood:
 * --clients clients appending 100-event batches to sessions of their own
 * for --flood seconds; when it ends, how long until the flood's last events
 * are found, and at what rate the index caught up.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { parseSearchQuery, tokenize, tsvectorLiteral } from '@app/domain';
import { searchLogStatement } from '@app/event-store';
import { ADMIN_TOKEN, BASE_URL, BenchClient, benchClient, createScratchTenant, deleteScratchTenant, expectStatus, IDLE_SOCKET_TIMEOUT_MS, int, nowMs, OWNER_URL, printTable, requireLoopback, sampleStats, seededRandom } from './support';

const { values: args } = parseArgs({
  options: {
    sessions: { type: 'string', default: '10000' },
    events: { type: 'string', default: '100' },
    queries: { type: 'string', default: '200' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
    unindexed: { type: 'string', default: '1000' },
    freshness: { type: 'boolean', default: false },
    clients: { type: 'string', default: '32' },
    flood: { type: 'string', default: '20' },
  },
});
const SESSIONS = Number(args.sessions);
const EVENTS = Number(args.events);
const QUERIES = Number(args.queries);

/** A vocabulary with a Zipf-like use: word i is drawn with weight 1/(i+1), as in natural text. */
const VOCABULARY = Array.from({ length: 20_000 }, (_, i) => `w${i.toString(36)}x`);
const random = seededRandom(31);
const cumulative: number[] = [];
VOCABULARY.reduce((sum, _, i) => (cumulative[i] = sum + 1 / (i + 1)), 0);
const word = () => {
  const target = random() * cumulative[cumulative.length - 1];
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo];
};
const CODE = ['src/payments/refund.ts', 'ERR_OSSL_EVP_UNSUPPORTED', 'error[E0502]', 'npm run build', 'Rückerstattungsfehler', '返金処理の修正'];
const documentText = () => {
  const words = Array.from({ length: 10 + Math.floor(random() * 60) }, word);
  if (random() < 0.1) words.push(CODE[Math.floor(random() * CODE.length)]);
  return words.join(' ');
};

const TENANT_NAME = `bench-search-${SESSIONS}x${EVENTS}`;
/** Sessions carry a project among these, for the metadata filter's row. */
const PROJECTS = 20;

async function seed(owner: Client, tenantId: string): Promise<void> {
  const started = Date.now();
  const batch = 5000;
  for (let s = 0; s < SESSIONS; s += 1000) {
    const ids = Array.from({ length: Math.min(1000, SESSIONS - s) }, (_, i) => s + i);
    await owner.query(
      `INSERT INTO sessions (tenant_id, session_id, model, metadata, head_seq)
       SELECT $1, 'bench-' || n, 'gpt-4.1', jsonb_build_object('title', 'bench-' || n, 'project', 'p' || (n % ${PROJECTS})), $3 FROM unnest($2::int[]) n`,
      [tenantId, ids, EVENTS + 1],
    );
    await owner.query(`INSERT INTO search_progress (tenant_id, session_id, indexed_seq) SELECT $1, 'bench-' || n, $3 FROM unnest($2::int[]) n`, [tenantId, ids, EVENTS + 1]);
  }
  const total = SESSIONS * EVENTS;
  for (let n = 0; n < total; n += batch) {
    const rows = Array.from({ length: Math.min(batch, total - n) }, (_, i) => {
      const index = n + i;
      const body = documentText();
      return { session: `bench-${Math.floor(index / EVENTS)}`, seq: (index % EVENTS) + 2, age: total - index, body, terms: tsvectorLiteral(tokenize(body)) };
    });
    // Later sessions and later events are newer: one second apart.
    await owner.query(
      `INSERT INTO search_documents (tenant_id, session_id, seq, part, role, event_type, part_type, tool_name, created_at, body, terms)
       SELECT $1, s, q, 0, 'assistant', 'message.added', 'text', NULL, now() - make_interval(secs => a), b, t
         FROM unnest($2::text[], $3::bigint[], $4::int[], $5::text[], $6::tsvector[]) AS d(s, q, a, b, t)`,
      [tenantId, rows.map((r) => r.session), rows.map((r) => r.seq), rows.map((r) => r.age), rows.map((r) => r.body), rows.map((r) => r.terms)],
    );
    if ((n / batch) % 20 === 0) process.stderr.write(`seeded ${int(n)} / ${int(total)} documents (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  const seeded = (Date.now() - started) / 1000;
  await owner.query('VACUUM ANALYZE sessions, search_documents, search_progress');
  console.log(`seeded ${int(SESSIONS)} sessions, ${int(total)} documents in ${seeded.toFixed(0)} s, VACUUM ANALYZE ${((Date.now() - started) / 1000 - seeded).toFixed(0)} s`);
}

/** A tenant seeded by an earlier run with --keep at this size, with a new key; or none. */
async function reuseTenant(owner: Client, client: BenchClient): Promise<{ tenantId: string; key: string } | undefined> {
  const { rows } = await owner.query(
    `SELECT t.tenant_id FROM tenants t
      WHERE t.name LIKE $1 AND (SELECT count(*) FROM sessions s WHERE s.tenant_id = t.tenant_id AND s.session_id NOT LIKE 'bench-fresh-%') = $2
      ORDER BY t.created_at DESC LIMIT 1`,
    [`${TENANT_NAME}-%`, SESSIONS],
  );
  if (rows.length === 0) return undefined;
  const tenantId = rows[0].tenant_id as string;
  const issued = expectStatus(await client.call('POST', `/v1/admin/tenants/${tenantId}/api-keys`, ADMIN_TOKEN, { name: 'bench' }), 201, 'issue key');
  return { tenantId, key: issued.key };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `GET /v1/search?q=word` until it finds a hit; the ms from `since` (nowMs()) until then. */
async function foundAfter(client: BenchClient, key: string, word: string, since: number, limitMs = 600_000): Promise<number> {
  for (;;) {
    const body = expectStatus(await client.call('GET', `/v1/search?${new URLSearchParams({ q: word, limit: '1' })}`, key), 200, 'search');
    if (body.hits.length > 0) return nowMs() - since;
    if (nowMs() - since > limitMs) throw new Error(`${word} not found within ${limitMs} ms`);
    await sleep(25);
  }
}

async function freshness(): Promise<void> {
  const client = benchClient(BASE_URL, { maxSockets: Number(args.clients) + 2, timeout: IDLE_SOCKET_TIMEOUT_MS });
  const owner = new Client({ connectionString: OWNER_URL });
  await owner.connect();
  const tenant = await createScratchTenant(client, `${TENANT_NAME}-fresh`);
  const text = (marker: string) => `${documentText()} ${marker}`;
  const append = async (sessionId: string, texts: string[]) =>
    expectStatus(
      await client.call('POST', `/v1/sessions/${sessionId}/events`, tenant.key, {
        events: texts.map((t) => ({ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: t }] } } })),
      }),
      201,
      'append',
    );
  try {
    const sessions = Array.from({ length: Number(args.clients) }, (_, i) => `fresh-${i}`);
    for (const id of sessions) expectStatus(await client.call('POST', '/v1/sessions', tenant.key, { id, model: 'gpt-4.1' }), 201, 'create session');
    const idle: number[] = [];
    for (let i = 0; i < 20; i++) {
      const marker = `idlemark${i}z`;
      const started = nowMs();
      await append(sessions[i % sessions.length], [text(marker)]);
      idle.push(await foundAfter(client, tenant.key, marker, started));
      await sleep(500);
    }
    const idleStats = sampleStats(idle);
    let appended = 0;
    let batch = 0;
    const floodEnds = nowMs() + Number(args.flood) * 1000;
    const lastMarkers: string[] = [];
    await Promise.all(
      sessions.map(async (id) => {
        let marker = '';
        while (nowMs() < floodEnds) {
          marker = `floodmark${batch++}z`;
          await append(id, [...Array.from({ length: 99 }, () => documentText()), text(marker)]);
          appended += 100;
        }
        lastMarkers.push(marker);
      }),
    );
    const ended = nowMs();
    const floodSeconds = (ended - (floodEnds - Number(args.flood) * 1000)) / 1000;
    const { rows: behind } = await owner.query(
      `SELECT sum(s.head_seq - coalesce(p.indexed_seq, 0))::int AS events FROM sessions s LEFT JOIN search_progress p USING (tenant_id, session_id) WHERE s.tenant_id = $1`,
      [tenant.tenantId],
    );
    const lag = Math.max(...(await Promise.all(lastMarkers.map((m) => foundAfter(client, tenant.key, m, ended)))));
    printTable([
      ['case', 'figure'],
      ['idle: one event found after, p50 / max (ms)', `${idleStats.p50.toFixed(0)} / ${idleStats.max.toFixed(0)}`],
      [`flood: ${args.clients} clients x 100-event batches, appended (events/s)`, int(appended / floodSeconds)],
      ['flood: events not yet indexed when it ended', int(behind[0].events)],
      ['flood: its last events found after its end (s)', (lag / 1000).toFixed(1)],
      ['flood: index catch-up rate after its end (events/s)', int(behind[0].events / (lag / 1000))],
    ]);
    console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  } finally {
    await deleteScratchTenant(owner, tenant.tenantId);
    await owner.end();
    client.agent.destroy();
  }
}

async function main(): Promise<void> {
  requireLoopback('BENCH_URL', BASE_URL);
  if (args.freshness) return freshness();
  const client = benchClient(BASE_URL, { maxSockets: 1 });
  const owner = new Client({ connectionString: OWNER_URL });
  await owner.connect();
  const reused = args.reuse ? await reuseTenant(owner, client) : undefined;
  if (args.reuse && !reused) console.log(`no kept tenant of ${SESSIONS} sessions: seeding one`);
  const tenant = reused ?? (await createScratchTenant(client, TENANT_NAME));
  try {
    if (!reused) await seed(owner, tenant.tenantId);
    const { rows: load } = await owner.query(`SELECT count(*) AS documents FROM search_documents WHERE tenant_id = $1`, [tenant.tenantId]);
    console.log(`tenant ${tenant.tenantId}: ${int(SESSIONS)} sessions, ${int(Number(load[0].documents))} documents; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    // Mid-frequency words (ranks 20–2,000): what people search for; the commonest words are reported apart.
    const pick = () => VOCABULARY[20 + Math.floor(random() * 1980)];
    const kinds: Array<[string, () => Record<string, string>]> = [
      ['one word', () => ({ q: pick() })],
      ['two words', () => ({ q: `${pick()} ${word()}` })],
      ['one word, metadata filter', () => ({ q: pick(), metadata: JSON.stringify({ project: `p${Math.floor(random() * PROJECTS)}` }) })],
      ['a path (phrase)', () => ({ q: 'src/payments/refund.ts' })],
      ['Japanese (bigram phrase)', () => ({ q: '返金処理' })],
      ['the commonest word', () => ({ q: VOCABULARY[0] })],
    ];
    const rows = [['query', 'p50 ms', 'p99 ms', 'max ms', 'hits/page', 'capped']];
    for (const [name, make] of kinds) {
      const samples: number[] = [];
      let hits = 0;
      let capped = 0;
      for (let i = -Math.min(20, QUERIES); i < QUERIES; i++) {
        const started = process.hrtime.bigint();
        const body = expectStatus(await client.call('GET', `/v1/search?${new URLSearchParams({ ...make(), limit: '20' })}`, tenant.key), 200, name);
        if (i < 0) continue; // warm-up
        samples.push(Number(process.hrtime.bigint() - started) / 1e6);
        hits += body.hits.length;
        capped += body.capped ? 1 : 0;
      }
      const stats = sampleStats(samples);
      rows.push([name, stats.p50.toFixed(1), stats.p99.toFixed(1), stats.max.toFixed(1), (hits / QUERIES).toFixed(1), `${capped}/${QUERIES}`]);
    }
    // Read-your-writes inside one session: a session whose last --unindexed events the index does not hold yet (no worker runs
    // against this API, so they stay so), searched through GET /v1/sessions/{id}/search, which reads and matches them itself.
    const freshId = `bench-fresh-${Date.now()}`;
    expectStatus(await client.call('POST', '/v1/sessions', tenant.key, { id: freshId, model: 'gpt-4.1' }), 201, 'create session');
    const unindexed = Number(args.unindexed);
    for (let n = 0; n < unindexed; n += 100) {
      const events = Array.from({ length: Math.min(100, unindexed - n) }, () => ({ type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text: documentText() }] } } }));
      expectStatus(await client.call('POST', `/v1/sessions/${freshId}/events`, tenant.key, { events }), 201, 'append');
    }
    const sessionKinds: Array<[string, () => Record<string, string>]> = [
      [`in one session, ${int(unindexed)} events unindexed: one word`, () => ({ q: pick() })],
      [`in one session, ${int(unindexed)} events unindexed: two words`, () => ({ q: `${pick()} ${word()}` })],
    ];
    let searched = '';
    for (const [name, make] of sessionKinds) {
      const samples: number[] = [];
      let hits = 0;
      for (let i = -Math.min(20, QUERIES); i < QUERIES; i++) {
        const started = process.hrtime.bigint();
        const body = expectStatus(await client.call('GET', `/v1/sessions/${freshId}/search?${new URLSearchParams({ ...make(), limit: '20' })}`, tenant.key), 200, name);
        if (i < 0) continue;
        samples.push(Number(process.hrtime.bigint() - started) / 1e6);
        hits += body.hits.length;
        searched = `indexedThroughSeq ${body.indexedThroughSeq}, searchedThroughSeq ${body.searchedThroughSeq}, headSeq ${body.headSeq}`;
      }
      const stats = sampleStats(samples);
      rows.push([name, stats.p50.toFixed(1), stats.p99.toFixed(1), stats.max.toFixed(1), (hits / QUERIES).toFixed(1), '-']);
    }
    printTable(rows);
    console.log(`the session search's last answer: ${searched}`);
    expectStatus(await client.call('DELETE', `/v1/sessions/${freshId}`, tenant.key), 204, 'delete session');
    console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    // The plan of a two-word query as the API runs it: the same statement, prepared, as its role, its tenant set.
    const q = parseSearchQuery(`${VOCABULARY[100]} ${VOCABULARY[300]}`).tsquery;
    const { sql, params } = searchLogStatement(q, {}, 21, 10_000);
    await owner.query('BEGIN');
    await owner.query('SET LOCAL ROLE session_store_app');
    await owner.query(`SELECT set_config('app.tenant_id', $1, true)`, [tenant.tenantId]);
    await owner.query(`PREPARE bench_search AS ${sql}`);
    const literal = (v: unknown) => (typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
    const execute = `EXECUTE bench_search(${params.map(literal).join(', ')})`;
    for (let i = 0; i < 5; i++) await owner.query(execute);
    const plan = await owner.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${execute}`);
    await owner.query('ROLLBACK');
    console.log(`plan of ${q} (the 6th execution of the prepared statement):`);
    console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
  } finally {
    if (!args.keep && !reused) await deleteScratchTenant(owner, tenant.tenantId);
    await owner.end();
    client.agent.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
