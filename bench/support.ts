/**
 * What the benchmarks share: their configuration, a keep-alive HTTP client,
 * the scratch tenant and the statistics they report.
 */
import { ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { API_ENV, API_NODE_ARGS } from '@app/lifecycle';

// Scripts: configuration comes straight from the environment.
export const BASE_URL = new URL(process.env.BENCH_URL ?? 'http://127.0.0.1:3000');
export const ADMIN_TOKEN = process.env.ADMIN_TOKEN ?? 'dev-admin-token-change-me';
export const OWNER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/session_store';

// '' is a pg URL without a host: the local Unix socket.
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1', '']);

/** A benchmark only ever talks to this machine. */
export function requireLoopback(name: string, url: URL): void {
  if (!LOOPBACK.has(url.hostname)) throw new Error(`${name} must be a loopback address, got ${url.hostname}`);
}

// ---------------------------------------------------------------- HTTP client

export interface HttpResult {
  status: number;
  /** The raw body: parsing it is left to expectStatus, so a timed call that only checks the status does not pay for it. */
  text: string;
}

export interface BenchClient {
  base: URL;
  agent: http.Agent;
  call: (method: string, path: string, token: string, body?: unknown) => Promise<HttpResult>;
}

/**
 * Agent `timeout` for runs with idle gaps: idle sockets are dropped after 3 s, before the server's 5 s
 * keep-alive timeout closes them, since reusing one the server is closing fails with "socket hang up".
 * (Node 20's agent ignores the server's Keep-Alive hint unless `timeout` is set.)
 */
export const IDLE_SOCKET_TIMEOUT_MS = 3000;

/** A keep-alive client for `base`; each benchmark sizes the agent for its own concurrency. */
export function benchClient(base: URL, agentOptions: http.AgentOptions = {}): BenchClient {
  const agent = new http.Agent({ ...agentOptions, keepAlive: true });
  const call = (method: string, path: string, token: string, body?: unknown) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise<HttpResult>((resolve, reject) => {
      const req = http.request(
        {
          agent,
          method,
          hostname: base.hostname,
          port: base.port || 80,
          path,
          headers: {
            authorization: `Bearer ${token}`,
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  };
  return { base, agent, call };
}

/** The parsed JSON body (undefined when empty) if the status is the expected one. */
export function expectStatus(result: HttpResult, status: number, what: string): any {
  if (result.status !== status) throw new Error(`${what}: expected HTTP ${status}, got ${result.status}: ${result.text.slice(0, 500)}`);
  return result.text ? JSON.parse(result.text) : undefined;
}

// ---------------------------------------------------------------- API processes of their own

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

/** The built API's entry point. */
const API_MAIN = join(__dirname, '..', 'apps', 'api', 'src', 'main.js');

/**
 * The built API (or another built server, `main`: bench/floor-server) as a
 * child process on `port` of loopback, with `env` over this process's
 * environment; resolves once /healthz answers, for benchmarks that start the
 * API themselves. The API gets the node flags and environment it is started
 * with in production (API_NODE_ARGS, API_ENV); another server runs as Node's defaults.
 */
export async function spawnApi(port: number, env: Record<string, string>, main = API_MAIN): Promise<ChildProcess> {
  const api = main === API_MAIN;
  const child = spawn(process.execPath, [...(api ? API_NODE_ARGS : []), main], {
    env: { ...(api ? API_ENV : {}), ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    if (child.exitCode !== null) throw new Error(`${main} exited during start-up`);
    if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) return child;
  }
  child.kill('SIGKILL');
  throw new Error(`${main} did not start within 30 s`);
}

/** The URL `server` (any database of it) names, pointed at its database `name`: for scratch databases. */
export function databaseUrl(server: string | URL, name: string): string {
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A field of /proc/<pid>/status given in kB (VmRSS, VmHWM), in MiB: a spawned API's memory. */
export function procStatusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
  if (!line) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(/(\d+)/.exec(line)![1]) / 1024;
}

/** Fields 3.. of /proc/<pid>/stat (after the command name, which may hold spaces): [0] is field 3, state. */
function procStat(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU of a process so far, in ms (fields 14 and 15, clock ticks of 10 ms). */
export function procCpuMs(pid: number): number {
  const fields = procStat(pid);
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The CPU of PostgreSQL on this machine so far, in ms (0 where it is not local): every live postgres
 * process's own, plus what each postmaster collected from its children that exited (fields 16 and 17),
 * so a backend that ends between two readings still counts.
 */
export function postgresCpuMs(): number {
  const processes: Array<{ pid: number; fields: string[] }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') processes.push({ pid: Number(entry), fields: procStat(Number(entry)) });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  const pids = new Set(processes.map((p) => p.pid));
  return processes.reduce((total, { fields }) => {
    const own = Number(fields[11]) + Number(fields[12]);
    // A postmaster: its parent (field 4) is not a postgres process.
    const reaped = pids.has(Number(fields[1])) ? 0 : Number(fields[13]) + Number(fields[14]);
    return total + (own + reaped) * 10;
  }, 0);
}

// ---------------------------------------------------------------- scratch tenant

/** Checks that the API answers, then creates the tenant the run works in. */
export async function createScratchTenant(client: BenchClient, name: string): Promise<{ tenantId: string; key: string }> {
  const health = await client.call('GET', '/healthz', '');
  if (health.status !== 200) throw new Error(`${client.base.origin}/healthz answered ${health.status}; is the API running?`);
  const tenant = expectStatus(await client.call('POST', '/v1/admin/tenants', ADMIN_TOKEN, { name: `${name}-${Date.now()}` }), 201, 'create tenant');
  return { tenantId: tenant.tenantId, key: tenant.apiKey.key };
}

/** The scratch tenant cascades to its keys, sessions, events and outbox rows; a failure is reported, not thrown. */
export async function deleteScratchTenant(owner: Client, tenantId: string): Promise<void> {
  await owner.query('DELETE FROM tenants WHERE tenant_id = $1', [tenantId]).catch((e) => console.error(`cleanup failed: ${e.message}`));
}

// ---------------------------------------------------------------- the agent workload

/** mulberry32: a small seeded generator, so a workload is the same bytes in every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LOG_LEVELS = ['INFO ', 'INFO ', 'INFO ', 'DEBUG', 'WARN ', 'ERROR'];
const LOG_COMPONENTS = ['http', 'db', 'queue', 'auth', 'cache', 'worker'];
const LOG_PATHS = ['/api/v1/orders', '/api/v1/items', '/api/v1/users', '/healthz', '/api/v1/carts', '/api/v1/search'];

/**
 * About `bytes` of service-log lines (timestamps, levels, paths, ids, trace
 * hashes): text that compresses like real tool output, not like a repeated
 * string.
 */
export function logText(random: () => number, bytes: number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
  const lines: string[] = [];
  let size = 0;
  let ms = Math.floor(random() * 3_600_000);
  while (size < bytes) {
    ms += Math.floor(random() * 250);
    const stamp = new Date(Date.UTC(2026, 10, 25) + ms).toISOString();
    const trace = Math.floor(random() * 2 ** 32).toString(16).padStart(8, '0');
    const line = `${stamp} ${pick(LOG_LEVELS)} [${pick(LOG_COMPONENTS)}] ${pick(LOG_PATHS)}/${Math.floor(random() * 100_000)} status=${random() < 0.95 ? 200 : 503} latency=${Math.floor(random() * 900)}ms trace=${trace}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

/** A message event as a client sends it (no id: the service assigns one). */
export interface AgentEvent {
  type: 'message.added';
  data: { message: { role: 'user' | 'assistant' | 'tool'; parts: Array<Record<string, unknown>> } };
}

const message = (role: AgentEvent['data']['message']['role'], parts: Array<Record<string, unknown>>): AgentEvent => ({
  type: 'message.added',
  data: { message: { role, parts } },
});

/** An assistant message calling `bash` once per id (calls a later result answers). */
export function toolCalls(callIds: string[], command: (i: number) => string = () => 'cat build.log'): AgentEvent {
  return message('assistant', callIds.map((callId, i) => ({ type: 'tool_call', callId, name: 'bash', input: { command: command(i) } })));
}

/** The tool message answering `callId` with `output`, inline. */
export function toolResult(callId: string, output: string): AgentEvent {
  return message('tool', [{ type: 'tool_result', callId, name: 'bash', output }]);
}

/**
 * Turn `turn` (0-based) of the agent workload's session, five messages: a user
 * text, an assistant with two tool calls, their two results of ~4 KB of log
 * text (every 10th turn the first is ~100 KB), and an assistant text.
 */
export function agentTurn(random: () => number, turn: number): AgentEvent[] {
  const module = `src/module${Math.floor(random() * 500)}`;
  const calls = [`call_${turn}_a`, `call_${turn}_b`];
  const big = turn % 10 === 9;
  return [
    message('user', [{ type: 'text', text: `Turn ${turn}: the test in ${module}.spec.ts fails on CI since the last merge; find out why and fix it.` }]),
    toolCalls(calls, (i) => `npm test -- ${module}.spec.ts --shard=${i + 1}/2`),
    ...calls.map((callId, i) => toolResult(callId, logText(random, big && i === 0 ? 100_000 : 4_000))),
    message('assistant', [{ type: 'text', text: `The failure in ${module}.ts came from a stale cache key; I fixed it and the shard passes. Next I run the whole suite.` }]),
  ];
}

/** A user text of about 100 bytes: the single small event. */
export function userText(n: number): AgentEvent {
  return message('user', [{ type: 'text', text: `Message ${n}: please rerun the failing shard with verbose logging and show me the output.` }]);
}

// ---------------------------------------------------------------- measurements

export const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/** Nearest-rank percentile of ascending `sorted`. */
export function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export interface Stats {
  p50: number;
  p99: number;
  mean: number;
  max: number;
  n: number;
}

export function sampleStats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((s, x) => s + x, 0) / sorted.length,
    max: sorted[sorted.length - 1],
    n: sorted.length,
  };
}

// ---------------------------------------------------------------- report

export const int = (x: number) => Math.round(x).toLocaleString('en-US');

/** A Markdown table: the first row is the header; the first column is left-aligned, the others right-aligned. */
export function printTable(rows: string[][]): void {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join(' | ')} |`;
  console.log(line(rows[0]));
  console.log(`|${widths.map((w, c) => (c === 0 ? ` ${'-'.repeat(w)} ` : ` ${'-'.repeat(w - 1)}: `)).join('|')}|`);
  for (const r of rows.slice(1)) console.log(line(r));
}

/** Runs a benchmark's main; any failure prints its stack and exits 1. */
export function runBench(main: () => Promise<void>): void {
  main().catch((error) => {
    console.error(error instanceof Error ? error.stack : error);
    process.exit(1);
  });
}
