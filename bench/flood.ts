/**
 * A tenant flooding the API, as its own process (bench/fairness and
 * test/faults/tenant-flood start it), so that its client work shares neither
 * the event loop nor the core of whoever measures the other tenant's latency.
 *
 * `connections` keep-alive connections each send the next one-event append as
 * soon as the previous answer arrived, ignoring Retry-After. Prints
 * `{"ready":true}` once answers come back, and after stdin closes, the
 * report: responses per status and the first 429 (status, headers, body).
 *
 *   node dist/bench/flood.js '{"url":"http://127.0.0.1:3000","key":"sst_…","sessionId":"flood","connections":64}'
 */
import http from 'node:http';

interface FloodOptions {
  url: string;
  key: string;
  sessionId: string;
  connections: number;
}

export interface FloodReport {
  statuses: Record<number, number>;
  limited?: { status: number; headers: http.IncomingHttpHeaders; body: unknown };
  errors: string[];
}

const options: FloodOptions = JSON.parse(process.argv[2]);
const base = new URL(options.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
const report: FloodReport = { statuses: {}, errors: [] };
let stopping = false;
let ready = false;

function append(n: number): Promise<void> {
  const body = Buffer.from(JSON.stringify({ events: [{ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: `flood ${n}` }] } } }] }));
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent,
        method: 'POST',
        hostname: base.hostname,
        port: base.port,
        path: `/v1/sessions/${encodeURIComponent(options.sessionId)}/events`,
        headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          report.statuses[status] = (report.statuses[status] ?? 0) + 1;
          if (status === 429 && !report.limited) report.limited = { status, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
          if (!ready) {
            ready = true;
            process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
          }
          resolve();
        });
      },
    );
    req.on('error', (error) => {
      if (report.errors.length < 10) report.errors.push(error.message);
      resolve();
    });
    req.end(body);
  });
}

async function connection(c: number): Promise<void> {
  for (let n = 0; !stopping; n++) await append(c * 1e9 + n);
}

const running = Array.from({ length: options.connections }, (_, c) => connection(c));
process.stdin.resume();
process.stdin.on('end', async () => {
  stopping = true;
  await Promise.all(running);
  agent.destroy();
  process.stdout.write(`${JSON.stringify(report)}\n`);
});
