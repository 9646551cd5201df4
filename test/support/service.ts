import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { whenever } from './awaiting';
import { createTestDatabase, TestDatabase } from './database';
import { ADMIN_TOKEN, REDIS_URL } from './env';

const DIST = join(__dirname, '..', '..', 'dist', 'apps');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface ProcessHandle {
  child: ChildProcess;
  output: () => string;
  /** Resolves once the process exited and its output is all read. */
  closed: Promise<void>;
  /** The first match of `pattern` in the output, now or as it arrives; rejects naming `what` on timeout or if the process ends first. */
  waitForOutput: (pattern: RegExp, what: string, timeoutMs?: number) => Promise<RegExpExecArray>;
  /** SIGKILL, no cleanup: a crash. */
  kill: () => Promise<void>;
  stop: () => Promise<void>;
}

export function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

/** A built entry point (`api/src/main.js`, `cli/src/start-all.js`…) as a child process with its output captured. */
export function startProcess(app: 'api' | 'worker' | 'supervisor', env: Record<string, string>): ProcessHandle {
  const script = app === 'supervisor' ? join(DIST, 'cli', 'src', 'start-all.js') : join(DIST, app, 'src', 'main.js');
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const written = new EventEmitter();
  const append = (d: Buffer) => {
    output = (output + d).slice(-200_000);
    written.emit('output');
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const handle: ProcessHandle = {
    child,
    output: () => output,
    closed,
    waitForOutput: (pattern, what, timeoutMs = 30_000) => whenever(written, 'output', () => pattern.exec(output) ?? undefined, what, timeoutMs, handle),
    kill: async () => {
      child.kill('SIGKILL');
      await exited(child);
    },
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(timer);
    },
  };
  return handle;
}

/** What each process logs once it serves: the API listening; the worker's health port, opened after its BullMQ workers run. Both at level `log`. */
export const READY_LINE = { api: /session-store API listening on /, worker: /session-store worker running/ };

/** Levels that hide the readiness lines. */
const QUIET_LEVELS = new Set(['fatal', 'error', 'warn']);

/**
 * `startProcess`, resolved once the process logged its readiness line, then
 * confirmed by one request to `healthUrl`. It runs at LOG_LEVEL `log` at
 * least, so that the line is written.
 */
export async function startReady(app: 'api' | 'worker', env: Record<string, string>, healthUrl: string): Promise<ProcessHandle> {
  const handle = startProcess(app, QUIET_LEVELS.has(env.LOG_LEVEL) ? { ...env, LOG_LEVEL: 'log' } : env);
  try {
    await handle.waitForOutput(READY_LINE[app], `the ${app} to log that it is ready`);
    await expectHealthy(healthUrl, handle);
  } catch (error) {
    // Nobody holds the handle to stop it.
    await handle.kill();
    throw error;
  }
  return handle;
}

/** One health check of a process that said it is ready: anything but a 2xx fails, with its output. */
export async function expectHealthy(url: string, handle: ProcessHandle): Promise<void> {
  const res = await fetch(url).catch((error: Error) => ({ ok: false, status: error.message }));
  if (!res.ok) throw new Error(`${url} answered ${res.status} after the readiness line\n${handle.output()}`);
}

/** `npm start`'s supervisor over a fresh database, API and worker on free ports. */
export async function startSupervisor(shutdownTimeoutMs: number): Promise<{ supervisor: ProcessHandle; port: number; workerPort: number; db: TestDatabase }> {
  const db = await createTestDatabase();
  const [port, workerPort] = [await freePort(), await freePort()];
  const supervisor = startProcess('supervisor', {
    DATABASE_URL: db.url,
    PORT: String(port),
    WORKER_PORT: String(workerPort),
    QUEUE_PREFIX: `sst-sup-${port}`,
    ADMIN_TOKEN,
    SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs),
    LOG_FORMAT: 'json',
  });
  return { supervisor, port, workerPort, db };
}

/** The supervisor's API and worker ready: their readiness lines in its output (they write to its stdout), then one check each. */
export async function awaitSupervised(supervisor: ProcessHandle, port: number, workerPort: number): Promise<void> {
  await supervisor.waitForOutput(READY_LINE.api, 'the API via the supervisor');
  await supervisor.waitForOutput(READY_LINE.worker, 'the worker via the supervisor');
  await expectHealthy(`http://127.0.0.1:${port}/healthz`, supervisor);
  await expectHealthy(`http://127.0.0.1:${workerPort}/readyz`, supervisor);
}

export interface TestService {
  baseUrl: string;
  dbUrl: string;
  redisUrl: string;
  prefix: string;
  env: Record<string, string>;
  api: ProcessHandle;
  workers: ProcessHandle[];
  startWorker: () => Promise<ProcessHandle>;
  stop: () => Promise<void>;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 30_000, handle?: ProcessHandle): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    if (handle && handle.child.exitCode !== null) throw new Error(`${what}: process exited\n${handle.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}\n${handle?.output() ?? ''}`);
}

/**
 * The real service for one spec file: its own database (cloned from the
 * migrated template), its own BullMQ prefix, API and worker as child processes.
 */
export async function startService(
  options: { env?: Record<string, string>; worker?: boolean; redisUrl?: string; database?: { url: string; drop: () => Promise<void> } } = {},
): Promise<TestService> {
  // A spec may bring its own database (a private cluster it crashes); the service migrates it at start.
  const db = options.database ?? (await createTestDatabase());
  const port = await freePort();
  const prefix = `sst-test-${randomBytes(4).toString('hex')}`;
  const redisUrl = options.redisUrl ?? REDIS_URL;
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    ADMIN_TOKEN,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    WORKER_PORT: '0',
    OUTBOX_SWEEP_INTERVAL_MS: '200',
    OUTBOX_GRACE_MS: '500',
    ...options.env,
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  // Polled: at the specs' LOG_LEVEL warn the readiness lines (level log) are not written, and at log every request would be.
  const api = startProcess('api', env);
  await waitFor(async () => (await fetch(`${baseUrl}/healthz`)).ok, 'API /healthz', 30_000, api);
  const workers: ProcessHandle[] = [];
  const startWorker = async () => {
    // The worker's health listener opens only after its BullMQ workers run, whatever LOG_LEVEL hides.
    const workerPort = await freePort();
    const worker = startProcess('worker', { ...env, WORKER_PORT: String(workerPort) });
    await waitFor(async () => (await fetch(`http://127.0.0.1:${workerPort}/healthz`)).ok, 'worker start', 30_000, worker);
    workers.push(worker);
    return worker;
  };
  if (options.worker !== false) await startWorker();
  const service: TestService = {
    baseUrl,
    dbUrl: db.url,
    redisUrl,
    prefix,
    env,
    api,
    workers,
    startWorker,
    // The API a spec restarted in its place (service.api reassigned) is the one to stop.
    stop: async () => {
      await Promise.all([service.api, ...workers].map((p) => p.stop()));
      await db.drop();
    },
  };
  return service;
}

export { waitFor };

/** The JSON log lines of a process's output. */
export function logLines(output: string): any[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}
