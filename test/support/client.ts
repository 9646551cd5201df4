import { contractOf } from './contract';
import { ADMIN_TOKEN } from './env';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as is (for malformed bodies). */
  rawBody?: string | Buffer | Uint8Array;
  headers?: Record<string, string>;
}

/**
 * A thin fetch wrapper: JSON in, parsed JSON (or text) out. It does not throw on
 * 4xx/5xx, but does on an answer the OpenAPI document does not declare.
 */
export class Client {
  constructor(readonly baseUrl: string) {}

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResult<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: RequestInit['body'];
    if (options.rawBody !== undefined) body = options.rawBody as RequestInit['body'];
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    // The contract test: an answer the service's OpenAPI document does not declare fails the spec here.
    (await contractOf(this.baseUrl)).check(method, path, response.status, response.headers, text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  async createTenant(name = 'tenant'): Promise<{ tenantId: string; key: string; keyId: string }> {
    const res = await this.request('POST', '/v1/admin/tenants', { key: ADMIN_TOKEN, body: { name } });
    if (res.status !== 201) throw new Error(`createTenant: ${res.status} ${res.text}`);
    return { tenantId: res.body.tenantId, key: res.body.apiKey.key, keyId: res.body.apiKey.keyId };
  }

  async createSession(key: string, body: Record<string, unknown> = {}): Promise<any> {
    const res = await this.request('POST', '/v1/sessions', { key, body: { model: 'gpt-4.1', ...body } });
    if (res.status !== 201) throw new Error(`createSession: ${res.status} ${res.text}`);
    return res.body;
  }

  append(key: string, sessionId: string, body: unknown, headers?: Record<string, string>) {
    return this.request('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/events`, { key, body, headers });
  }

  async allEvents(key: string, sessionId: string): Promise<any[]> {
    const events: any[] = [];
    let after = 0;
    for (;;) {
      const res = await this.request('GET', `/v1/sessions/${encodeURIComponent(sessionId)}/events?afterSeq=${after}&limit=1000`, { key });
      if (res.status !== 200) throw new Error(`read events: ${res.status} ${res.text}`);
      events.push(...res.body.events);
      if (res.body.nextAfterSeq === null) return events;
      after = res.body.nextAfterSeq;
    }
  }
}

/** A problem+json answer with this status and code. */
export function expectProblem(res: HttpResult, status: number, code: string): void {
  expect([res.status, res.body?.code]).toEqual([status, code]);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

export const userMessage = (text: string, id?: string) => ({
  ...(id ? { id } : {}),
  type: 'message.added',
  data: { message: { role: 'user', parts: [{ type: 'text', text }] } },
});
