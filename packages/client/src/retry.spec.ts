import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { backoffDelay, parseRetryAfter, retrying } from './retry';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-25T12:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an HTTP-date as the time left until then, never negative', () => {
    expect(parseRetryAfter('Wed, 25 Nov 2026 12:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('Wed, 25 Nov 2026 11:59:00 GMT', now)).toBe(0);
  });

  it('gives undefined for an absent or malformed value', () => {
    for (const value of [null, '', '1.5', '-1', 'soon', '2026-11-25T12:00:03Z']) expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('doubles each attempt, half fixed and half jitter, up to a cap', () => {
    expect([0, 1, 2].map((attempt) => backoffDelay(attempt, () => 0))).toEqual([125, 250, 500]);
    expect([0, 1, 2].map((attempt) => backoffDelay(attempt, () => 1))).toEqual([250, 500, 1000]);
    expect(backoffDelay(30, () => 1)).toBe(8000);
  });
});

/** A stand-in server answering each request with the next scripted answer, recording when each arrived. */
async function standIn(answers: Array<(res: ServerResponse) => void>) {
  const arrivals: Array<{ at: number; method: string; body: string; key: string | undefined }> = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      arrivals.push({ at: Date.now(), method: req.method!, body, key: req.headers['idempotency-key'] as string | undefined });
      (answers[arrivals.length - 1] ?? ((r: ServerResponse) => r.writeHead(500).end()))(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, arrivals, close: () => new Promise((resolve) => server.close(resolve)) };
}

const unavailable = (retryAfter?: string) => (res: ServerResponse) =>
  res.writeHead(503, { 'content-type': 'application/problem+json', ...(retryAfter ? { 'retry-after': retryAfter } : {}) }).end('{"code":"database_unavailable"}');
const ok = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');

describe('retrying', () => {
  const send = retrying((request) => fetch(request), 3);

  it('waits for Retry-After after a 503, then resends the same request', async () => {
    // given a server that is unavailable once, asking for one second
    const server = await standIn([unavailable('1'), ok]);
    try {
      // when a POST with a body and an idempotency key is sent
      const response = await send(new Request(server.url, { method: 'POST', body: '{"a":1}', headers: { 'idempotency-key': 'k1' } }));
      // then it succeeds on the second attempt, sent no sooner than Retry-After allowed, with the same body and key
      expect(response.status).toBe(200);
      expect(server.arrivals.map(({ body, key }) => ({ body, key }))).toEqual([
        { body: '{"a":1}', key: 'k1' },
        { body: '{"a":1}', key: 'k1' },
      ]);
      expect(server.arrivals[1].at - server.arrivals[0].at).toBeGreaterThanOrEqual(1000);
    } finally {
      await server.close();
    }
  });

  it('gives the last answer back after `retries` retries', async () => {
    const server = await standIn([unavailable('0'), unavailable('0'), unavailable('0'), unavailable('0'), ok]);
    try {
      expect((await send(new Request(server.url))).status).toBe(503);
      expect(server.arrivals).toHaveLength(4);
    } finally {
      await server.close();
    }
  });

  it('does not retry other 4xx answers, nor a Retry-After beyond a minute', async () => {
    const server = await standIn([(res) => res.writeHead(409).end(), unavailable('3600'), ok]);
    try {
      expect((await send(new Request(server.url))).status).toBe(409);
      expect((await send(new Request(server.url))).status).toBe(503);
      expect(server.arrivals).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it('answers a 503 to a POST without an idempotency key at once: its work may have committed', async () => {
    // given a server that is unavailable twice, then answers
    const server = await standIn([unavailable('0'), unavailable('0'), ok]);
    try {
      // when a POST without a key, then one with a key, meet the 503
      expect((await send(new Request(server.url, { method: 'POST', body: 'x' }))).status).toBe(503);
      expect((await send(new Request(server.url, { method: 'POST', body: 'x', headers: { 'idempotency-key': 'k' } }))).status).toBe(200);
      // then only the keyed one was sent again
      expect(server.arrivals.map(({ key }) => key ?? '-')).toEqual(['-', 'k', 'k']);
    } finally {
      await server.close();
    }
  });

  it('retries a network error only for a request that is safe to repeat', async () => {
    // given a transport that fails once per request, then answers
    const attempts: string[] = [];
    const failingOnce = () => {
      let failed = false;
      return retrying(async (request) => {
        attempts.push(`${request.method} ${request.headers.get('idempotency-key') ?? '-'}`);
        if (!failed) {
          failed = true;
          throw new TypeError('fetch failed');
        }
        return new Response('{}');
      }, 3);
    };
    const url = 'http://127.0.0.1:9/';
    // when a GET, a POST without an idempotency key and one with a key are sent
    await expect(failingOnce()(new Request(url))).resolves.toBeInstanceOf(Response);
    await expect(failingOnce()(new Request(url, { method: 'POST', body: 'x' }))).rejects.toThrow('fetch failed');
    await expect(failingOnce()(new Request(url, { method: 'POST', body: 'x', headers: { 'idempotency-key': 'k' } }))).resolves.toBeInstanceOf(Response);
    // then the POST without a key was not sent twice
    expect(attempts).toEqual(['GET -', 'GET -', 'POST -', 'POST k', 'POST k']);
  });
});
