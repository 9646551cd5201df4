/**
 * Search latency (docs/benchmarks.md): a scratch tenant with --sessions
 * sessions of --events documents each, seeded straight into PostgreSQL
 * (sessions rows and search_documents with terms made by the service's own
 * tokenizer, in multi-row batches), then one- and two-word queries through
 * `GET /v1/search`, p50/p99 each, and the plan of one query as the API runs
 * it (its role, its tenant), to show the index scan.
 *
 *   npm run build && npm start   # elsewhere; then
 *   npm run bench:search -- --sessions 10000 --events 100 --queries 200
 */
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { parseSearchQuery, tokenize, tsvectorLiteral } from '@app/domain';
import { BASE_URL, benchClient, createScratchTenant, deleteScratchTenant, expectStatus, int, OWNER_URL, printTable, requireLoopback, sampleStats, seededRandom } from './support';

const { values: args } = parseArgs({
  options: {
    sessions: { type: 'string', default: '10000' },
    events: { type: 'string', default: '100' },
    queries: { type: 'string', default: '200' },
    keep: { type: 'boolean', default: false },
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

async function seed(owner: Client, tenantId: string): Promise<void> {
  const started = Date.now();
  const batch = 2000;
  for (let s = 0; s < SESSIONS; s += 500) {
    const ids = Array.from({ length: Math.min(500, SESSIONS - s) }, (_, i) => `bench-${s + i}`);
    await owner.query(
      `INSERT INTO sessions (tenant_id, session_id, model, metadata, head_seq) SELECT $1, id, 'gpt-4.1', jsonb_build_object('title', id), $3 FROM unnest($2::text[]) id`,
      [tenantId, ids, EVENTS],
    );
  }
  const total = SESSIONS * EVENTS;
  for (let n = 0; n < total; n += batch) {
    const rows = Array.from({ length: Math.min(batch, total - n) }, (_, i) => {
      const index = n + i;
      const body = documentText();
      return { session: `bench-${Math.floor(index / EVENTS)}`, seq: (index % EVENTS) + 2, body, terms: tsvectorLiteral(tokenize(body)) };
    });
    await owner.query(
      `INSERT INTO search_documents (tenant_id, session_id, seq, part, role, event_type, part_type, tool_name, created_at, body, terms)
       SELECT $1, s, q, 0, 'assistant', 'message.added', 'text', NULL, now() - make_interval(secs => q), b, t
         FROM unnest($2::text[], $3::bigint[], $4::text[], $5::tsvector[]) AS d(s, q, b, t)`,
      [tenantId, rows.map((r) => r.session), rows.map((r) => r.seq), rows.map((r) => r.body), rows.map((r) => r.terms)],
    );
    if ((n / batch) % 50 === 0) process.stderr.write(`seeded ${int(n)} / ${int(total)} documents\n`);
  }
  await owner.query('ANALYZE search_documents');
  console.log(`seeded ${int(SESSIONS)} sessions, ${int(total)} documents in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

async function main(): Promise<void> {
  requireLoopback('BENCH_URL', BASE_URL);
  const client = benchClient(BASE_URL, { maxSockets: 1 });
  const owner = new Client({ connectionString: OWNER_URL });
  await owner.connect();
  const tenant = await createScratchTenant(client, 'bench-search');
  try {
    await seed(owner, tenant.tenantId);
    // Mid-frequency words (ranks 20–2,000): what people search for; the commonest words are reported apart.
    const pick = () => VOCABULARY[20 + Math.floor(random() * 1980)];
    const kinds: Array<[string, () => string]> = [
      ['one word', () => pick()],
      ['two words', () => `${pick()} ${word()}`],
      ['a path (phrase)', () => 'src/payments/refund.ts'],
      ['Japanese (bigram phrase)', () => '返金処理'],
      ['the commonest word', () => VOCABULARY[0]],
    ];
    const rows = [['query', 'p50 ms', 'p99 ms', 'hits/page', 'capped']];
    for (const [name, make] of kinds) {
      const samples: number[] = [];
      let hits = 0;
      let capped = 0;
      for (let i = 0; i < QUERIES; i++) {
        const started = process.hrtime.bigint();
        const body = expectStatus(await client.call('GET', `/v1/search?${new URLSearchParams({ q: make(), limit: '20' })}`, tenant.key), 200, name);
        samples.push(Number(process.hrtime.bigint() - started) / 1e6);
        hits += body.hits.length;
        capped += body.capped ? 1 : 0;
      }
      const stats = sampleStats(samples);
      rows.push([name, stats.p50.toFixed(1), stats.p99.toFixed(1), (hits / QUERIES).toFixed(1), `${capped}/${QUERIES}`]);
    }
    printTable(rows);
    await owner.query('BEGIN');
    await owner.query('SET LOCAL ROLE session_store_app');
    await owner.query(`SELECT set_config('app.tenant_id', $1, true)`, [tenant.tenantId]);
    const plan = await owner.query(
      `EXPLAIN SELECT d.seq FROM search_documents d JOIN sessions s ON s.tenant_id = d.tenant_id AND s.session_id = d.session_id
        WHERE d.tenant_id = current_tenant() AND d.terms @@ $1::tsquery LIMIT 10001`,
      [parseSearchQuery(`${VOCABULARY[100]} ${VOCABULARY[300]}`).tsquery],
    );
    await owner.query('ROLLBACK');
    console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
  } finally {
    if (!args.keep) await deleteScratchTenant(owner, tenant.tenantId);
    await owner.end();
    client.agent.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
