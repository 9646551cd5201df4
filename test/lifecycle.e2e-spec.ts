import { request as httpRequest } from 'node:http';
import { Client } from './support/client';
import { connectAs, createTestDatabase } from './support/database';
import { ADMIN_TOKEN } from './support/env';
import { LlmStub, startLlmStub } from './support/llm-stub';
import { startRedis, stopRedis } from './support/redis-server';
import { within } from './support/awaiting';
import { awaitEvent } from './support/sse';
import { awaitSupervised, exited, freePort, logLines, ProcessHandle, startProcess, startReady, startService, startSupervisor, TestService } from './support/service';

/**
 * How the processes start, stop and log, as an operator meets them: real
 * API, worker and supervisor processes, real signals, real PostgreSQL and
 * Redis (private ones where a test takes them away).
 */
const SHUTDOWN_TIMEOUT_MS = 4000;
/** Process exit, scheduling and output flushing on a loaded 2-core machine. */
const SLACK_MS = 1500;

async function stopTimed(handle: ProcessHandle, signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  handle.child.kill(signal);
  await exited(handle.child);
  return { code: handle.child.exitCode, ms: Date.now() - started };
}

function userMessage(id: string, text: string) {
  return { id, type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text }] } } };
}

/** An upload that sends its first kilobyte and then stalls, as a slow or hung client would. */
function stalledUpload(baseUrl: string, key: string, sessionId: string) {
  const url = new URL(`${baseUrl}/v1/sessions/${sessionId}/tool-outputs`);
  const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain', 'transfer-encoding': 'chunked' } });
  const outcome = new Promise<string>((resolve) => {
    req.on('response', (res) => resolve(`status ${res.statusCode}`));
    req.on('error', (error) => resolve(`error ${error.message}`));
  });
  req.write('x'.repeat(1024) + '\n');
  return { req, outcome };
}

