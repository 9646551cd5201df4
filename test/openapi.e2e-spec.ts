import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROBLEM_CODES } from '../apps/api/src/openapi/problem-codes';
import { ADMIN_TOKEN } from './support/env';
import { Client, userMessage } from './support/client';
import { Contract, OpenApiDocument } from './support/contract';
import { startService, TestService } from './support/service';

const run = promisify(execFile);
const ROOT = join(__dirname, '..');
const BIN = join(ROOT, 'node_modules', '.bin');

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> }>;
  security?: unknown[];
}

/** Every problem code written in the sources: the helpers' and DomainError's string literals. */
async function codesInSources(): Promise<Set<string>> {
  const patterns = [
    /\binvalid\(\s*'([a-z_]+)'/g,
    /new DomainError\(\s*'[a-z_]+',\s*'([a-z_]+)'/g,
    /\bproblem\(\d{3}, '([a-z_]+)'/g,
    /readonly type = '([a-z_]+)'/g,
    /'(nul_character|lone_surrogate)'/g,
  ];
  const codes = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'testing') await walk(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        const text = await readFile(path, 'utf8');
        for (const pattern of patterns) for (const match of text.matchAll(pattern)) codes.add(match[1]);
      }
    }
  };
  await Promise.all(['apps/api/src', 'libs'].map((dir) => walk(join(ROOT, dir))));
  return codes;
}

