/**
 * Tool-output benchmark: a script, not a test.
 *
 * It starts the built API itself, on a scratch database it creates (and drops
 * at the end), so it can read the API process's resident memory from
 * /proc/<pid>/status while it works. On loopback:
 *
 *   1. upload 100 MiB of log lines as a chunked stream, 3 times (distinct
 *      contents, so nothing is deduplicated): throughput, and the growth of the
 *      API's VmRSS during each upload over its value just before (gate: 64 MiB);
 *      the first upload into the fresh process is reported apart;
 *   2. read 100 lines at offset 1 and 100 lines ending at the last line,
 *      alternating: median latency of each and their ratio (gate: 2);
 *   3. grep the 100 MiB output for a literal and for a regex that both scan it
 *      all (few or no matches): median wall time over HTTP (gate: 2 s).
 *
 * Bounded: fixed counts, a warm-up first (a cold 100 MiB upload, reported
 * apart, then a 16 MiB upload, reads and greps, so first-use allocation and
 * compilation are not counted), and it stops by itself. Exit status 1 when a
 * gate fails.
 *
 *   npm run build && npm run bench:tool-output
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:tool-output
 */
import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import { Client } from 'pg';
import { BenchClient, benchClient, databaseUrl, expectStatus, freePort, nowMs, procStatusMiB, spawnApi } from './support';

// A script: configuration comes straight from the environment.
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN_TOKEN = 'bench-admin-token-0123456789';

const MIB = 1024 * 1024;
const UPLOAD_BYTES = 100 * MIB;
const UPLOAD_RUNS = 3;
const READ_RUNS = 30;
const GREP_RUNS = 5;
const GATES = { rssGrowthMiB: 64, readRatio: 2, grepSeconds: 2 };

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// ---------------------------------------------------------------- the API process

async function admin(sql: string): Promise<void> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function startApi(dbName: string, port: number): Promise<ChildProcess> {
  return spawnApi(port, { NODE_ENV: 'test', DATABASE_URL: databaseUrl(ADMIN_URL, dbName), REDIS_URL, QUEUE_PREFIX: `sst-bench-${randomBytes(4).toString('hex')}`, ADMIN_TOKEN });
}

const rssMiB = (pid: number) => procStatusMiB(pid, 'VmRSS');

// ---------------------------------------------------------------- HTTP

// Set once the API listens on its free port.
let client: BenchClient;