describe('start-up failures', () => {
  it('a PostgreSQL that does not answer: one line naming DATABASE_URL, its host and port and the cause; exit 1', async () => {
    const port = await freePort();
    const api = startProcess('api', { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nowhere`, PORT: String(await freePort()), LOG_FORMAT: 'json' });
    await exited(api.child);
    expect(api.child.exitCode).toBe(1);
    const lines = api.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    const [line] = logLines(api.output());
    expect(line.level).toBe('fatal');
    expect(line.msg).toContain('DATABASE_URL');
    expect(line.msg).toContain(`127.0.0.1:${port}`);
    expect(line.msg).toMatch(/ECONNREFUSED/);
    expect(api.output()).not.toMatch(/\n\s+at /);
  });

  it('a worker whose Redis does not answer: one line naming REDIS_URL, its host and port and the cause; exit 1', async () => {
    const db = await createTestDatabase();
    const port = await freePort();
    const worker = startProcess('worker', { DATABASE_URL: db.url, REDIS_URL: `redis://127.0.0.1:${port}`, WORKER_PORT: '0', LOG_FORMAT: 'json', LOG_LEVEL: 'warn' });
    await exited(worker.child);
    await db.drop();
    expect(worker.child.exitCode).toBe(1);
    const lines = logLines(worker.output());
    expect(lines).toHaveLength(1);
    expect(lines[0].msg).toContain('REDIS_URL');
    expect(lines[0].msg).toContain(`127.0.0.1:${port}`);
    expect(lines[0].msg).toMatch(/ECONNREFUSED/);
  });

  it('a migration that fails (run in a thread of its own): one line naming DATABASE_URL and the error with its code; exit 1', async () => {
    const db = await createTestDatabase();
    const owner = await connectAs(db.url);
    // The first migration runs again over the schema it made: its first CREATE fails.
    await owner.query("DELETE FROM schema_migrations WHERE name = 'Foundation1763700000000'");
    await owner.end();
    const api = startProcess('api', { DATABASE_URL: db.url, PORT: String(await freePort()), LOG_FORMAT: 'json' });
    await exited(api.child);
    await db.drop();
    expect(api.child.exitCode).toBe(1);
    const lines = logLines(api.output());
    expect(lines).toHaveLength(1);
    expect(lines[0].level).toBe('fatal');
    expect(lines[0].msg).toContain('DATABASE_URL');
    // The SQLSTATE crosses from the migration thread with the message.
    expect(lines[0].msg).toContain('42723: function "current_tenant" already exists');
    expect(api.output()).not.toMatch(/\n\s+at /);
  });

  it('a bad variable: a message naming it, exit 1, no stack trace', async () => {
    const api = startProcess('api', { DATABASE_URL: 'mysql://nope', SHUTDOWN_TIMEOUT_MS: 'soon' });
    await exited(api.child);
    expect(api.child.exitCode).toBe(1);
    expect(api.output()).toContain('DATABASE_URL');
    expect(api.output()).toContain('SHUTDOWN_TIMEOUT_MS');
    expect(api.output()).not.toMatch(/\n\s+at /);
  });

  it('timeouts that contradict each other: a message naming both variables, exit 1', async () => {
    const api = startProcess('api', { HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_HEADERS_TIMEOUT_MS: '10000' });
    await exited(api.child);
    expect(api.child.exitCode).toBe(1);
    expect(api.output()).toContain('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  });
});

describe('graceful shutdown', () => {
  let service: TestService;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    service = await startService({ worker: false, env: { SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS), LOG_LEVEL: 'log' } });
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant());
  });
  afterAll(() => service?.stop());

  /** A fresh API process on the same database, the previous one gone. */
  async function restartApi(): Promise<void> {
    service.api = await startReady('api', service.env, `${service.baseUrl}/healthz`);
  }

  it('the API under appends drains within the deadline with exit 0, and every acknowledged append is in the log once', async () => {
    const sessions = await Promise.all([1, 2, 3, 4].map((i) => client.createSession(key, { id: `drain-${i}` })));
    const acknowledged: string[] = [];
    let stop = false;
    let underWay = () => undefined as void;
    const fortieth = new Promise<void>((resolve) => (underWay = resolve));
    const writers = sessions.map(async (session, w) => {
      for (let n = 0; !stop; n++) {
        const id = `w${w}-${n}`;
        const res = await client.append(key, session.id, { events: [userMessage(id, `message ${n}`)] }).catch(() => undefined);
        if (res?.status === 201 && acknowledged.push(`${session.id}/${id}`) === 40) underWay();
        else if (res && res.status !== 201) break;
      }
    });
    const stopped = Promise.all(writers).then(() => Promise.reject(new Error('the writers stopped before 40 appends were acknowledged')));
    await within(Promise.race([fortieth, stopped]), '40 acknowledged appends');
    const { code, ms } = await stopTimed(service.api);
    stop = true;
    await Promise.all(writers);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + SLACK_MS);

    await restartApi();
    const stored = new Map<string, number>();
    for (const session of sessions) {
      for (const event of await client.allEvents(key, session.id)) {
        const id = `${session.id}/${event.id}`;
        stored.set(id, (stored.get(id) ?? 0) + 1);
      }
    }
    for (const id of acknowledged) expect(stored.get(id)).toBe(1);
  });

  it('a stalled upload does not hold the API: it is cut, the API exits 0 within the deadline', async () => {
    const session = await client.createSession(key, { id: 'stalled-upload' });
    const upload = stalledUpload(service.baseUrl, key, session.id);
    await new Promise((r) => setTimeout(r, 300));
    const { code, ms } = await stopTimed(service.api);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + SLACK_MS);
    expect(await upload.outcome).toMatch(/error|status 5/);
    await restartApi();
  });

  it('a second signal exits at once, with a non-zero code', async () => {
    const session = await client.createSession(key, { id: 'second-signal' });
    const upload = stalledUpload(service.baseUrl, key, session.id);
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    service.api.child.kill('SIGTERM');
    // Signals within a second are one keypress seen twice (terminal and npm); this one is a second request.
    await new Promise((r) => setTimeout(r, 1100));
    service.api.child.kill('SIGTERM');
    await exited(service.api.child);
    expect(service.api.child.exitCode).toBe(1);
    expect(Date.now() - started).toBeLessThan(SHUTDOWN_TIMEOUT_MS / 2);
    await upload.outcome;
    await restartApi();
  });
});

