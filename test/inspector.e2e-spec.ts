import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium, Page, Request } from 'playwright-core';
import { Agent, turnEvents } from './support/agent-script';
import { whenever } from './support/awaiting';
import { Client, userMessage } from './support/client';
import { startService, TestService, waitFor } from './support/service';

/**
 * The inspector page in a real browser: Debian's chromium driven
 * by playwright-core. Nothing is skipped: without /usr/bin/chromium the spec
 * fails (CI installs it, see .ci/run). Screenshots of the main views go to
 * test-artifacts/inspector/ for review (docs/inspector/ holds copies).
 * The page's timers are Playwright's clock (it also flows on its own): polls
 * are fired by `clock.runFor`, not waited for. The event stream is real
 * network, not a timer: its events are waited for.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = join(__dirname, '..', 'test-artifacts', 'inspector');
/** Enough pages (the page loads 500 events at a time) to show that only the ones in view are fetched. */
const LONG_EVENTS = 10_000;
const FILLERS = 50;
const POLL_MS = 2000;
/** Hits of `quokka` seeded for the search (the page shows 20 a page): the census's notes, then a tool call, its result and an answer. */
const CENSUS_NOTES = 21;
const QUOKKA_HITS = CENSUS_NOTES + 3;
/** The census notes that also say `lighthouse`, for the search inside one session. */
const LIGHTHOUSE_NOTES = [5, 17];
/** Untrusted text in a snippet, after characters outside the BMP (two UTF-16 units each): highlights are UTF-16 offsets. */
const ANSWER = '🦘🦘 <img src=x onerror=alert(1)> the quokka is no kangaroo, and <b>quokka</b> is not markup';

const toolUse = (callId: string, output: string) => [
  { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name: 'bash', input: { command: `run ${callId}` } }] } } },
  { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name: 'bash', output }] } } },
];
const answer = (text: string) => ({ type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text }] } } });

/** The `/events` reads the page made for a session, as `afterSeq`, `limit` and `types` (null for timeline pages). */
function eventReads(page: Page, sessionId: string) {
  const reads: { afterSeq: number; limit: number; types: string | null }[] = [];
  const listener = (request: Request) => {
    const url = new URL(request.url());
    if (url.pathname === `/v1/sessions/${sessionId}/events` && request.method() === 'GET') {
      reads.push({ afterSeq: Number(url.searchParams.get('afterSeq')), limit: Number(url.searchParams.get('limit')), types: url.searchParams.get('types') });
    }
  };
  page.on('request', listener);
  return { reads, stop: () => page.off('request', listener) };
}

/** Every event stream the page opens: its session, `afterSeq`, and whether it has ended (answered in full, failed or aborted). */
function trackStreams(page: Page) {
  const all: { sessionId: string; afterSeq: number; ended: boolean; request: Request }[] = [];
  const changed = new EventEmitter();
  page.on('request', (request) => {
    const url = new URL(request.url());
    const match = /^\/v1\/sessions\/([^/]+)\/events\/stream$/.exec(url.pathname);
    if (match) all.push({ sessionId: decodeURIComponent(match[1]), afterSeq: Number(url.searchParams.get('afterSeq')), ended: false, request });
  });
  const end = (request: Request) => {
    for (const s of all) if (s.request === request) s.ended = true;
    changed.emit('ended');
  };
  page.on('requestfinished', end);
  page.on('requestfailed', end);
  const open = () => all.filter((s) => !s.ended).map((s) => ({ sessionId: s.sessionId, afterSeq: s.afterSeq }));
  /** Resolves once no stream is open (at once if none is), as the browser reports each one finished or failed. */
  const allClosed = (what: string, timeoutMs = 10_000) => whenever(changed, 'ended', () => (open().length === 0 ? true : undefined), what, timeoutMs);
  return { all, open, allClosed };
}

const isStream = (url: URL) => url.pathname.endsWith('/events/stream');

/** Hides or shows the tab as the browser would (headless chromium has no other tab to switch to). */
async function setTabHidden(page: Page, hidden: boolean) {
  await page.evaluate((h) => {
    const doc = (globalThis as any).document;
    if (h) {
      Object.defineProperty(doc, 'hidden', { value: true, configurable: true });
      Object.defineProperty(doc, 'visibilityState', { value: 'hidden', configurable: true });
    } else {
      delete doc.hidden;
      delete doc.visibilityState;
    }
    doc.dispatchEvent(new Event('visibilitychange'));
  }, hidden);
}