/** Sends `data` chunked (no Content-Length), 64 KiB per write, with backpressure. */
function uploadStream(token: string, sessionId: string, data: Buffer): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${client.base.origin}/v1/sessions/${sessionId}/tool-outputs`,
      { method: 'POST', agent: client.agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          const body = JSON.parse(Buffer.concat(parts).toString());
          if (res.statusCode === 201) resolve(body);
          else reject(new Error(`upload: HTTP ${res.statusCode} ${JSON.stringify(body)}`));
        });
      },
    );
    req.on('error', reject);
    let at = 0;
    const write = () => {
      while (at < data.length) {
        const piece = data.subarray(at, at + 64 * 1024);
        at += piece.length;
        if (!req.write(piece)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

// ---------------------------------------------------------------- data

/** About 110 bytes per line of access log; `tag` makes each upload distinct. */
function logLines(bytes: number, tag: string): Buffer {
  const lines: string[] = [`run ${tag}\n`];
  let size = lines[0].length;
  for (let n = 1; size < bytes; n++) {
    const level = n % 97 === 0 ? 'ERROR' : 'INFO ';
    const status = n % 101 === 0 ? 503 : 200;
    const line = `2025-11-21T10:${String(Math.floor(n / 60000) % 60).padStart(2, '0')}:00.${String(n % 1000).padStart(3, '0')}Z ${level} request id=${n} path=/api/v1/items/${n % 977} status=${status} latency=${n % 1000}ms user=u${n % 5000}\n`;
    lines.push(line);
    size += line.length;
  }
  return Buffer.from(lines.join('')).subarray(0, bytes);
}

interface Upload {
  ref: any;
  seconds: number;
  before: number;
  peak: number;
  growth: number;
}

/** One upload, with the API's VmRSS sampled every 20 ms against its value just before. */
async function measureUpload(pid: number, key: string, sessionId: string, data: Buffer): Promise<Upload> {
  await new Promise((r) => setTimeout(r, 500));
  const before = rssMiB(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 20);
  const started = nowMs();
  const { ref } = await uploadStream(key, sessionId, data);
  const seconds = (nowMs() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, rssMiB(pid));
  if (ref.byte_size !== data.length) throw new Error(`upload stored ${ref.byte_size} bytes of ${data.length}`);
  return { ref, seconds, before, peak, growth: peak - before };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const dbName = `sst_bench_tool_output_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  const port = await freePort();
  client = benchClient(new URL(`http://127.0.0.1:${port}`));
  console.log(`tool-output bench: ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}; scratch database ${dbName}`);
  const api = await startApi(dbName, port);
  let failed = false;
  try {
    const tenant = expectStatus(await client.call('POST', '/v1/admin/tenants', ADMIN_TOKEN, { name: 'bench' }), 201, 'tenant');
    const key: string = tenant.apiKey.key;
    const sessionId = 'bench';
    expectStatus(await client.call('POST', '/v1/sessions', key, { id: sessionId, model: 'gpt-4.1' }), 201, 'session');

    // A first upload into the fresh process, for the record: its RSS growth includes one-time heap and
    // allocator growth (V8 collects Buffer garbage only once ~64 MiB of it has piled up).
    const startedRss = rssMiB(api.pid!);
    const cold = await measureUpload(api.pid!, key, sessionId, logLines(UPLOAD_BYTES, `cold-${Date.now()}`));
    console.log(
      `  cold upload: ${cold.seconds.toFixed(2)} s, API RSS ${startedRss.toFixed(0)} MiB after start -> peak ${cold.peak.toFixed(0)} MiB (+${cold.growth.toFixed(1)})`,
    );
    // Warm-up: every code path once, on a smaller output.
    const warm = await uploadStream(key, sessionId, logLines(16 * MIB, 'warm-up'));
    for (const offset of [1, warm.ref.line_count - 99]) await client.call('GET', `/v1/tool-outputs/${warm.ref.id}?offset=${offset}&limit=100`, key);
    await client.call('GET', `/v1/tool-outputs/${warm.ref.id}/grep?pattern=NEEDLE`, key);
    await client.call('GET', `/v1/tool-outputs/${warm.ref.id}/grep?pattern=${encodeURIComponent('status=503 latency=99\\dms')}`, key);

    console.log(`  API RSS after the warm-up (16 MiB upload, reads, greps): ${rssMiB(api.pid!).toFixed(0)} MiB`);

    // 1. Uploads.
    const uploads: Upload[] = [];
    let ref: any;
    for (let run = 1; run <= UPLOAD_RUNS; run++) {
      const upload = await measureUpload(api.pid!, key, sessionId, logLines(UPLOAD_BYTES, `${run}-${Date.now()}`));
      ref = upload.ref;
      uploads.push(upload);
      console.log(
        `  upload ${run}: ${upload.seconds.toFixed(2)} s, ${(UPLOAD_BYTES / MIB / upload.seconds).toFixed(1)} MiB/s, API RSS ${upload.before.toFixed(0)} -> peak ${upload.peak.toFixed(0)} MiB (+${upload.growth.toFixed(1)})`,
      );
    }
    const throughput = UPLOAD_BYTES / MIB / median(uploads.map((u) => u.seconds));
    const maxGrowth = Math.max(...uploads.map((u) => u.growth));

    // 2. Reads at both ends of the last upload.
    const ends = { start: [] as number[], end: [] as number[] };
    const lastOffset = ref.line_count - 99;
    for (let i = 0; i < READ_RUNS + 5; i++) {
      for (const [which, offset] of [['start', 1], ['end', lastOffset]] as const) {
        const started = nowMs();
        const page = expectStatus(await client.call('GET', `/v1/tool-outputs/${ref.id}?offset=${offset}&limit=100`, key), 200, 'read');
        const ms = nowMs() - started;
        if (page.lineCount !== 100) throw new Error(`read at ${offset}: ${page.lineCount} lines`);
        if (i >= 5) ends[which].push(ms);
      }
    }
    const readStart = median(ends.start);
    const readEnd = median(ends.end);
    const readRatio = readEnd / readStart;

    // 3. Greps that scan all 100 MiB.
    const greps: Record<string, number> = {};
    for (const [label, pattern] of [
      ['literal', 'NEEDLE-NOT-PRESENT'],
      ['regex', 'status=503 latency=99\\dms'],
    ]) {
      const times: number[] = [];
      for (let i = 0; i < GREP_RUNS; i++) {
        const started = nowMs();
        const result = expectStatus(
          await client.call('GET', `/v1/tool-outputs/${ref.id}/grep?pattern=${encodeURIComponent(pattern)}&limit=1000`, key),
          200,
          'grep',
        );
        times.push((nowMs() - started) / 1000);
        if (result.partial !== null || result.scannedBytes !== UPLOAD_BYTES) {
          throw new Error(`grep ${label}: partial ${JSON.stringify(result.partial)}, scanned ${result.scannedBytes}`);
        }
        if (i === 0) console.log(`  grep ${label} /${pattern}/: ${result.matches.length} matches in ${result.scannedLines} lines`);
      }
      greps[label] = median(times);
    }

    const gate = (ok: boolean) => {
      failed ||= !ok;
      return ok ? 'ok' : 'FAIL';
    };
    console.log('\n| measure | result | gate |');
    console.log('|---|---|---|');
    console.log(`| upload 100 MiB (median of ${UPLOAD_RUNS}) | ${throughput.toFixed(1)} MiB/s | |`);
    console.log(`| API RSS growth during an upload (max of ${UPLOAD_RUNS}) | ${maxGrowth.toFixed(1)} MiB | ≤ ${GATES.rssGrowthMiB} MiB ${gate(maxGrowth <= GATES.rssGrowthMiB)} |`);
    console.log(`| API RSS growth during the first upload of the process | ${cold.growth.toFixed(1)} MiB | (one-time) |`);
    console.log(`| read 100 lines at offset 1 (median of ${READ_RUNS}) | ${readStart.toFixed(1)} ms | |`);
    console.log(`| read 100 lines ending at line ${ref.line_count} (median of ${READ_RUNS}) | ${readEnd.toFixed(1)} ms | |`);
    console.log(`| end / start | ${readRatio.toFixed(2)} | ≤ ${GATES.readRatio} ${gate(readRatio <= GATES.readRatio)} |`);
    for (const [label, seconds] of Object.entries(greps)) {
      console.log(`| grep ${label} over 100 MiB (median of ${GREP_RUNS}) | ${seconds.toFixed(2)} s | ≤ ${GATES.grepSeconds} s ${gate(seconds <= GATES.grepSeconds)} |`);
    }
  } finally {
    api.kill('SIGTERM');
    await new Promise((r) => (api.exitCode !== null ? r(null) : api.once('exit', r)));
    client.agent.destroy();
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  }
  if (failed) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