describe('worker shutdown', () => {
  let stub: LlmStub;

  beforeAll(async () => {
    stub = await startLlmStub();
  });
  afterAll(() => stub?.close());

  it('mid-job: the worker exits within the deadline and the interrupted compaction completes once on another worker', async () => {
    const service = await startService({
      env: { SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS), OPENAI_BASE_URL: `${stub.url}/v1`, OPENAI_API_KEY: 'sk-test', WORKER_LOCK_DURATION_MS: '3000', WORKER_STALLED_INTERVAL_MS: '1000', SUMMARIZER_TIMEOUT_MS: '2500' },
    });
    try {
      const client = new Client(service.baseUrl);
      const { key } = await client.createTenant();
      const session = await client.createSession(key, { id: 'mid-job', config: { compaction: { summarizer: 'openai', model: 'stub-slow-20000' } } });
      for (let i = 0; i < 6; i++) await client.append(key, session.id, { events: [userMessage(`u${i}`, `step ${i}: edit src/file${i}.ts`)] });
      const from = stub.requests.length;
      const requested = await client.request('POST', `/v1/sessions/${session.id}/compactions`, { key, body: {} });
      expect(requested.status).toBe(202);
      await stub.received((_, i) => i >= from, 'the summarizer call');
      const { code, ms } = await stopTimed(service.workers[0]);
      expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + SLACK_MS);
      expect(code).toBe(0);

      await service.startWorker();
      await awaitEvent(service.baseUrl, key, session.id, (e) => e.type === 'compaction.completed', 'the compaction finished by the second worker', 30_000);
      const events = await client.allEvents(key, session.id);
      expect(events.filter((e) => e.type === 'compaction.completed')).toHaveLength(1);
      const state = await client.request('GET', `/v1/sessions/${session.id}`, { key });
      expect(state.body.compaction).toMatchObject({ pendingMarkerSeq: null });
    } finally {
      await service.stop();
    }
  });

  it('with Redis gone: the worker exits within the deadline, and the outage is logged per interval, not per retry', async () => {
    const redisPort = await freePort();
    const redis = await startRedis(redisPort);
    const service = await startService({ worker: false, redisUrl: `redis://127.0.0.1:${redisPort}`, env: { SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS), LOG_LEVEL: 'log' } });
    try {
      const worker = await service.startWorker();
      await stopRedis(redis);
      // About 15 reconnect attempts at the capped 200 ms-2 s backoff.
      await new Promise((r) => setTimeout(r, 6000));
      const outageLines = logLines(worker.output()).filter((l) => /Redis/.test(l.msg) && l.level === 'warn');
      expect(outageLines.length).toBeGreaterThan(0);
      // One first report per connection (worker, GC, producer), no repeats within the 30 s interval.
      expect(outageLines.length).toBeLessThanOrEqual(4);
      const { code, ms } = await stopTimed(worker);
      expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + SLACK_MS);
      expect(code).toBe(0);
    } finally {
      await service.stop();
    }
  });
});

describe('the npm start supervisor', () => {
  it('passes SIGTERM to API and worker and exits 0 once both drained, within the deadline', async () => {
    const { supervisor, port, workerPort, db } = await startSupervisor(SHUTDOWN_TIMEOUT_MS);
    try {
      await awaitSupervised(supervisor, port, workerPort);
      const { code, ms } = await stopTimed(supervisor);
      expect(code).toBe(0);
      expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + SLACK_MS);
      const stopped = logLines(supervisor.output()).filter((l) => l.msg === 'stopped').map((l) => l.service);
      expect(stopped.sort()).toEqual(['api', 'supervisor', 'worker']);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    } finally {
      supervisor.child.kill('SIGKILL');
      await db.drop();
    }
  });
});

