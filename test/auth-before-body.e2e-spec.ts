import { connect } from 'node:net';
import { Client } from './support/client';
import { startService, TestService } from './support/service';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request over its own socket from `localAddress` (failed logins are
 * counted per address, so each case uses its own loopback address). The head
 * declares a body of `declaredBytes`; only `body` (if any) is sent, and the
 * socket stays open for writing. Resolves with what the server sent once it
 * closes the connection, so an answer left on a kept-open connection never
 * resolves (`keepOpen` instead resolves as soon as the whole answer arrived).
 */
function rawPost(
  port: number,
  localAddress: string,
  path: string,
  authorization: string,
  declaredBytes: number,
  options: { body?: string; keepOpen?: boolean } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    let received = '';
    const parse = (): RawAnswer | null => {
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return null;
      const [statusLine, ...lines] = received.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const body = received.slice(end + 4);
      return { status: Number(statusLine.split(' ')[1]), headers, body };
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const answer = parse();
      if (options.keepOpen && answer && Buffer.byteLength(answer.body) >= Number(answer.headers['content-length'] ?? Infinity)) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const answer = parse();
      if (answer) resolve(answer);
      else reject(new Error(`connection closed without an answer: ${JSON.stringify(received)}`));
    });
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\nContent-Type: application/json\r\nContent-Length: ${declaredBytes}\r\n\r\n${options.body ?? ''}`,
    );
  });
}

/**
 * Credentials are checked before a body is read, on every route: a request
 * with a bad key or admin token whose body never comes is answered at once
 * (not after HTTP_REQUEST_TIMEOUT_MS), its connection closed, and it counts
 * toward AUTH_FAILURE_LIMIT like any other failed authentication.
 */
describe('authentication before the body', () => {
  const LIMIT = 3;
  let service: TestService;
  let port: number;
  let key: string;
  let tenantId: string;

  beforeAll(async () => {
    // The old behaviour held such a request until this timeout; the answers below need none of it.
    service = await startService({ worker: false, env: { AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW_S: '600', HTTP_REQUEST_TIMEOUT_MS: '120000' } });
    port = Number(new URL(service.baseUrl).port);
    ({ key, tenantId } = await new Client(service.baseUrl).createTenant());
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('answers a bad API key 401 without its body, closes the connection, and counts it toward the limit', async () => {
    const badKey = `sst_${tenantId.replace(/-/g, '')}_${'A'.repeat(43)}`;
    const answers: RawAnswer[] = [];
    for (let i = 0; i < LIMIT + 1; i++) answers.push(await rawPost(port, '127.0.0.2', '/v1/sessions', `Bearer ${badKey}`, 4096));
    for (const answer of answers.slice(0, LIMIT - 1)) {
      expect(answer.status).toBe(401);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toMatchObject({ status: 401, code: 'invalid_api_key' });
    }
    // The failure that crosses the limit, and every one after it, is 429 with Retry-After.
    for (const answer of answers.slice(LIMIT - 1)) {
      expect(answer.status).toBe(429);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'too_many_auth_failures' });
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    }
  }, 60_000);

  it('answers a wrong admin token 401 without its body, and counts it toward the limit', async () => {
    const answers: RawAnswer[] = [];
    for (let i = 0; i < LIMIT + 1; i++) answers.push(await rawPost(port, '127.0.0.3', '/v1/admin/tenants', 'Bearer not-the-admin-token', 4096));
    for (const answer of answers.slice(0, LIMIT - 1)) {
      expect(answer.status).toBe(401);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'invalid_admin_token' });
    }
    for (const answer of answers.slice(LIMIT - 1)) {
      expect(answer.status).toBe(429);
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    }
  }, 60_000);

  it('still reads the body of an authenticated request, on a connection kept open', async () => {
    const body = JSON.stringify({ model: 'gpt-4.1', metadata: { case: 'auth-before-body' } });
    const answer = await rawPost(port, '127.0.0.4', '/v1/sessions', `Bearer ${key}`, Buffer.byteLength(body), { body, keepOpen: true });
    expect(answer.status).toBe(201);
    expect(answer.headers.connection).not.toBe('close');
    expect(JSON.parse(answer.body)).toMatchObject({ metadata: { case: 'auth-before-body' } });
  });

  it('answers a bad key 401 after reading a body that is sent at once', async () => {
    const body = JSON.stringify({ metadata: { case: 'bad key with a body' } });
    const answer = await rawPost(port, '127.0.0.5', '/v1/sessions', 'Bearer sst_bogus', Buffer.byteLength(body), { body, keepOpen: true });
    expect(answer.status).toBe(401);
  });
});
