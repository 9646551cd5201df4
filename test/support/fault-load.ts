import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client as PgClient } from 'pg';
import type { FloodReport } from '../../bench/flood';
import { Client, HttpResult, userMessage } from './client';
import { exited } from './service';

/** What a client saw while the service was being hurt. */
export interface LoadReport {
  /** Event ids whose append was acknowledged (2xx), in order. */
  acked: string[];
  /** Count of responses per status. */
  statuses: Record<number, number>;
  /** 503s that lacked Retry-After or the database_unavailable code. */
  bad503: string[];
  /** Anything else: other statuses, connection errors (a dead process). */
  unexpected: string[];
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Writers appending uniquely identified events to their sessions, each
 * followed by a context read. A 503 is retried with the same event id, as a
 * client honouring Retry-After would (after a short pause, so the test stays
 * fast); the event id makes the retry safe whether or not the first attempt
 * committed.
 */
export function startAppendLoad(client: Client, key: string, sessionIds: readonly string[], tag: string): { stop: () => Promise<LoadReport> } {
  const report: LoadReport = { acked: [], statuses: {}, bad503: [], unexpected: [] };
  let stopping = false;
  const see = (res: HttpResult): boolean => {
    report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
    if (res.status === 503) {
      if (!res.headers.get('retry-after') || res.body?.code !== 'database_unavailable') report.bad503.push(res.text);
      return false;
    }
    if (res.status >= 300) report.unexpected.push(`${res.status} ${res.text.slice(0, 300)}`);
    return res.status < 300;
  };
  const call = async (send: () => Promise<HttpResult>): Promise<boolean> => {
    try {
      return see(await send());
    } catch (error) {
      report.unexpected.push(`network: ${(error as Error).message}`);
      await pause(100);
      return false;
    }
  };
  const writer = async (sessionId: string, index: number) => {
    for (let n = 0; !stopping; n++) {
      const id = `${tag}-${index}-${n}`;
      // Once stopping, a pending event is still retried for a while: it may be the one the outage interrupted.
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        if (await call(() => client.append(key, sessionId, { events: [userMessage(`event ${id}`, id)] }))) {
          report.acked.push(id);
          break;
        }
        await pause(100);
      }
      await call(() => client.request('GET', `/v1/sessions/${sessionId}/context?format=openai`, { key }));
    }
  };
  const running = sessionIds.map((sessionId, index) => writer(sessionId, index));
  return {
    stop: async () => {
      stopping = true;
      await Promise.all(running);
      return report;
    },
  };
}

/** Event ids (of `ids`) stored more or less than exactly once, read as the owner. */
export async function notExactlyOnce(owner: PgClient, ids: readonly string[]): Promise<Array<{ id: string; copies: number }>> {
  const { rows } = await owner.query(
    `SELECT i.id, count(e.event_id)::int AS copies FROM unnest($1::text[]) AS i(id)
       LEFT JOIN session_events e ON e.event_id = i.id GROUP BY i.id HAVING count(e.event_id) <> 1`,
    [ids],
  );
  return rows.map((r) => ({ id: r.id, copies: r.copies }));
}

/**
 * A tenant flooding appends over `connections` connections, from its own
 * process (the built bench/flood.js), so the flood's client work does not
 * share this process's event loop. Resolves once the flood's answers come
 * back; `stop` ends it and returns what it saw.
 */
export async function startFlood(baseUrl: string, key: string, sessionId: string, connections: number): Promise<{ stop: () => Promise<FloodReport> }> {
  const script = join(__dirname, '..', '..', 'dist', 'bench', 'flood.js');
  const child = spawn(process.execPath, [script, JSON.stringify({ url: baseUrl, key, sessionId, connections })], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const line = await lines.next();
    if (line.done) throw new Error('the flood process ended without a report');
    return JSON.parse(line.value);
  };
  await next();
  return {
    stop: async () => {
      child.stdin!.end();
      const report: FloodReport = await next();
      await exited(child);
      return report;
    },
  };
}
