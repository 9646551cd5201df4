import { Client as PgClient } from 'pg';
import { Client, expectProblem } from './support/client';
import { connectAs } from './support/database';
import { ADMIN_TOKEN } from './support/env';
import { startService, TestService, waitFor } from './support/service';

/**
 * Full-text search over the log: a seeded corpus in English, German and
 * Japanese with code, paths and error lines, indexed by the worker; each
 * query finds its expected hits on the first page (in rank order where
 * stated), the filters, paging, tenant isolation and deletion.
 */
describe('search over the log', () => {
  let service: TestService;
  let client: Client;
  let owner: PgClient;
  let key: string;
  let other: { tenantId: string; key: string };

  const text = (role: 'user' | 'assistant', value: string) => ({ type: 'message.added', data: { message: { role, parts: [{ type: 'text', text: value }] } } });
  const toolPair = (callId: string, name: string, input: unknown, output: string) => [
    { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name, input }] } } },
    { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name, output }] } } },
  ];

  /** Session id → metadata and events, appended in this order (so later sessions are newer). */
  const CORPUS: Array<[string, Record<string, unknown>, unknown[]]> = [
    [
      'en-refund',
      { project: 'atlas', title: 'Refund rounding bug' },
      [
        text('user', 'Which change fixed the refund rounding bug? Customers got 0.01 too little on a refund.'),
        ...toolPair('c1', 'read_file', { path: 'src/payments/refund.ts' }, 'export function refund(amount: number) {\n  return Math.floor(amount * 100) / 100;\n}'),
        text('assistant', 'The refund rounds down with Math.floor; I will round half-even in src/payments/refund.ts.'),
        ...toolPair('c2', 'bash', { command: 'npm run migrate --force' }, 'Applying migration 0042_refund_precision... done'),
      ],
    ],
    [
      'en-build',
      { project: 'atlas', title: 'Build fails on Node 17' },
      [
        text('user', 'The build fails after upgrading Node.'),
        ...toolPair('c1', 'bash', { command: 'npm run build' }, 'Error: error:0308010C:digital envelope routines::unsupported\n  opensslErrorStack: [ "error:03000086:digital envelope routines::initialization error" ],\n  code: "ERR_OSSL_EVP_UNSUPPORTED"'),
        text('assistant', 'Set NODE_OPTIONS=--openssl-legacy-provider or upgrade webpack; the refund module is not involved.'),
      ],
    ],
    [
      'rust-borrow',
      { project: 'zephyr', title: 'Borrow checker' },
      [
        ...toolPair('c1', 'cargo', { args: ['build'] }, 'error[E0502]: cannot borrow `v` as mutable because it is also borrowed as immutable\n --> src/main.rs:4:5'),
        text('assistant', 'E0502 means an immutable borrow is still alive; clone the value first.'),
      ],
    ],
    [
      'de-erstattung',
      { project: 'atlas', title: 'Erstattung' },
      [
        text('user', 'Der Rückerstattungsfehler tritt bei Teilzahlungen auf. Bitte prüfe die Rundung.'),
        text('assistant', 'Die Rundung in der Rückerstattungsberechnung war falsch; ich habe sie korrigiert.'),
      ],
    ],
    [
      'ja-henkin',
      { project: 'atlas', title: '返金の不具合' },
      [
        text('user', '支払いの返金処理で端数の丸めが間違っています。src/payments/refund.ts を確認してください。'),
        text('assistant', '返金処理の丸めを修正しました。テストも追加しました。'),
      ],
    ],
  ];

  const search = (params: Record<string, string>, k = key) => client.request('GET', `/v1/search?${new URLSearchParams(params)}`, { key: k });
  const sessionSearch = (id: string, params: Record<string, string>, k = key) =>
    client.request('GET', `/v1/sessions/${encodeURIComponent(id)}/search?${new URLSearchParams(params)}`, { key: k });
  const places = (res: { body: { hits: Array<{ sessionId: string; seq: number }> } }) => res.body.hits.map((h) => `${h.sessionId}@${h.seq}`);
  const sessionsOf = (res: { body: { hits: Array<{ sessionId: string }> } }) => [...new Set(res.body.hits.map((h) => h.sessionId))];

  /** Polled, here and below: the worker indexes in the background, and only search answers say how far it got. */
  async function indexed(k: string, ids: readonly string[]): Promise<void> {
    await waitFor(
      async () => {
        for (const id of ids) {
          const res = await sessionSearch(id, { q: 'x' }, k);
          if (res.status !== 200 || res.body.indexedThroughSeq < res.body.headSeq) return false;
        }
        return true;
      },
      'search index caught up',
      20_000,
    );
  }

  beforeAll(async () => {
    service = await startService({ env: { SEARCH_INDEX_DELAY_MS: '50', SEARCH_SWEEP_INTERVAL_MS: '1000' } });
    client = new Client(service.baseUrl);
    owner = await connectAs(service.dbUrl);
    ({ key } = await client.createTenant('search'));
    other = await client.createTenant('other');
    for (const [id, metadata, events] of CORPUS) {
      await client.createSession(key, { id, metadata });
      const res = await client.append(key, id, { events });
      expect(res.status).toBe(201);
    }
    await client.createSession(other.key, { id: 'foreign', metadata: { project: 'atlas' } });
    await client.append(other.key, 'foreign', { events: [text('user', 'The zebrafish refund rounding bug in src/payments/refund.ts')] });
    await indexed(key, CORPUS.map(([id]) => id));
    await indexed(other.key, ['foreign']);
  }, 60_000);

  afterAll(async () => {
    await owner?.end();
    await service?.stop();
  });

  it.each([
    ['a word', 'refund', ['en-refund', 'en-build', 'ja-henkin']],
    ['two words', 'refund rounding', ['en-refund']],
    ['a path, as a phrase of its parts', 'src/payments/refund.ts', ['en-refund', 'ja-henkin']],
    ['an error code with underscores', 'ERR_OSSL_EVP_UNSUPPORTED', ['en-build']],
    ['a compiler error code', 'E0502', ['rust-borrow']],
    ['a flag', '"migrate --force"', ['en-refund']],
    ['a German compound', 'Rückerstattungsfehler', ['de-erstattung']],
    ['a German prefix', 'rückerstattung*', ['de-erstattung']],
    ['Japanese without spaces', '返金処理', ['ja-henkin']],
    ['one kanji', '丸', ['ja-henkin']],
    ['a tool name', 'cargo', ['rust-borrow']],
  ])('%s (%s) finds its sessions', async (_what, q, expected) => {
    const res = await search({ q });
    expect(res.status).toBe(200);
    expect(sessionsOf(res).sort()).toEqual([...expected].sort());
    for (const hit of res.body.hits) {
      expect(hit.snippet.highlights.length).toBeGreaterThan(0);
      for (const [start, end] of hit.snippet.highlights) expect(end).toBeGreaterThan(start);
    }
  });

  it.each([
    ["a compound's inner part (no decompounding)", 'fehler'],
    ['an inflected form (no stemming)', 'refunds'],
    ['a part of a word without the star', 'refun'],
  ])('misses by design: %s (%s)', async (_what, q) => {
    expect((await search({ q })).body.hits).toEqual([]);
  });

  it('a phrase matches its words adjacent and in order only', async () => {
    expect(sessionsOf(await search({ q: '"rounding bug"' }))).toEqual(['en-refund']);
    expect((await search({ q: '"bug rounding"' })).body.hits).toEqual([]);
  });

  it('a hit says where it is: session and title, seq, role, tool and the matched words marked in its snippet', async () => {
    const res = await search({ q: 'ERR_OSSL_EVP_UNSUPPORTED' });
    expect(res.body.hits).toHaveLength(1);
    const [hit] = res.body.hits;
    expect(hit).toMatchObject({ sessionId: 'en-build', title: 'Build fails on Node 17', seq: 4, part: 0, eventType: 'message.added', role: 'tool', partType: 'tool_result', toolName: 'bash' });
    // Each term is marked wherever it stands: the phrase's last word alone too.
    expect(hit.snippet.highlights.map(([s, e]: [number, number]) => hit.snippet.text.slice(s, e))).toEqual(['unsupported', 'ERR_OSSL_EVP_UNSUPPORTED']);
    const ja = (await search({ q: '返金処理' })).body.hits[0];
    expect(ja.snippet.highlights.map(([s, e]: [number, number]) => ja.snippet.text.slice(s, e))).toEqual(['返金処理']);
  });

  it('ranks the denser match first, and an equal one by recency', async () => {
    // en-refund's user turn says refund twice in a short text; en-build's assistant once in a longer one.
    const order = places(await search({ q: 'refund', role: 'user,assistant' }));
    expect(order.indexOf('en-refund@2')).toBeLessThan(order.indexOf('en-build@5'));
    // The same words in two sessions: the newer first.
    for (const id of ['twin-old', 'twin-new']) {
      await client.createSession(key, { id });
      await client.append(key, id, { events: [text('user', 'quokka habitat survey')] });
    }
    await indexed(key, ['twin-old', 'twin-new']);
    expect(sessionsOf(await search({ q: 'quokka' }))).toEqual(['twin-new', 'twin-old']);
  });

  it('filters by session metadata, role, tool and time', async () => {
    expect(sessionsOf(await search({ q: 'src/payments/refund.ts', metadata: '{"title":"返金の不具合"}' }))).toEqual(['ja-henkin']);
    expect(sessionsOf(await search({ q: 'error', metadata: '{"project":"zephyr"}' }))).toEqual(['rust-borrow']);
    expect(places(await search({ q: 'refund', tool: 'read_file' })).sort()).toEqual(['en-refund@3', 'en-refund@4']);
    expect((await search({ q: 'refund', role: 'tool' })).body.hits.every((h: { role: string }) => h.role === 'tool')).toBe(true);
    const all = await search({ q: 'refund' });
    const times = all.body.hits.map((h: { createdAt: string }) => h.createdAt).sort();
    const from = times[Math.floor(times.length / 2)];
    const later = await search({ q: 'refund', from });
    expect(later.body.hits.length).toBeGreaterThan(0);
    expect(later.body.hits.every((h: { createdAt: string }) => h.createdAt > from)).toBe(true);
    const earlier = await search({ q: 'refund', to: from });
    expect(earlier.body.hits.length + later.body.hits.length).toBe(all.body.hits.length - all.body.hits.filter((h: { createdAt: string }) => h.createdAt === from).length);
  });

  it('pages with a cursor: every hit once, in the order of one page', async () => {
    const whole = places(await search({ q: 'refund' }));
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await search({ q: 'refund', limit: '2', ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      paged.push(...places(res));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(whole);
    expect(whole.length).toBeGreaterThan(3);
  });

  it('inside one session: its hits only, with how far its index reaches', async () => {
    const res = await sessionSearch('ja-henkin', { q: 'src/payments/refund.ts' });
    expect(res.status).toBe(200);
    expect(sessionsOf(res)).toEqual(['ja-henkin']);
    expect(res.body.indexedThroughSeq).toBe(res.body.headSeq);
    expectProblem(await sessionSearch('no-such-session', { q: 'refund' }), 404, 'session_not_found');
  });

  it("never finds another tenant's words, nor searches its sessions", async () => {
    expect((await search({ q: 'zebrafish' })).body.hits).toEqual([]);
    expect(sessionsOf(await search({ q: 'src/payments/refund.ts' }))).not.toContain('foreign');
    expectProblem(await sessionSearch('foreign', { q: 'zebrafish' }), 404, 'session_not_found');
    expect(sessionsOf(await search({ q: 'zebrafish' }, other.key))).toEqual(['foreign']);
  });

  it('refuses a query without a word, a forged cursor and an unknown role', async () => {
    expectProblem(await search({ q: '!!! ""' }), 400, 'invalid_query');
    expectProblem(await search({ q: 'refund', cursor: 'bm90LWEtY3Vyc29y' }), 400, 'invalid_cursor');
    expectProblem(await search({ q: 'refund', role: 'robot' }), 400, 'validation_failed');
    expectProblem(await search({ q: 'refund', metadata: '[1]' }), 400, 'validation_failed');
  });

  it("a deleted session's text leaves the index with it; so does a deleted tenant's", async () => {
    const count = async (sql: string, params: unknown[]) => Number((await owner.query(sql, params)).rows[0].count);
    expect(await count('SELECT count(*) FROM search_documents WHERE session_id = $1', ['rust-borrow'])).toBeGreaterThan(0);
    expect((await client.request('DELETE', '/v1/sessions/rust-borrow', { key })).status).toBe(204);
    expect((await search({ q: 'E0502' })).body.hits).toEqual([]);
    expect(await count('SELECT count(*) FROM search_documents WHERE session_id = $1', ['rust-borrow'])).toBe(0);

    expect(await count('SELECT count(*) FROM search_documents WHERE tenant_id = $1', [other.tenantId])).toBeGreaterThan(0);
    expect((await client.request('DELETE', `/v1/admin/tenants/${other.tenantId}`, { key: ADMIN_TOKEN })).status).toBe(204);
    expect(await count('SELECT count(*) FROM search_documents WHERE tenant_id = $1', [other.tenantId])).toBe(0);
    expect(await count('SELECT count(*) FROM search_progress WHERE tenant_id = $1', [other.tenantId])).toBe(0);
  });
});