describe('the OpenAPI document', () => {
  let service: TestService;
  let served: OpenApiDocument & { openapi: string; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }> } };

  beforeAll(async () => {
    service = await startService({ worker: false });
    const res = await new Client(service.baseUrl).request('GET', '/docs-json');
    expect(res.status).toBe(200);
    served = res.body;
  });
  afterAll(() => service?.stop());

  it('is docs/openapi.json: the committed file cannot drift from what the service serves (npm run openapi:write)', async () => {
    const committed: unknown = JSON.parse(await readFile(join(ROOT, 'docs', 'openapi.json'), 'utf8'));
    expect(committed).toEqual(served);
  });

  it('is OpenAPI 3.1 without the 3.0 `nullable`', () => {
    expect(served.openapi).toBe('3.1.0');
    expect(JSON.stringify(served)).not.toContain('"nullable"');
  });

  it('declares, for every operation, a success answer with a schema and problem+json errors, and Location on 201 and 202', () => {
    const gaps: string[] = [];
    for (const [path, item] of Object.entries(served.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        const statuses = Object.keys(operation.responses);
        const successes = statuses.filter((s) => s.startsWith('2'));
        if (successes.length === 0) gaps.push(`${where}: no success answer`);
        for (const status of successes) {
          const content = operation.responses[status].content;
          if (status !== '204' && !Object.values(content ?? {}).some((media) => media.schema)) gaps.push(`${where} ${status}: no schema`);
          if ((status === '201' || status === '202') && !operation.responses[status].headers?.Location) gaps.push(`${where} ${status}: no Location`);
        }
        if (operation.security === undefined) gaps.push(`${where}: no security requirement (use [] for a public operation)`);
        if (operation.security?.length === 0) continue;
        for (const status of ['400', '401', '429', '500', '503']) {
          const problem = operation.responses[status]?.content?.['application/problem+json']?.schema;
          if (!problem) gaps.push(`${where}: no ${status} problem`);
        }
      }
    }
    expect(gaps).toEqual([]);
  });

  it("lists every problem code the sources emit in the Problem schema's enum", async () => {
    const documented = served.components.schemas.Problem.properties?.code?.enum ?? [];
    expect(documented).toEqual([...PROBLEM_CODES]);
    const missing = [...(await codesInSources())].filter((code) => !documented.includes(code));
    expect(missing).toEqual([]);
  });

  it('makes the contract check refuse what the document does not declare', () => {
    const contract = new Contract(served);
    const typed = (contentType: string | null, more: Record<string, string> = {}) => new Headers({ ...(contentType ? { 'content-type': contentType } : {}), ...more });
    const problem = JSON.stringify({ type: 'https://session-store.dev/problems/session_not_found', title: 'Not Found', status: 404, code: 'session_not_found', detail: 'gone' });
    expect(() => contract.check('GET', '/v1/sessions/s1', 404, typed('application/problem+json'), problem)).not.toThrow();
    expect(() => contract.check('GET', '/v1/sessions/s1', 418, typed('application/problem+json'), problem)).toThrow(/is not declared/);
    // A problem whose own status disagrees with the answer's.
    expect(() => contract.check('GET', '/v1/sessions/s1', 400, typed('application/problem+json'), problem)).toThrow(/problem whose status says 404/);
    expect(() => contract.check('GET', '/v1/sessions/s1', 200, typed('application/json'), '{"id":1}')).toThrow(/does not match the document/);
    expect(() => contract.check('GET', '/v1/sessions/s1/export', 200, typed('text/html'), '<html>')).toThrow(/answered text\/html/);
    expect(() => contract.check('GET', '/v1/nowhere', 200, typed('application/json'), '{}')).toThrow(/matches no documented operation/);
    expect(() => contract.check('DELETE', '/v1/sessions/s1', 204, typed(null), '')).not.toThrow();
    // A 201 without the Location it declares as required.
    expect(() => contract.check('POST', '/v1/sessions/s1/pins', 201, typed('application/json'), '{}')).toThrow(/header Location as required; it is missing/);
  });

  it('sends a Location on every 201 and 202 that leads to what was created or queued', async () => {
    const client = new Client(service.baseUrl);
    const follow = async (res: { status: number; headers: Headers }, status: number, key: string) => {
      expect(res.status).toBe(status);
      const location = res.headers.get('location');
      expect(location).toMatch(/^\/v1\//);
      return client.request('GET', location!, { key });
    };
    const tenant = await client.request('POST', '/v1/admin/tenants', { key: ADMIN_TOKEN, body: { name: 'located' } });
    expect((await follow(tenant, 201, ADMIN_TOKEN)).body.tenantId).toBe(tenant.body.tenantId);
    const issued = await client.request('POST', `/v1/admin/tenants/${tenant.body.tenantId}/api-keys`, { key: ADMIN_TOKEN, body: { name: 'second' } });
    expect(issued.status).toBe(201);
    expect((await client.request('DELETE', issued.headers.get('location')!, { key: ADMIN_TOKEN })).status).toBe(204);

    const key: string = tenant.body.apiKey.key;
    const session = await client.request('POST', '/v1/sessions', { key, body: { id: 'located', model: 'gpt-4.1' } });
    expect((await follow(session, 201, key)).body.id).toBe('located');
    const appended = await client.request('POST', '/v1/sessions/located/events', { key, body: { events: [userMessage('hello')] } });
    expect((await follow(appended, 201, key)).body.events[0].seq).toBe(appended.body.events[0].seq);
    const compaction = await client.request('POST', '/v1/sessions/located/compactions', { key, body: {} });
    expect((await follow(compaction, 202, key)).body.compactions.map((c: { markerSeq: number }) => c.markerSeq)).toEqual([compaction.body.markerSeq]);
    const prune = await client.request('POST', '/v1/sessions/located/prune', { key, body: {} });
    expect((await follow(prune, 202, key)).status).toBe(200);
    const upload = await client.request('POST', '/v1/sessions/located/tool-outputs', { key, rawBody: 'line 1\nline 2\n', headers: { 'content-type': 'text/plain' } });
    expect((await follow(upload, 201, key)).body.lines).toContain('line 2');
  });

  it('passes the Redocly lint with no error', async () => {
    // A lint error makes redocly exit non-zero, which rejects with its report.
    const { stdout } = await run(join(BIN, 'redocly'), ['lint', 'docs/openapi.json', '--format=summary'], { cwd: ROOT });
    expect(stdout).not.toMatch(/\berror\b/);
  });

  it('generates TypeScript client types with openapi-typescript', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openapi-types-'));
    try {
      await run(join(BIN, 'openapi-typescript'), ['docs/openapi.json', '-o', join(dir, 'schema.d.ts')], { cwd: ROOT });
      const types = await readFile(join(dir, 'schema.d.ts'), 'utf8');
      // Spot checks of what a client leans on: the append body, the event union, the problem codes.
      expect(types).toContain('AppendRequest');
      expect(types).toMatch(/"step\.finished"/);
      expect(types).toContain('"version_conflict"');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
