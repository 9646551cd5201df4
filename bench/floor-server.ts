/**
 * The floor for bench/peers (BENCH_TARGET=floor): the least an HTTP service
 * over PostgreSQL can do for the calls the benchmark makes, so a run shows
 * how much of the gap to raw pg a minimal Node HTTP service here pays
 * and how much is this service's own work.
 *
 * Bare `node:http` and `pg`: no framework, authentication, validation,
 * tenant, transaction, tool-output store, token count or event stream. An
 * append is one multi-row INSERT of the events as the client sent them into a
 * plain (session_id, seq, payload jsonb) table, the seqs from a head kept in
 * memory (one writer per session, as in the benchmark); a read is one SELECT
 * whose rows, `payload::text`, are written to the response as they are. It
 * answers only the paths bench/peers calls (the admin's tenant is a fixed
 * placeholder) and is never part of the service.
 *
 *   PORT=3999 DATABASE_URL=postgres://postgres@127.0.0.1:5432/scratch node dist/bench/floor-server.js
 *
 * DB_POOL_SIZE sets its pool (default 10, the API's default).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Pool } from 'pg';

const PORT = Number(process.env.PORT ?? 3999);
const HOST = process.env.HOST ?? '127.0.0.1';
// The API's default pool size (DB_POOL_SIZE): as many connections at PostgreSQL.
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 10), application_name: 'bench-floor' });
const heads = new Map<string, number>();

function send(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function append(sessionId: string, events: Array<{ id?: string; type?: string }>): Promise<string> {
  const head = heads.get(sessionId);
  if (head === undefined) throw new Error(`no session ${sessionId}`);
  const params: unknown[] = [sessionId];
  const values = events.map((event, i) => {
    params.push(head + i + 1, JSON.stringify(event));
    return `($1, $${2 * i + 2}, $${2 * i + 3})`;
  });
  await pool.query(`INSERT INTO events (session_id, seq, payload) VALUES ${values.join(', ')}`, params);
  heads.set(sessionId, head + events.length);
  return JSON.stringify({ headSeq: head + events.length, events: events.map((e, i) => ({ id: e.id, seq: head + i + 1 })) });
}

async function readPage(sessionId: string, afterSeq: number, limit: number): Promise<string[]> {
  const { rows } = await pool.query('SELECT seq, payload::text AS json FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3', [sessionId, afterSeq, limit]);
  const headSeq = heads.get(sessionId) ?? 0;
  const last = rows.length > 0 ? Number(rows[rows.length - 1].seq) : afterSeq;
  const pieces = [`{"headSeq":${headSeq},"events":[`];
  rows.forEach((row, i) => pieces.push(i === 0 ? row.json : `,${row.json}`));
  pieces.push(`],"nextAfterSeq":${last < headSeq ? last : null}}`);
  return pieces;
}

async function route(req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://floor');
  const [, v1, resource, id, sub] = url.pathname.split('/');
  if (url.pathname === '/healthz') return send(res, 200, '{"status":"ok"}');
  if (req.method === 'POST' && url.pathname === '/v1/admin/tenants') return send(res, 201, '{"tenantId":"floor","apiKey":{"key":"floor"}}');
  if (v1 !== 'v1' || resource !== 'sessions') return send(res, 404, '{}');
  if (req.method === 'POST' && id === undefined) {
    const sessionId = randomUUID();
    heads.set(sessionId, 0);
    await append(sessionId, [{ id: `${sessionId}-created`, type: 'session.created' }]);
    return send(res, 201, JSON.stringify({ id: sessionId, headSeq: 1 }));
  }
  if (req.method === 'GET' && sub === undefined) {
    // From the table, not the in-memory head: the benchmark checks it against what it appended.
    const { rows } = await pool.query('SELECT max(seq) AS head FROM events WHERE session_id = $1', [id]);
    return send(res, rows[0].head === null ? 404 : 200, JSON.stringify({ id, headSeq: Number(rows[0].head) }));
  }
  if (req.method === 'POST' && sub === 'events') return send(res, 201, await append(id, JSON.parse(body.toString('utf8')).events));
  if (req.method === 'GET' && sub === 'events') {
    const pieces = await readPage(id, Number(url.searchParams.get('afterSeq') ?? 0), Number(url.searchParams.get('limit') ?? 100));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': pieces.reduce((n, p) => n + Buffer.byteLength(p), 0) });
    res.cork();
    for (const piece of pieces) res.write(piece);
    res.end();
    res.uncork();
    return;
  }
  send(res, 404, '{}');
}

async function main(): Promise<void> {
  await pool.query('CREATE TABLE IF NOT EXISTS events (session_id text NOT NULL, seq bigint NOT NULL, payload jsonb NOT NULL, PRIMARY KEY (session_id, seq))');
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => route(req, Buffer.concat(chunks), res).catch((error: Error) => send(res, 500, JSON.stringify({ detail: error.message }))));
  });
  server.listen(PORT, HOST);
  const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main();