describe('structured logs and worker observability', () => {
  let stub: LlmStub;
  let service: TestService;
  let client: Client;

  beforeAll(async () => {
    stub = await startLlmStub();
    service = await startService({ env: { LOG_LEVEL: 'verbose', LOG_FORMAT: 'json', OPENAI_API_KEY: 'sk-summarizer-secret-0000', OPENAI_BASE_URL: `${stub.url}/v1` } });
    client = new Client(service.baseUrl);
  });
  afterAll(async () => {
    await service?.stop();
    await stub?.close();
  });

  it('X-Request-Id is echoed, logged with tenant, session, route, status and duration, and quoted in problem+json', async () => {
    const { key, tenantId } = await client.createTenant('logs');
    await client.createSession(key, { id: 'logged' });
    const ok = await client.request('GET', '/v1/sessions/logged/events?afterSeq=0', { key, headers: { 'x-request-id': 'trace-ok-1' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toBe('trace-ok-1');
    const bad = await client.append(key, 'logged', { events: [{ type: 'no.such.type', data: {} }] }, { 'x-request-id': 'trace-bad-2' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-request-id')).toBe('trace-bad-2');
    expect(bad.body.requestId).toBe('trace-bad-2');
    const generated = await client.request('GET', '/v1/sessions/nope', { key });
    expect(generated.body.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated.headers.get('x-request-id')).toBe(generated.body.requestId);
    // A hostile id is replaced, never echoed.
    const hostile = await client.request('GET', '/healthz', { headers: { 'x-request-id': 'a b <script>' } });
    expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    await service.api.waitForOutput(/trace-bad-2/, 'the request log lines');
    const lines = logLines(service.api.output());
    expect(lines.find((l) => l.requestId === 'trace-ok-1' && l.msg === 'request completed')).toMatchObject({
      level: 'info',
      service: 'api',
      tenantId,
      sessionId: 'logged',
      method: 'GET',
      route: '/v1/sessions/:sessionId/events',
      status: 200,
      durationMs: expect.any(Number),
      time: expect.any(String),
    });
    expect(lines.find((l) => l.requestId === 'trace-bad-2' && l.msg === 'request completed')).toMatchObject({ status: 400, tenantId, sessionId: 'logged' });
  });

  it('no secret appears in any log line: API keys, the admin token, Authorization headers, summarizer keys', async () => {
    const { key } = await client.createTenant('secrets');
    await client.createSession(key, { id: 'secret-session', config: { compaction: { summarizer: 'openai', model: 'stub-ok' } } });
    for (let i = 0; i < 4; i++) await client.append(key, 'secret-session', { events: [userMessage(`s${i}`, `work item ${i}`)] });
    await client.request('POST', '/v1/sessions/secret-session/compactions', { key, body: { wait: true } });
    await client.request('GET', '/v1/sessions', { key: `${key}x` });
    await client.request('GET', '/v1/admin/tenants', { key: ADMIN_TOKEN });
    await new Promise((r) => setTimeout(r, 500));
    const everything = service.api.output() + service.workers.map((w) => w.output()).join('');
    expect(everything.length).toBeGreaterThan(1000);
    for (const secret of [key, key.slice(-16), ADMIN_TOKEN, 'sk-summarizer-secret-0000', 'Bearer ']) expect(everything).not.toContain(secret);
  });

  it('the worker serves /healthz, /readyz and /metrics on its own port, with job, queue and outbox series', async () => {
    const worker = service.workers[0];
    const port = logLines(worker.output()).find((l) => l.healthPort)?.healthPort;
    expect(port).toEqual(expect.any(Number));
    const base = `http://127.0.0.1:${port}`;
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ok', postgres: 'ok', redis: 'ok' });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      'session_store_worker_jobs_total{queue="session-compaction",outcome="completed"}',
      'session_store_worker_job_duration_seconds_bucket',
      'session_store_queue_jobs{queue="session-compaction",state="waiting"}',
      'session_store_outbox_backlog',
      'session_store_outbox_oldest_age_seconds',
      'session_store_oldest_pending_compaction_age_seconds',
    ]) {
      expect(metrics).toContain(name);
    }
    const api = await (await fetch(`${service.baseUrl}/metrics`)).text();
    expect(api).toMatch(/http_request_duration_seconds_bucket\{[^}]*route="\/v1\/sessions\/:sessionId\/events"[^}]*status="200"/);
  });
});