/**
 * Read-your-writes inside a session: with no worker, nothing is indexed, and
 * a search inside the session still finds what was just appended (read from
 * the log, matched and ranked by the same terms and SQL), within its bound
 * (SEARCH_UNINDEXED_EVENTS); once part of it is indexed, the index and the
 * log's tail merge into one order that the cursor pages over.
 */
describe('search inside a session: read-your-writes', () => {
  let service: TestService;
  let client: Client;
  let key: string;
  const BOUND = 6;
  const text = (role: 'user' | 'assistant', value: string) => ({ type: 'message.added', data: { message: { role, parts: [{ type: 'text', text: value }] } } });
  const sessionSearch = (id: string, params: Record<string, string>) =>
    client.request('GET', `/v1/sessions/${encodeURIComponent(id)}/search?${new URLSearchParams(params)}`, { key });
  const places = (res: { body: { hits: Array<{ seq: number; part: number }> } }) => res.body.hits.map((h) => `${h.seq}.${h.part}`);

  beforeAll(async () => {
    service = await startService({ worker: false, env: { SEARCH_INDEX_DELAY_MS: '50', SEARCH_SWEEP_INTERVAL_MS: '500', SEARCH_UNINDEXED_EVENTS: String(BOUND) } });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('fresh'));
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
  });

  it('finds an event right after its append, before any indexing, with the same matching and filters', async () => {
    await client.createSession(key, { id: 'fresh' });
    const appended = await client.append(key, 'fresh', {
      events: [
        text('user', 'Where does the okapi live?'),
        {
          type: 'message.added',
          data: { message: { role: 'assistant', parts: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_call', callId: 'c1', name: 'grep', input: { pattern: 'okapi' } }] } },
        },
        { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', name: 'grep', output: 'zoo/okapi.md: the okapi lives in the Ituri rainforest' }] } } },
      ],
    });
    expect(appended.status).toBe(201);
    const res = await sessionSearch('fresh', { q: 'okapi' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ indexedThroughSeq: 0, headSeq: 4, searchedThroughSeq: 4 });
    expect(places(res).sort()).toEqual(['2.0', '3.1', '4.0']);
    expect(res.body.hits.find((h: { seq: number }) => h.seq === 4)).toMatchObject({ role: 'tool', partType: 'tool_result', toolName: 'grep', title: null });
    for (const hit of res.body.hits) {
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.snippet.highlights.length).toBeGreaterThan(0);
    }
    // Phrases, prefixes and filters as over the index.
    expect(places(await sessionSearch('fresh', { q: '"ituri rainforest"' }))).toEqual(['4.0']);
    expect(places(await sessionSearch('fresh', { q: '"rainforest ituri"' }))).toEqual([]);
    expect(places(await sessionSearch('fresh', { q: 'rainfor*' }))).toEqual(['4.0']);
    expect(places(await sessionSearch('fresh', { q: 'okapi', role: 'user' }))).toEqual(['2.0']);
    expect(places(await sessionSearch('fresh', { q: 'okapi', tool: 'grep' })).sort()).toEqual(['3.1', '4.0']);
    // Across sessions, search is the index's: not there yet.
    expect((await client.request('GET', '/v1/search?q=okapi', { key })).body.hits).toEqual([]);
  });

  it(`reads at most ${BOUND} events after the index, and says how far it searched`, async () => {
    await client.createSession(key, { id: 'long' });
    for (let i = 0; i < 9; i++) await client.append(key, 'long', { events: [text('user', `capybara number ${i}`)] });
    const res = await sessionSearch('long', { q: 'capybara' });
    expect(res.body).toMatchObject({ indexedThroughSeq: 0, headSeq: 10, searchedThroughSeq: BOUND });
    // seq 1 is the session's creation; seqs 2..6 are the first five appends.
    expect(res.body.hits.map((h: { seq: number }) => h.seq).sort()).toEqual([2, 3, 4, 5, 6]);
  });

  it('merges the indexed and the unindexed into one order, paged by the cursor without gaps or repeats', async () => {
    await client.createSession(key, { id: 'mixed' });
    await client.append(key, 'mixed', { events: [text('user', 'wombat burrow'), text('assistant', 'A wombat digs; wombat burrows are long.'), text('user', 'unrelated')] });
    const worker = await service.startWorker();
    await waitFor(async () => (await sessionSearch('mixed', { q: 'x' })).body.indexedThroughSeq === 4, 'indexed', 20_000);
    await worker.stop();
    await client.append(key, 'mixed', { events: [text('user', 'wombat'), text('assistant', 'the wombat again, and wombat')] });
    const whole = await sessionSearch('mixed', { q: 'wombat' });
    expect(whole.body).toMatchObject({ indexedThroughSeq: 4, headSeq: 6, searchedThroughSeq: 6 });
    expect(places(whole).sort()).toEqual(['2.0', '3.0', '5.0', '6.0']);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await sessionSearch('mixed', { q: 'wombat', limit: '1', ...(cursor ? { cursor } : {}) });
      paged.push(...places(res));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(places(whole));
    // The same order and scores as once everything is indexed.
    const ranked = (res: { body: { hits: Array<{ seq: number; part: number; score: number }> } }) => res.body.hits.map((h) => [h.seq, h.part, h.score]);
    await service.startWorker();
    await waitFor(async () => (await sessionSearch('mixed', { q: 'x' })).body.indexedThroughSeq === 6, 'indexed', 20_000);
    expect(ranked(await sessionSearch('mixed', { q: 'wombat' }))).toEqual(ranked(whole));
  });
});

/**
 * The index kept by the append notices alone (the sweep set far away), with
 * runs paced at the default share: appends that arrive while a session's run
 * waits fold into it, those that arrive while it runs get a run of their own,
 * so every event of a burst over several sessions is found across sessions.
 */
describe('search across sessions: indexing driven by append notices', () => {
  let service: TestService;
  let client: Client;
  let key: string;
  const text = (value: string) => ({ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: value }] } } });

  beforeAll(async () => {
    service = await startService({ env: { SEARCH_INDEX_DELAY_MS: '20', SEARCH_SWEEP_INTERVAL_MS: '600000' } });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('notices'));
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
  });

  it('finds every event of a burst of appends to four sessions, the last included', async () => {
    const sessions = ['burst-a', 'burst-b', 'burst-c', 'burst-d'];
    for (const id of sessions) await client.createSession(key, { id });
    const words: string[] = [];
    await Promise.all(
      sessions.map(async (id, s) => {
        for (let i = 0; i < 15; i++) {
          const word = `burstword${s}x${i}`;
          words.push(word);
          const res = await client.append(key, id, { events: [text(`note ${i}: ${word}`), text(`filler ${'lorem ipsum '.repeat(20)}`)] });
          expect(res.status).toBe(201);
        }
      }),
    );
    await waitFor(
      async () => {
        const res = await client.request('GET', `/v1/search?${new URLSearchParams({ q: 'burstword*', limit: '100' })}`, { key });
        return res.status === 200 && res.body.hits.length === words.length;
      },
      'every burst word found across sessions',
      30_000,
    );
    for (const word of [words[0], words[words.length - 1]]) {
      const res = await client.request('GET', `/v1/search?${new URLSearchParams({ q: word })}`, { key });
      expect(res.body.hits.map((h: { snippet: { text: string } }) => h.snippet.text)).toEqual([expect.stringContaining(word)]);
    }
  });
});