describe('inspector page', () => {
  let service: TestService;
  let client: Client;
  let key: string;
  let browser: Browser;
  let page: Page;
  let refId: string;
  let refSeq: number;
  let pivotSeq: number;
  let prunedCallIds: string[];
  let archivedCallIds: string[];
  let streams: ReturnType<typeof trackStreams>;
  const consoleProblems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (CI installs it in .ci/run)`);
    mkdirSync(ARTIFACTS, { recursive: true });
    service = await startService();
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('inspected'));

    // The search's corpus (the oldest activity, so the list's first page is as before): a word in many parts of two sessions.
    await client.createSession(key, { id: 'find-census', metadata: { title: 'Quokka census' } });
    const notes = Array.from({ length: CENSUS_NOTES }, (_, i) => userMessage(`Census note ${i + 1}: one quokka counted near the ${LIGHTHOUSE_NOTES.includes(i + 1) ? 'lighthouse' : 'ferry'}`));
    expect((await client.append(key, 'find-census', { events: notes })).status).toBe(201);
    await client.createSession(key, { id: 'find-tools', metadata: { title: 'Zoo tooling' } });
    const tools = [
      userMessage('Where are the counts kept?'),
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'call-grep', name: 'grep', input: { pattern: 'quokka', path: 'data/' } }] } } },
      { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'call-grep', name: 'grep', output: 'data/rottnest.csv:3: quokka,42' }] } } },
      answer(ANSWER),
    ];
    expect((await client.append(key, 'find-tools', { events: tools })).status).toBe(201);

    // Sessions that only fill the list, so that it takes a second page; created first, so the others are more recent.
    await Promise.all(Array.from({ length: FILLERS }, (_, i) => client.createSession(key, { id: `filler-${String(i).padStart(2, '0')}`, metadata: { title: `Chore ${i}`, kind: 'filler' } })));

    // The session to inspect: an uploaded tool output, then turns until an automatic compaction lands.
    const id = 'inspect-me';
    await client.createSession(key, {
      id,
      model: 'gpt-4.1',
      system: 'You are a careful coding agent.',
      config: { limits: { context: 16_000, output: 2_000 } },
      metadata: { title: 'Fix the flaky build', team: 'payments' },
    });
    const agent = new Agent(client, key, id);
    const output = Array.from({ length: 3000 }, (_, i) => (i % 500 === 499 ? `line ${i + 1}: ERROR disk quota exceeded` : `line ${i + 1}: ok`)).join('\n');
    const uploaded = await fetch(`${service.baseUrl}/v1/sessions/${id}/tool-outputs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' },
      body: output,
    });
    expect(uploaded.status).toBe(201);
    refId = ((await uploaded.json()) as any).ref.id;
    await agent.append([
      userMessage('Why does the build fail?'),
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'call-build', name: 'bash', input: { command: 'npm run build' } }] } } },
    ]);
    const appended = await agent.append([{ type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'call-build', name: 'bash', outputRef: { id: refId } }] } } }]);
    refSeq = appended.events[0].seq;
    const { markerSeq } = await agent.untilMarker(1);
    const entry = await agent.settled(markerSeq);
    expect(entry.status).toBe('completed');
    pivotSeq = entry.completedSeq;
    await agent.append(turnEvents(id, 99, 5));

    // Pruned and archived tool results: five uses in the first turn, two turns after it, then the policy run now.
    await client.createSession(key, {
      id: 'pruned-work',
      metadata: { title: 'Pruned and archived results' },
      config: {
        preset: 'opencode',
        toolOutput: { enabled: false },
        compaction: { enabled: false },
        prune: { protectTokens: 0, minimumTokens: 0 },
        archive: { enabled: true, toolCallCutoff: 3, strategy: 'heuristic' },
      },
    });
    const marks = [
      userMessage('Find the failing module'),
      ...[1, 2, 3, 4, 5].flatMap((n) => toolUse(`use-${n}`, `result of use-${n}: src/module${n}.ts has ${n} failures\n`.repeat(40))),
      answer('Module 5 fails.'),
      userMessage('Fix it'),
      answer('Fixed.'),
      userMessage('Thanks'),
      answer('You are welcome.'),
    ];
    expect((await client.append(key, 'pruned-work', { events: marks })).status).toBe(201);
    const report = (await client.request('POST', '/v1/sessions/pruned-work/prune', { key, body: { wait: true } })).body;
    expect(report.prune.status).toBe('pruned');
    expect(report.archive.status).toBe('archived');
    prunedCallIds = report.prune.callIds;
    archivedCallIds = report.archive.callIds;

    // A long session for the virtualized timeline: 10 appends of 1,000.
    await client.createSession(key, { id: 'long-log', metadata: { title: 'ten thousand events' }, config: { compaction: { enabled: false } } });
    for (let start = 1; start <= LONG_EVENTS; start += 1000) {
      const res = await client.append(key, 'long-log', { events: Array.from({ length: 1000 }, (_, i) => userMessage(`bulk message ${start + i}`)) });
      expect(res.status).toBe(201);
    }

    // Another tenant's session: the page must never show it.
    const other = await client.createTenant('neighbour');
    await client.createSession(other.key, { id: 'neighbours-secret', metadata: { title: 'Fix the flaky build too', team: 'payments' } });
    // The most recent activity of all: first in the list.
    await client.createSession(key, { id: 'other-work', metadata: { title: 'Write the release notes' } });
    expect((await client.append(key, 'other-work', { events: [userMessage('Draft the notes')] })).status).toBe(201);

    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // Fail fast: every wait in this spec is for the page's answer to a local request.
    page.setDefaultTimeout(10_000);
    streams = trackStreams(page);
    await page.clock.install();
    page.on('console', (message) => {
      // The refused key's 401, the refused search's 400, the refused stream's 429 and the stream the test drops are logged by the browser
      // as failed loads; a CSP violation is what must never happen.
      if (message.type() === 'error' && !/status of (40[01]|429) |net::ERR_CONNECTION_RESET/.test(message.text())) consoleProblems.push(message.text());
    });
    page.on('pageerror', (error) => consoleProblems.push(String(error)));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false });
  const sessionIds = () => page.locator('#sessions-body tr td:first-child').allTextContents();
  const search = async (title: string, metadata: string) => {
    await page.fill('#search-title', title);
    await page.fill('#search-metadata', metadata);
    const request = page.waitForRequest((r) => new URL(r.url()).pathname === '/v1/sessions');
    const response = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/sessions');
    // The list renders once the page has read the answer, after the response arrived: a marker row is gone when it has.
    await page.locator('#sessions-body').evaluate((body: any) => body.appendChild(body.ownerDocument.createElement('tr')).classList.add('stale'));
    await page.click('#search-form button[type=submit]');
    const sent = new URL((await request).url()).searchParams;
    await response;
    await page.locator('#sessions-body tr.stale').waitFor({ state: 'detached' });
    return sent;
  };

  it('serves the page with a strict CSP and signs in with a key kept in sessionStorage only', async () => {
    const response = await page.goto(`${service.baseUrl}/inspect`);
    expect(response!.status()).toBe(200);
    const headers = response!.headers();
    const csp = headers['content-security-policy'];
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('no-referrer');
    // Every module of the build, the SSE reader compiled from the client package's source included.
    const modules = readdirSync(join(__dirname, '..', 'dist', 'apps', 'inspector', 'public')).filter((name) => name.endsWith('.js'));
    expect(modules).toEqual(expect.arrayContaining(['inspector.js', 'dom.js', 'search.js', 'sse.js']));
    for (const asset of [...modules, 'inspector.css']) {
      const served = await fetch(`${service.baseUrl}/inspect/${asset}`);
      expect(served.headers.get('content-security-policy')).toBe(csp);
      expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    }
    for (const module of modules) expect((await fetch(`${service.baseUrl}/inspect/${module}`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${service.baseUrl}/inspect/..%2Fpackage.json`)).status).toBe(404);
    // Not a tenant route: absent from the OpenAPI document the isolation matrix is built from.
    const doc = (await (await fetch(`${service.baseUrl}/docs-json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/inspect'))).toEqual([]);

    await page.fill('#api-key', 'sst_wrong_key');
    await page.click('#sign-in-form button[type=submit]');
    await page.locator('#sign-in-error').filter({ hasText: 'not accepted' }).waitFor();
    await shot('00-sign-in');

    await page.fill('#api-key', key);
    await page.click('#sign-in-form button[type=submit]');
    await page.locator('#sessions-body tr', { hasText: 'inspect-me' }).waitFor();

    // Runs in the page (this project's type check has no DOM lib, hence `window` as any).
    const storage = await page.evaluate(() => {
      const window = globalThis as any;
      return { session: Object.fromEntries(Object.entries(window.sessionStorage)) as Record<string, string>, local: window.localStorage.length as number, cookie: window.document.cookie as string };
    });
    expect(Object.values(storage.session)).toEqual([key]);
    expect(storage.local).toBe(0);
    expect(storage.cookie).toBe('');
    expect(await page.context().cookies()).toEqual([]);
    expect(page.url()).not.toContain(key);
  });

  it("lists only the key's tenant, by last activity, a page at a time, and searches on the server by title and metadata", async () => {
    // First page: the server's 50 most recently active, newest first.
    const first = await sessionIds();
    expect(first).toHaveLength(50);
    expect(first[0]).toBe('other-work');
    expect(first.slice(1, 4)).toEqual(['long-log', 'pruned-work', 'inspect-me']);
    await expect(page.locator('#sessions-count').textContent()).resolves.toContain('more on the server');
    await shot('01-sessions');

    await page.click('#sessions-more');
    await page.locator('#sessions-more').waitFor({ state: 'hidden' });
    const all = await sessionIds();
    expect(all).toHaveLength(FILLERS + 6);
    expect(all.slice(-2)).toEqual(['find-tools', 'find-census']);
    expect(new Set(all).size).toBe(all.length);
    expect(all).not.toContain('neighbours-secret');
    const activity = await page.locator('#sessions-body td.activity').evaluateAll((cells) => cells.map((c) => (c as any).title as string));
    expect(activity).toEqual([...activity].sort().reverse());

    // Title: the server's case-insensitive substring of metadata.title; the neighbour's "Fix the flaky build too" stays out.
    const byTitle = await search('FLAKY', '');
    expect(byTitle.get('title')).toBe('FLAKY');
    expect(await sessionIds()).toEqual(['inspect-me']);

    // Metadata: JSON containment, sent as the search's `metadata` parameter.
    const byMetadata = await search('', ' {"team": "payments"} ');
    expect(JSON.parse(byMetadata.get('metadata')!)).toEqual({ team: 'payments' });
    expect(byMetadata.has('title')).toBe(false);
    expect(await sessionIds()).toEqual(['inspect-me']);
    await expect(page.locator('#sessions-count').textContent()).resolves.toBe('1 session matching the search');

    // Both filters at once, and paging through a search keeps its filters.
    const both = await search('chore 1', '{"kind":"filler"}');
    expect([both.get('title'), both.get('metadata')]).toEqual(['chore 1', '{"kind":"filler"}']);
    expect((await sessionIds()).sort()).toEqual(['filler-01', ...Array.from({ length: 10 }, (_, i) => `filler-${10 + i}`)]);

    // Metadata that is not a JSON object is refused before any request; the list stays as it was.
    const before = await sessionIds();
    let sent = 0;
    const count = () => sent++;
    page.on('request', count);
    await page.fill('#search-metadata', '["payments"]');
    await page.click('#search-form button[type=submit]');
    await page.locator('#error', { hasText: 'Metadata must be a JSON object' }).waitFor();
    page.off('request', count);
    expect(sent).toBe(0);
    expect(await sessionIds()).toEqual(before);

    // A search the server refuses (a title over 200 characters) shows its problem and keeps the list; a valid one clears it.
    await search('x'.repeat(201), '');
    await page.locator('#error', { hasText: '400 validation_failed' }).waitFor();
    expect(await sessionIds()).toEqual(before);
    await search('', '{"team":"payments"}');
    await expect(page.locator('#error').textContent()).resolves.toBe('');
    expect(await sessionIds()).toEqual(['inspect-me']);
  });

  it('searches what was said or run across sessions: marked snippets, more hits with the cursor, a hit opens its timeline at its seq; and inside one session', async () => {
    // The worker indexes about a second after an append; the long session's 10,000 events take longer: wait for the API to find them.
    const found = async (q: string) => (await client.request('GET', `/v1/search?${new URLSearchParams({ q, limit: '100' })}`, { key })).body.hits as any[];
    // Polled, not timed: a slow machine only waits longer (the test's own limit is above this one).
    await waitFor(async () => (await found('quokka')).length === QUOKKA_HITS && (await found('7777')).length === 1, 'the seeded sessions to be indexed', 150_000);
    const searches = () => {
      const sent: URLSearchParams[] = [];
      const listener = (request: Request) => {
        const url = new URL(request.url());
        if (/^\/v1\/(sessions\/[^/]+\/)?search$/.test(url.pathname)) sent.push(url.searchParams);
      };
      page.on('request', listener);
      return { sent, stop: () => page.off('request', listener) };
    };
    const hits = page.locator('#find-results .hit');
    const find = async (q: string) => {
      await page.fill('#find-q', q);
      await page.click('#find-form button[type=submit]');
    };

    // A query without a word: the server's problem is shown, nothing is listed.
    await find('!!!');
    await page.locator('#error', { hasText: '400 invalid_query' }).waitFor();
    expect(await page.locator('#find-view').isHidden()).toBe(true);

    const watched = searches();
    try {
      await find('quokka');
      await page.locator('#find-count', { hasText: '20 hits for “quokka”, more on the server' }).waitFor();
      await expect(page.locator('#error').textContent()).resolves.toBe('');
      expect(await page.locator('#sessions-list').isHidden()).toBe(true);
      expect(await hits.count()).toBe(20);
      // Every highlight is the word, whatever precedes it in the snippet (the answer starts with characters outside the BMP).
      const marks = await page.locator('#find-results .snippet mark').allTextContents();
      expect(marks.length).toBeGreaterThanOrEqual(20);
      expect(new Set(marks)).toEqual(new Set(['quokka']));

      await page.click('#find-more');
      await page.locator('#find-count', { hasText: `${QUOKKA_HITS} hits for “quokka”` }).waitFor();
      expect(await page.locator('#find-more').isHidden()).toBe(true);
      expect(watched.sent.map((p) => [p.get('q'), p.get('limit'), p.has('cursor')])).toEqual([
        ['quokka', '20', false],
        ['quokka', '20', true],
      ]);
      const listed = await hits.evaluateAll((items) => items.map((i) => `${(i as any).dataset.session}@${(i as any).dataset.seq}`));
      expect(new Set(listed).size).toBe(QUOKKA_HITS);
      expect(new Set(listed.map((h) => h.split('@')[0]))).toEqual(new Set(['find-census', 'find-tools']));
      expect(new Set(await page.locator('#find-results .snippet mark').allTextContents())).toEqual(new Set(['quokka']));

      // A hit says where it is: title, session, seq, role or event type, part and tool, time. Its snippet is text: no element from its content.
      const toolCall = hits.filter({ hasText: 'tool_call' });
      await expect(toolCall.locator('.hit-head').textContent()).resolves.toMatch(/^Zoo toolingfind-toolsseq 3assistant · tool_call · grep.+/);
      const said = hits.filter({ hasText: 'kangaroo' });
      await expect(said.locator('.snippet').textContent()).resolves.toBe(ANSWER);
      await expect(said.locator('.snippet mark').allTextContents()).resolves.toEqual(['quokka', 'quokka']);
      await expect(said.locator('.snippet').evaluate((s) => Array.from(s.childNodes, (n: any) => n.nodeName))).resolves.toEqual(['#text', 'MARK', '#text', 'MARK', '#text']);
      expect(await page.locator('#find-results img, #find-results b').count()).toBe(0);
      await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
      await shot('09-search');

      // A hit opens its session's timeline at its seq, selected; the session's search lists the same word's hits there.
      const note = 20;
      await hits.filter({ hasText: `Census note ${note}:` }).click();
      await page.locator('#session-title', { hasText: 'find-census' }).waitFor();
      await page.locator('#event-heading', { hasText: `seq ${note + 1} · message.added` }).waitFor();
      await expect(page.locator('#event-detail').textContent()).resolves.toContain(`Census note ${note}: one quokka`);
      await expect(page.locator(`.row[data-seq="${note + 1}"]`).getAttribute('class')).resolves.toMatch(/\bselected\b/);
      await expect(page.locator('#session-find-q').inputValue()).resolves.toBe('quokka');
      await page.locator('#session-find-count', { hasText: '20 hits for “quokka”, more on the server' }).waitFor();
      await page.click('#session-find-more');
      await page.locator('#session-find-count', { hasText: `${CENSUS_NOTES} hits for “quokka”` }).waitFor();
      expect(watched.sent.slice(2).map((p) => [p.get('q'), p.has('cursor')])).toEqual([
        ['quokka', false],
        ['quokka', true],
      ]);
      // Every hit's row is marked in the timeline.
      await expect(page.locator('.row[data-seq="2"]').getAttribute('class')).resolves.toMatch(/\bhit\b/);
      await expect(page.locator('.row[data-seq="1"]').getAttribute('class')).resolves.not.toMatch(/\bhit\b/);

      // Inside the session (GET /v1/sessions/{id}/search): a new search jumps to its best hit; a click to any other.
      const inside = page.locator('#session-find-results .hit');
      await page.fill('#session-find-q', 'lighthouse');
      await page.click('#session-find-form button[type=submit]');
      await page.locator('#session-find-count', { hasText: '2 hits for “lighthouse”' }).waitFor();
      expect(watched.sent.at(-1)!.get('q')).toBe('lighthouse');
      const seqs = (await inside.evaluateAll((items) => items.map((i) => Number((i as any).dataset.seq)))) as number[];
      expect([...seqs].sort((a, b) => a - b)).toEqual(LIGHTHOUSE_NOTES.map((n) => n + 1));
      await page.locator('#event-heading', { hasText: `seq ${seqs[0]} · ` }).waitFor();
      await expect(page.locator('#session-find-results .snippet mark').allTextContents()).resolves.toEqual(['lighthouse', 'lighthouse']);
      await inside.nth(1).click();
      await page.locator('#event-heading', { hasText: `seq ${seqs[1]} · ` }).waitFor();
      await expect(page.locator('#jump-seq').inputValue()).resolves.toBe(String(seqs[1]));
      for (const seq of seqs) await expect(page.locator(`.row[data-seq="${seq}"]`).getAttribute('class')).resolves.toMatch(/\bhit\b/);
      await expect(page.locator('.row[data-seq="2"]').getAttribute('class')).resolves.not.toMatch(/\bhit\b/);
      await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
      await shot('10-session-search');

      // Back: the hits are still there. One deep in the 10,000-event session opens its timeline scrolled to the hit.
      await page.click('#back');
      await expect(hits.count()).resolves.toBe(QUOKKA_HITS);
      await find('7777');
      await page.locator('#find-count', { hasText: '1 hit for “7777”' }).waitFor();
      await hits.first().click();
      const row = page.locator('.row[data-seq="7778"]');
      await row.locator('.text', { hasText: 'bulk message 7777' }).waitFor();
      await page.locator('#event-heading', { hasText: 'seq 7778 · message.added' }).waitFor();
      await expect(row.getAttribute('class')).resolves.toMatch(/\bselected\b/);
      const [rowBox, timelineBox] = [await row.boundingBox(), await page.locator('#timeline').boundingBox()];
      expect(rowBox!.y).toBeGreaterThanOrEqual(timelineBox!.y);
      expect(rowBox!.y + rowBox!.height).toBeLessThanOrEqual(timelineBox!.y + timelineBox!.height);
      expect(await page.locator('.row').count()).toBeLessThan(100);

      // Clear: the list of sessions again.
      await page.click('#back');
      await page.click('#find-clear');
      await page.locator('#sessions-list').waitFor();
      expect(await page.locator('#find-view').isHidden()).toBe(true);
      await expect(page.locator('#find-count').textContent()).resolves.toBe('');
    } finally {
      watched.stop();
    }
  }, 240_000);

  it('steps through the timeline with the pivot and compacted range marked', async () => {
    await page.locator('#sessions-body tr', { hasText: 'inspect-me' }).click();
    await page.locator('#session-title', { hasText: 'inspect-me' }).waitFor();
    await page.locator('.row[data-seq="1"] .type', { hasText: 'session.created' }).waitFor();
    await expect(page.locator('#session-info').textContent()).resolves.toBe('gpt-4.1 · Fix the flaky build');

    await page.locator('.row[data-seq="1"]').click();
    await expect(page.locator('#event-heading').textContent()).resolves.toContain('seq 1 · session.created');
    await page.click('#step-next');
    await page.click('#step-next');
    await expect(page.locator('#event-heading').textContent()).resolves.toContain('seq 3 · message.added');
    await expect(page.locator('#event-detail').textContent()).resolves.toContain('npm run build');
    await page.keyboard.press('ArrowDown');
    await expect(page.locator('#event-heading').textContent()).resolves.toContain(`seq ${refSeq}`);
    await expect(page.locator('#event-refs').textContent()).resolves.toContain(refId);
    await page.click('#step-prev');
    await expect(page.locator('#event-heading').textContent()).resolves.toContain('seq 3 ·');
    await expect(page.locator('.row[data-seq="2"]').getAttribute('class')).resolves.toContain('covered');

    await page.fill('#jump-seq', String(pivotSeq));
    await page.click('#jump');
    const pivot = page.locator(`.row[data-seq="${pivotSeq}"]`);
    await expect(pivot.getAttribute('class')).resolves.toMatch(/\bpivot\b/);
    await expect(pivot.textContent()).resolves.toContain('compaction.completed');
    await expect(page.locator(`.row[data-seq="${pivotSeq + 1}"]`).getAttribute('class')).resolves.not.toContain('covered');
    await expect(page.locator('#event-detail').textContent()).resolves.toContain('coveredThroughSeq');
    await shot('02-timeline');
  });

  it('shows what the model sees at the head and at a chosen seq, in each format, with the token bar', async () => {
    await page.click('.tabs button[data-tab="context"]');
    await page.locator('#ctx-tokens', { hasText: 'neutral at head' }).waitFor();
    const tokens = await page.locator('#ctx-tokens').textContent();
    expect(tokens).toMatch(/[\d,]+ tokens .*usable [\d,]+ · window 16,000 · compaction threshold [\d,]+/);
    await expect(page.locator('#ctx-messages').textContent()).resolves.toContain('compaction_summary');
    const bar = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const width = (id: string) => parseFloat(doc.getElementById(id).style.width || '0');
      return { fill: width('token-fill'), threshold: parseFloat(doc.getElementById('token-threshold').style.left), hidden: doc.getElementById('token-threshold').hidden as boolean };
    });
    expect(bar.fill).toBeGreaterThan(0);
    expect(bar.threshold).toBeGreaterThan(bar.fill);
    expect(bar.hidden).toBe(false);
    await shot('03-context-head');

    for (const format of ['anthropic', 'openai-responses', 'openai']) {
      await page.selectOption('#ctx-format', format);
      await page.locator('#ctx-tokens', { hasText: `${format} at head` }).waitFor();
      await expect(page.locator('#ctx-messages').textContent()).resolves.toContain('careful coding agent');
    }
    await expect(page.locator('#ctx-messages .role').first().textContent()).resolves.toBe('system');

    // Time travel: before the pivot, the tool output's trimmed view is in the window.
    await page.selectOption('#ctx-format', 'neutral');
    await page.fill('#ctx-at', String(refSeq));
    await page.click('#ctx-load');
    await page.locator('#ctx-tokens', { hasText: `neutral at seq ${refSeq}` }).waitFor();
    await expect(page.locator('#ctx-messages').textContent()).resolves.toContain('Why does the build fail?');
    await expect(page.locator('#ctx-messages').textContent()).resolves.not.toContain('compaction_summary');
    await shot('04-context-at-seq');
  });

  it('opens a compaction: before and after, summary, tokens saved, retention, strategy and model, the summary record', async () => {
    await page.click('.tabs button[data-tab="compactions"]');
    const card = page.locator('#compactions-list .card').filter({ has: page.locator('h3', { hasText: new RegExp(`pivot seq ${pivotSeq}$`) }) });
    await card.waitFor();
    const text = (await card.textContent())!;
    expect(text).toContain(`pivot seq ${pivotSeq}`);
    expect(text).toContain('strategy retain-summary');
    expect(text).toContain('model heuristic');
    expect(text).toMatch(/tokens [\d,]+ → [\d,]+/);
    expect(text).toMatch(/saved [\d,]+/);
    expect(text).toContain('## Goal');
    expect(text).toMatch(/retention [\d.]+% \([\d,]+ of [\d,]+ critical facts/);
    // The record (GET /compactions?include=record), folded until asked for.
    await shot('05-compaction');
    const record = card.locator('details.record');
    await expect(record.locator('summary').textContent()).resolves.toMatch(/^summary record: .*goal \d+/);
    await record.locator('summary').click();
    await expect(record.locator('pre').textContent()).resolves.toContain('"userMessages"');

    await card.getByText('Context before').click();
    await page.locator('#ctx-tokens', { hasText: `neutral at seq ${pivotSeq - 1}` }).waitFor();
    await expect(page.locator('#ctx-messages').textContent()).resolves.not.toContain('compaction_summary');
    await page.click('.tabs button[data-tab="compactions"]');
    await card.getByText('Context after').click();
    await page.locator('#ctx-tokens', { hasText: `neutral at seq ${pivotSeq} ` }).waitFor();
    await expect(page.locator('#ctx-messages').textContent()).resolves.toContain('compaction_summary');
  });

  it('opens a tool output from its event: reads line ranges and greps', async () => {
    await page.click('.tabs button[data-tab="timeline"]');
    await page.fill('#jump-seq', String(refSeq));
    await page.click('#jump');
    await page.locator('#event-refs button', { hasText: refId }).click();
    await page.locator('#ref-info', { hasText: 'lines 1–200 of 3,000' }).waitFor();
    await expect(page.locator('#ref-lines').textContent()).resolves.toContain('line 1: ok');
    await page.click('#ref-next');
    await page.locator('#ref-info', { hasText: 'lines 201–400 of 3,000' }).waitFor();
    await expect(page.locator('#ref-lines').textContent()).resolves.toContain('line 201: ok');

    await page.fill('#grep-pattern', 'error DISK');
    await page.check('#grep-icase');
    await page.click('#grep-run');
    await page.locator('#grep-results p', { hasText: '6 matches' }).waitFor();
    await expect(page.locator('#grep-results').textContent()).resolves.toContain('line 500: ERROR disk quota exceeded');
    await page.locator('.grep-match', { hasText: 'line 1500: ERROR' }).locator('span', { hasText: 'line 1500' }).click();
    await page.locator('#ref-info', { hasText: 'lines 1,500–1,699' }).waitFor();
    await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
    await shot('06-tool-output');
  });

  it('shows new events live from the event stream, closes it while the tab is hidden, and resumes or reconnects from the last seq', async () => {
    // Opened again, so that the opening of its stream is watched.
    await page.click('#back');
    await streams.allClosed('the session view to close its stream');
    const head = (await client.request('GET', '/v1/sessions/inspect-me', { key })).body.headSeq;
    await page.locator('#sessions-body tr', { hasText: 'inspect-me' }).click();
    await page.locator('#live-status', { hasText: `live · head seq ${head}` }).waitFor();
    await page.locator('.row[data-seq="1"] .type', { hasText: 'session.created' }).waitFor();
    expect(streams.open()).toEqual([{ sessionId: 'inspect-me', afterSeq: head }]);
    const watched = eventReads(page, 'inspect-me');
    try {
      await client.append(key, 'inspect-me', { events: [userMessage('<img src=x onerror=alert(1)> appended while watching')] });
      await page.locator('#live-status', { hasText: `live · head seq ${head + 1}` }).waitFor();
      // It came on the stream: three poll intervals of page time pass without a single read of /events.
      await page.clock.runFor(3 * POLL_MS);
      await page.evaluate(() => 0);
      expect(watched.reads).toEqual([]);
      await page.fill('#jump-seq', String(head + 1));
      await page.click('#jump');
      const row = page.locator(`.row[data-seq="${head + 1}"]`);
      await expect(row.textContent()).resolves.toContain('<img src=x onerror=alert(1)> appended while watching');
      // Rendered as text: no element was created from the event's content.
      expect(await page.locator('#timeline img').count()).toBe(0);

      // Hidden: the stream is closed and nothing is asked, however long; shown again: a stream from the last seq catches up.
      const opened = streams.all.length;
      await setTabHidden(page, true);
      await page.locator('#live-status', { hasText: 'paused while the tab is hidden' }).waitFor();
      await streams.allClosed('the hidden tab to abort its stream');
      await client.append(key, 'inspect-me', { events: [userMessage('appended while hidden')] });
      await page.clock.runFor(10 * POLL_MS);
      await page.evaluate(() => 0);
      expect(watched.reads).toEqual([]);
      expect(streams.all).toHaveLength(opened);
      await expect(page.locator('#live-status').textContent()).resolves.toBe(`paused while the tab is hidden · head seq ${head + 1}`);

      await setTabHidden(page, false);
      await page.locator('#live-status', { hasText: `live · head seq ${head + 2}` }).waitFor();
      expect(streams.open()).toEqual([{ sessionId: 'inspect-me', afterSeq: head + 1 }]);
      expect(streams.all).toHaveLength(opened + 1);
      await page.fill('#jump-seq', String(head + 2));
      await page.click('#jump');
      await expect(page.locator(`.row[data-seq="${head + 2}"]`).textContent()).resolves.toContain('appended while hidden');

      // A stream that fails is opened again after a backoff (page time), from the last seq.
      await page.route(isStream, (route) => route.abort('connectionreset'), { times: 1 });
      await setTabHidden(page, true);
      await setTabHidden(page, false);
      await page.locator('#live-status', { hasText: `reconnecting in 1 s` }).waitFor();
      await client.append(key, 'inspect-me', { events: [userMessage('appended while reconnecting')] });
      await page.clock.runFor(1000);
      await page.locator('#live-status', { hasText: `live · head seq ${head + 3}` }).waitFor();
      expect(streams.all.slice(-2).map((s) => s.afterSeq)).toEqual([head + 2, head + 2]);
      expect(streams.open()).toEqual([{ sessionId: 'inspect-me', afterSeq: head + 2 }]);
      expect(watched.reads).toEqual([]);
    } finally {
      watched.stop();
    }
  });

  it('falls back to polling after the last seq when the event stream is refused', async () => {
    const head = (await client.request('GET', '/v1/sessions/inspect-me', { key })).body.headSeq;
    // The tenant's streams all taken: the stream answers 429 too_many_streams, as the API does beyond SSE_MAX_STREAMS_PER_TENANT.
    await page.route(isStream, (route) =>
      route.fulfill({
        status: 429,
        headers: { 'retry-after': '5' },
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'about:blank', title: 'Too Many Requests', status: 429, code: 'too_many_streams', detail: 'This tenant already has 20 event streams open' }),
      }),
    );
    const watched = eventReads(page, 'inspect-me');
    try {
      // Shown again, the page asks for a stream and is refused: it polls at once instead, and says so.
      const catchUp = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/sessions/inspect-me/events' && new URL(r.url()).searchParams.get('afterSeq') === String(head));
      await setTabHidden(page, true);
      await setTabHidden(page, false);
      await page.locator('#live-status', { hasText: `live, polling every 2 s (event stream: 429 too_many_streams) · head seq ${head}` }).waitFor();
      await catchUp;
      expect(streams.open()).toEqual([]);

      await client.append(key, 'inspect-me', { events: [userMessage('appended while polling')] });
      await page.clock.runFor(POLL_MS);
      await page.locator('#live-status', { hasText: `head seq ${head + 1}` }).waitFor();
      await page.fill('#jump-seq', String(head + 1));
      await page.click('#jump');
      await expect(page.locator(`.row[data-seq="${head + 1}"]`).textContent()).resolves.toContain('appended while polling');
      // The catch-up poll had answered before the append: a poll of the interval brought it. Each asks only for what follows the known head.
      const polls = watched.reads.filter((r) => r.types === null && r.afterSeq >= head);
      expect(polls.length).toBeGreaterThanOrEqual(2);
      expect(polls.every((r) => r.limit === 500)).toBe(true);
      expect(polls.map((r) => r.afterSeq)).toContain(head);

      // Hidden, the fallback does not poll either.
      await setTabHidden(page, true);
      await page.locator('#live-status', { hasText: 'paused while the tab is hidden' }).waitFor();
      watched.reads.length = 0;
      await page.clock.runFor(10 * POLL_MS);
      await page.evaluate(() => 0);
      expect(watched.reads).toEqual([]);
      await setTabHidden(page, false);
      await page.locator('#live-status', { hasText: `live, polling every 2 s (event stream: 429 too_many_streams) · head seq ${head + 1}` }).waitFor();
      expect(watched.reads[0]).toEqual({ afterSeq: head + 1, limit: 500, types: null });
    } finally {
      watched.stop();
      await page.unroute(isStream);
    }
  });

  it('marks pruned and archived tool results, and the events that pruned and archived them', async () => {
    await page.click('#back');
    await page.click('#search-clear');
    const opening = eventReads(page, 'pruned-work');
    const isMarkRead = (request: Request) => request.url().includes('/v1/sessions/pruned-work/events?') && new URL(request.url()).searchParams.has('types');
    const marksRead = page.waitForRequest(isMarkRead, { timeout: 30_000 });
    await page.locator('#sessions-body tr', { hasText: 'pruned-work' }).click();
    await page.locator('#session-title', { hasText: 'pruned-work' }).waitFor();
    // The marks do not wait for the timeline: every prune and archive event is read at open.
    const markReads = () => opening.reads.filter((r) => r.types !== null);
    await marksRead;
    expect(markReads()).toEqual([{ afterSeq: 0, limit: 500, types: 'tool_outputs.pruned,tool_results.archived' }]);
    opening.stop();
    const events = await client.allEvents(key, 'pruned-work');
    const resultSeq = (callId: string) => events.find((e) => e.data.message?.parts?.some((p: any) => p.type === 'tool_result' && p.callId === callId)).seq;
    const classOf = async (seq: number) => {
      await page.fill('#jump-seq', String(seq));
      await page.click('#jump');
      const row = page.locator(`.row[data-seq="${seq}"]`);
      await row.locator('.type', { hasText: /\./ }).waitFor();
      return (await row.getAttribute('class'))!.split(' ');
    };
    expect(prunedCallIds.length).toBeGreaterThan(0);
    expect(archivedCallIds.length).toBeGreaterThan(0);
    for (const callId of prunedCallIds) expect(await classOf(resultSeq(callId))).toContain('pruned');
    for (const callId of archivedCallIds) expect(await classOf(resultSeq(callId))).toContain('archived');
    const kept = ['use-1', 'use-2', 'use-3', 'use-4', 'use-5'].filter((c) => !prunedCallIds.includes(c) && !archivedCallIds.includes(c));
    for (const callId of kept) expect(await classOf(resultSeq(callId))).toEqual(expect.not.arrayContaining(['pruned', 'archived']));
    expect(await classOf(events.find((e) => e.type === 'tool_outputs.pruned').seq)).toContain('pruned');
    expect(await classOf(events.find((e) => e.type === 'tool_results.archived').seq)).toContain('archived');
    await shot('08-pruned-archived');

    // What the prune and the archive cost in prompt cache, above the compaction cards.
    await page.click('.tabs button[data-tab="compactions"]');
    const costs = page.locator('#compactions-cache');
    await costs.locator('div', { hasText: 'prune at seq' }).waitFor();
    const costText = (await costs.textContent())!;
    expect(costText).toContain('prompt cache: hit ratio');
    expect(costText).toContain(`prune at seq ${events.find((e) => e.type === 'tool_outputs.pruned').seq}`);
    expect(costText).toContain(`archive at seq ${events.find((e) => e.type === 'tool_results.archived').seq}`);
    await page.click('.tabs button[data-tab="timeline"]');
  });

  it(`virtualizes a ${LONG_EVENTS.toLocaleString('en-US')}-event timeline: a bounded number of rows in the DOM, pages fetched as they scroll into view`, async () => {
    expect(streams.open()).toEqual([{ sessionId: 'pruned-work', afterSeq: expect.any(Number) }]);
    await page.click('#back');
    await streams.allClosed('closing the session view to abort its stream');
    const watched = eventReads(page, 'long-log');
    try {
      await page.locator('#sessions-body tr', { hasText: 'long-log' }).click();
      const head = LONG_EVENTS + 1;
      await page.locator('#live-status', { hasText: `head seq ${head.toLocaleString('en-US')}` }).waitFor();
      await page.locator('.row[data-seq="2"] .text', { hasText: 'bulk message 1' }).waitFor();
      const rows = () => page.locator('.row').count();
      expect(await rows()).toBeLessThan(100);

      for (const fraction of [0.25, 0.5, 0.75, 1]) {
        const top = await page.locator('#timeline').evaluate((el, f) => {
          el.scrollTop = f * el.scrollHeight;
          return el.scrollTop;
        }, fraction);
        const seq = Math.min(head, Math.floor(top / 24) + 1);
        await page.locator(`.row[data-seq="${seq}"] .text`, { hasText: `bulk message ${seq - 1}` }).waitFor();
        expect(await rows()).toBeLessThan(100);
      }
      await page.locator(`.row[data-seq="${head}"] .text`, { hasText: `bulk message ${LONG_EVENTS}` }).waitFor();
      // Only the pages that came into view were read (aligned pages of 500), never the whole log.
      const pages = watched.reads.filter((r) => r.afterSeq < head && r.types === null);
      expect(pages.every((r) => r.limit === 500 && r.afterSeq % 500 === 0)).toBe(true);
      expect(new Set(pages.map((r) => r.afterSeq)).size).toBe(pages.length);
      expect(pages.length).toBeLessThanOrEqual(10);
      expect(pages.map((r) => r.afterSeq)).toEqual(expect.arrayContaining([0, LONG_EVENTS - 500]));
      await shot('07-long-timeline');
    } finally {
      watched.stop();
    }
  });

  it('signs out: the stream closes, the key leaves sessionStorage; no CSP violation or page error happened', async () => {
    expect(streams.open()).toEqual([{ sessionId: 'long-log', afterSeq: LONG_EVENTS + 1 }]);
    await page.click('#sign-out');
    await page.locator('#sign-in-view').waitFor();
    await streams.allClosed('signing out to abort the stream');
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(0);
    expect(consoleProblems).toEqual([]);
  });
});
