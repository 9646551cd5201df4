import { randomBytes, randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { Client, HttpResult, userMessage } from './support/client';
import { connectAs } from './support/database';
import { ADMIN_TOKEN } from './support/env';
import { startService, TestService } from './support/service';

/**
 * Tenant isolation (invariant 7; reliability notes T4.1-T4.3, T4.6): the BOLA
 * matrix is generated from the OpenAPI document, so a session route added
 * later is covered without editing this file; the database proof runs as the
 * service's own runtime role.
 */

type Schema = Record<string, any>;
type OpenApi = { paths: Record<string, Record<string, any>>; components?: { schemas?: Record<string, Schema> } };

interface Operation {
  method: string;
  /** OpenAPI template, e.g. /v1/sessions/{sessionId}/events */
  path: string;
  spec: Record<string, any>;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const APP_ROLE = 'session_store_app';
/** Routes that exist today; the generated matrix must include at least these (a doc regression must not shrink it silently). */
const KNOWN_SESSION_ROUTES = [
  'GET /v1/sessions/{sessionId}',
  'DELETE /v1/sessions/{sessionId}',
  'GET /v1/sessions/{sessionId}/events',
  'POST /v1/sessions/{sessionId}/events',
  'POST /v1/sessions/{sessionId}/forks',
  'GET /v1/sessions/{sessionId}/export',
  'GET /v1/sessions/{sessionId}/events/stream',
];

// Every problem body carries its own request id; the rest must match byte for byte.
const masked = (text: string, id: string) => text.split(id).join('<id>').replace(/"requestId":"[^"]*"/, '"requestId":"<rid>"');
const problemJson = (res: HttpResult) => expect(res.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json/);

function resolve(doc: OpenApi, schema: Schema | undefined): Schema {
  let current = schema ?? {};
  for (let hops = 0; current.$ref && hops < 20; hops++) {
    current = doc.components?.schemas?.[String(current.$ref).replace('#/components/schemas/', '')] ?? {};
  }
  return current;
}

/**
 * A plausible minimal value for a schema: its example, default or first enum
 * value, else required properties only and one-element arrays. Enough for a
 * well-formed request, so a cross-tenant 404 cannot be a validation error.
 */
function sample(doc: OpenApi, raw: Schema | undefined, depth = 0): unknown {
  const schema = resolve(doc, raw);
  if (depth > 12) return null;
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    if (Array.isArray(schema[key]) && schema[key].length > 0) {
      if (key !== 'allOf') return sample(doc, schema[key][0], depth + 1);
      return Object.assign({}, ...schema.allOf.map((s: Schema) => sample(doc, s, depth + 1)));
    }
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'object' || schema.properties) {
    const required: string[] = schema.required ?? [];
    return Object.fromEntries(required.map((name) => [name, sample(doc, schema.properties?.[name], depth + 1)]));
  }
  switch (type) {
    case 'array':
      return [sample(doc, schema.items, depth + 1)];
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return false;
    case 'string':
      return schema.format === 'uuid' ? randomUUID() : 'x';
    default:
      return {};
  }
}

/** Whether the operation answers with an endless Server-Sent Events stream. */
const streams = (op: Operation) => Object.values<any>(op.spec.responses ?? {}).some((r) => r.content?.['text/event-stream']);

/** Every operation of every path with an `{idParam}` parameter, DELETE last (it is destructive if isolation fails). */
function operationsOn(doc: OpenApi, idParam: string): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.includes(`{${idParam}}`)) continue;
    for (const method of METHODS) if (item[method]) ops.push({ method: method.toUpperCase(), path, spec: item[method] });
  }
  return ops.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE') || a.path.localeCompare(b.path));
}

/** The request for `op` with `segment` (a URL path segment, already encoded) as its `{idParam}`. */
function buildRequest(doc: OpenApi, op: Operation, segment: string, idParam = 'sessionId') {
  const params: any[] = [...(doc.paths[op.path].parameters ?? []), ...(op.spec.parameters ?? [])];
  let path = op.path.replace(`{${idParam}}`, segment);
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const p of params) {
    if (p.name === idParam) continue;
    const value = String(sample(doc, p.schema));
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(value));
    else if (p.in === 'query' && p.required) query.set(p.name, value);
    else if (p.in === 'header' && p.required) headers[p.name] = value;
  }
  let rawBody: string | FormData | undefined;
  const content: Record<string, any> | undefined = op.spec.requestBody?.content;
  if (content) {
    const json = Object.keys(content).find((t) => /json/.test(t));
    const text = Object.keys(content).find((t) => /^(text\/|application\/octet-stream|\*\/\*)/.test(t));
    const multipart = Object.keys(content).find((t) => t === 'multipart/form-data');
    if (json) {
      headers['content-type'] = 'application/json';
      rawBody = JSON.stringify(sample(doc, content[json].schema) ?? {});
    } else if (multipart) {
      // fetch sets the content type with its boundary.
      const schema = resolve(doc, content[multipart].schema);
      rawBody = new FormData();
      for (const [name, prop] of Object.entries<Schema>(schema.properties ?? {})) {
        const field = resolve(doc, prop);
        if (field.format === 'binary') rawBody.append(name, new Blob(['line 1\nline 2\n']), 'output.txt');
        else if ((schema.required ?? []).includes(name)) rawBody.append(name, String(sample(doc, field)));
      }
    } else if (text) {
      headers['content-type'] = text === '*/*' ? 'application/octet-stream' : text;
      rawBody = 'line 1\nline 2\n';
    } else {
      // Fails the matrix on purpose: a new body type needs a sample here rather than a silent skip.
      throw new Error(`${op.method} ${op.path}: no sample body for ${Object.keys(content).join(', ')}`);
    }
  } else if (['POST', 'PUT', 'PATCH'].includes(op.method)) {
    headers['content-type'] = 'application/json';
    rawBody = '{}';
  }
  const qs = query.toString();
  const extraPathParams = params.some((p) => p.in === 'path' && p.name !== idParam);
  return { path: qs ? `${path}?${qs}` : path, headers, rawBody, extraPathParams };
}

describe('tenant isolation', () => {
  let service: TestService;
  let client: Client;
  let doc: OpenApi;
  let ops: Operation[];
  /** Routes keyed by a tool-output ref instead of a session. */
  let refOps: Operation[];
  let a: { tenantId: string; key: string; keyId: string };
  let b: { tenantId: string; key: string; keyId: string };
  /** A's session, full of a marker no other tenant may ever see. */
  let victim: string;
  const marker = `MARKER-${randomBytes(12).toString('hex')}`;

  const call = (op: Operation, segment: string, key?: string, idParam = 'sessionId') => {
    const req = buildRequest(doc, op, segment, idParam);
    if (streams(op)) return streamHead(req.path, key);
    // A FormData body passes through Client to fetch unchanged.
    return client.request(op.method, req.path, { key, rawBody: req.rawBody as string | undefined, headers: req.headers });
  };

  /**
   * A live stream (text/event-stream) never ends: a 2xx answer is judged by
   * its status and headers and its body dropped; a refusal is read whole.
   */
  const streamHead = async (path: string, key?: string): Promise<HttpResult> => {
    const abort = new AbortController();
    const response = await fetch(`${client.baseUrl}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {}, signal: abort.signal });
    if (response.ok) {
      abort.abort();
      return { status: response.status, headers: response.headers, body: undefined, text: '' };
    }
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
  };

  beforeAll(async () => {
    // With a worker: routes added later (compactions with wait, prune) may need one to answer the owner's control call.
    // This file walks the 401 paths many times; the failed-authentication limiter has its own test (test/faults/auth-flood).
    service = await startService({ env: { AUTH_FAILURE_LIMIT: '10000' } });
    client = new Client(service.baseUrl);
    a = await client.createTenant('tenant-a');
    b = await client.createTenant('tenant-b');
    const docRes = await client.request('GET', '/docs-json');
    expect(docRes.status).toBe(200);
    doc = docRes.body;
    ops = operationsOn(doc, 'sessionId');
    refOps = operationsOn(doc, 'refId').filter((op) => !op.path.includes('{sessionId}'));

    // A's session: the marker in the system prompt, metadata, a message, a tool call and its result.
    const session = await client.createSession(a.key, { system: `system ${marker}`, metadata: { note: marker } });
    victim = session.id;
    const res = await client.append(
      a.key,
      victim,
      {
        events: [
          userMessage(`user says ${marker}`),
          {
            type: 'message.added',
            data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'call-1', name: 'read', input: { q: marker } }] } },
          },
          { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'call-1', output: `out ${marker}` }] } } },
        ],
      },
      { 'Idempotency-Key': `idem-${randomUUID()}` },
    );
    expect(res.status).toBe(201);
  });
  afterAll(() => service?.stop());

  describe('BOLA matrix generated from /docs-json', () => {
    it('route-coverage guard: every session route is named by {sessionId} and the known ones are present', () => {
      const listed = ops.map((op) => `${op.method} ${op.path}`);
      expect(listed).toEqual(expect.arrayContaining(KNOWN_SESSION_ROUTES));
      // A route under /v1/sessions/<id> that names its parameter otherwise would escape the matrix
      // (a collection action without a parameter, such as /v1/sessions/import, names no session).
      const unnamed = Object.keys(doc.paths).filter((p) => p.startsWith('/v1/sessions/') && p.includes('{') && !p.startsWith('/v1/sessions/{sessionId}'));
      expect(unnamed).toEqual([]);
      // Any other tenant route taking an object id must be keyed by a session or a ref, the two matrices below.
      const uncovered = Object.keys(doc.paths).filter((p) => /\{[^}]+\}/.test(p) && !p.startsWith('/v1/admin/') && !/\{(sessionId|refId)\}/.test(p));
      expect(uncovered).toEqual([]);
    });

    it("tenant B gets a 404 problem on every session route for A's session, indistinguishable from an unknown id, with no byte of A's content", async () => {
      const snapshot = async () => {
        const state = await client.request('GET', `/v1/sessions/${victim}`, { key: a.key });
        expect(state.status).toBe(200);
        return { state: state.body, events: await client.allEvents(a.key, victim) };
      };
      const before = await snapshot();
      const exercised = new Set<string>();
      for (const op of ops) {
        const label = `${op.method} ${op.path}`;
        const res = await call(op, encodeURIComponent(victim), b.key);
        exercised.add(label);
        expect({ label, status: res.status }).toEqual({ label, status: 404 });
        problemJson(res);
        expect(res.text).not.toContain(marker);
        for (const [name, value] of res.headers) expect(`${name}: ${value}`).not.toContain(marker);
        // No existence oracle: the answer for A's real id equals the answer for an id nobody has.
        const unknown = randomUUID();
        const control = await call(op, unknown, b.key);
        expect(control.status).toBe(404);
        expect(masked(res.text, victim)).toBe(masked(control.text, unknown));
      }
      // Coverage guard: exactly the session routes of the document were called.
      expect([...exercised].sort()).toEqual(ops.map((op) => `${op.method} ${op.path}`).sort());
      // A's data is untouched (DELETE and POST included).
      expect(await snapshot()).toEqual(before);
    });

    it("the same generated requests work for the owner (so B's 404 is isolation, not a malformed request)", async () => {
      for (const op of ops) {
        const own = await client.createSession(a.key);
        const res = await call(op, encodeURIComponent(own.id), a.key);
        const label = `${op.method} ${op.path}`;
        expect({ label, serverError: res.status >= 500 }).toEqual({ label, serverError: false });
        // A route with another path parameter (e.g. a ref) may 404 on that sample value; the others must find the session.
        if (!buildRequest(doc, op, 'x').extraPathParams) expect({ label, status: res.status }).not.toEqual({ label, status: 404 });
      }
    });

    it("tenant B gets a 404 on every tool-output ref route for A's refs, as for an unknown ref; A reads them", async () => {
      // The tool result appended in beforeAll carries the marker; its stored output is one of A's refs.
      const refs = (await client.allEvents(a.key, victim))
        .flatMap((e) => (e.type === 'message.added' ? e.data.message.parts : []))
        .map((part: any) => part.outputRef?.id)
        .filter((id: unknown): id is string => typeof id === 'string');
      expect(refOps.length).toBeGreaterThan(0);
      expect(refs.length).toBeGreaterThan(0);
      for (const op of refOps) {
        const label = `${op.method} ${op.path}`;
        for (const ref of refs) {
          const res = await call(op, encodeURIComponent(ref), b.key, 'refId');
          expect({ label, status: res.status }).toEqual({ label, status: 404 });
          problemJson(res);
          expect(res.text).not.toContain(marker);
          for (const [name, value] of res.headers) expect(`${name}: ${value}`).not.toContain(marker);
          const unknown = `out_${randomBytes(16).toString('base64url')}`;
          const control = await call(op, unknown, b.key, 'refId');
          expect(masked(res.text, ref)).toBe(masked(control.text, unknown));
          const own = await call(op, encodeURIComponent(ref), a.key, 'refId');
          expect({ label, status: own.status }).toEqual({ label, status: 200 });
        }
      }
    });

    it('unknown ids are 404 problems on every session route, for any tenant', async () => {
      for (const op of ops) {
        for (const id of [randomUUID(), `no-such-session-${randomBytes(4).toString('hex')}`]) {
          for (const key of [a.key, b.key]) {
            const res = await call(op, id, key);
            expect({ route: `${op.method} ${op.path}`, status: res.status }).toEqual({ route: `${op.method} ${op.path}`, status: 404 });
            problemJson(res);
          }
        }
      }
    });

    it("B's session list never shows A's sessions", async () => {
      const res = await client.request('GET', '/v1/sessions?limit=1000', { key: b.key });
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(marker);
      expect(res.body.sessions.map((s: any) => s.id)).not.toContain(victim);
    });

    it('B can use the same client-chosen session id as A without touching A', async () => {
      const id = `shared-${randomBytes(4).toString('hex')}`;
      await client.createSession(a.key, { id, system: marker });
      const mine = await client.createSession(b.key, { id });
      expect(mine.system).toBeNull();
      expect((await client.append(b.key, id, { events: [userMessage('b writes')] })).status).toBe(201);
      const aEvents = await client.allEvents(a.key, id);
      expect(aEvents.map((e) => e.type)).toEqual(['session.created']);
    });
  });

  describe('database proof, as the runtime role', () => {
    let owner: PgClient;
    let app: PgClient;
    let tenantTables: string[];

    beforeAll(async () => {
      owner = await connectAs(service.dbUrl);
      app = await connectAs(service.dbUrl, APP_ROLE);
      tenantTables = (
        await owner.query(
          `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
              AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)
            ORDER BY 1`,
        )
      ).rows.map((r) => r.relname);
    });
    afterAll(async () => {
      await app?.end();
      await owner?.end();
    });

    it('the service itself connects as the runtime role', async () => {
      await client.request('GET', `/v1/sessions/${victim}`, { key: a.key });
      const { rows } = await owner.query(
        `SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'session-store'`,
      );
      expect(rows.map((r) => r.usename)).toEqual([APP_ROLE]);
    });

    it('the runtime role is not superuser, cannot bypass RLS, and neither owns nor belongs to the owner of any tenant table', async () => {
      const { rows: role } = await app.query('SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user');
      expect(role).toEqual([{ rolsuper: false, rolbypassrls: false }]);
      const { rows } = await app.query(
        `SELECT relname, pg_get_userbyid(relowner) AS owner, pg_has_role(current_user, relowner, 'USAGE') AS acts_as_owner
           FROM pg_class WHERE relname = ANY($1) AND relnamespace = 'public'::regnamespace`,
        [tenantTables],
      );
      expect(rows).toHaveLength(tenantTables.length);
      for (const r of rows) expect({ table: r.relname, ownerIsApp: r.owner === APP_ROLE, actsAsOwner: r.acts_as_owner }).toEqual({ table: r.relname, ownerIsApp: false, actsAsOwner: false });
    });

    it('every table with a tenant_id column has RLS enabled and forced', async () => {
      expect(tenantTables).toEqual(
        expect.arrayContaining(['api_keys', 'idempotency_keys', 'outbox', 'session_events', 'session_tool_calls', 'sessions', 'tenants']),
      );
      const { rows } = await app.query(
        `SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = ANY($1) AND relnamespace = 'public'::regnamespace ORDER BY 1`,
        [tenantTables],
      );
      expect(rows).toEqual(tenantTables.map((relname) => ({ relname, relrowsecurity: true, relforcerowsecurity: true })));
    });

    it('partitions of the log and the tool-output cache are reachable only through their parent', async () => {
      const { rows } = await owner.query(
        `SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_class c WHERE c.relispartition AND c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace ORDER BY 1`,
      );
      expect(new Set(rows.map((r) => r.relname.replace(/_p\d+$/, '')))).toEqual(
        new Set(['search_documents', 'session_events', 'tool_output_chunks', 'tool_output_contents', 'tool_output_refs']),
      );
      for (const r of rows) {
        expect({ partition: r.relname, rls: r.relrowsecurity, forced: r.relforcerowsecurity }).toEqual({ partition: r.relname, rls: true, forced: true });
        await expect(app.query(`SELECT count(*) FROM ${r.relname}`)).rejects.toThrow(/permission denied/);
      }
    });

    it('with no tenant set, every tenant table reads as empty although the API wrote rows to it', async () => {
      // The owner sees rows in each foundation table (written above through the API), so a 0 below means something.
      for (const table of ['tenants', 'api_keys', 'sessions', 'session_events', 'session_tool_calls', 'idempotency_keys', 'outbox']) {
        const { rows } = await owner.query(`SELECT count(*)::int AS n FROM ${table}`);
        expect({ table, hasRows: rows[0].n > 0 }).toEqual({ table, hasRows: true });
      }
      const counts = async () => {
        const out: Record<string, number> = {};
        for (const table of tenantTables) out[table] = (await app.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
        return out;
      };
      const zeros = Object.fromEntries(tenantTables.map((t) => [t, 0]));
      // Fresh connection: the setting is NULL.
      expect(await counts()).toEqual(zeros);
      // After a transaction-local tenant ended, the setting reads '' (not NULL): the policy must still fail closed.
      await app.query('BEGIN');
      await app.query(`SELECT set_config('app.tenant_id', $1, true)`, [a.tenantId]);
      await app.query('COMMIT');
      expect(await counts()).toEqual(zeros);
    });

    it("with A's tenant set, only A's rows are visible", async () => {
      await app.query('BEGIN');
      try {
        await app.query(`SELECT set_config('app.tenant_id', $1, true)`, [a.tenantId]);
        const { rows } = await app.query(`SELECT count(*)::int AS mine, count(*) FILTER (WHERE tenant_id <> $1)::int AS others FROM session_events`, [a.tenantId]);
        expect(rows[0].mine).toBeGreaterThan(0);
        expect(rows[0].others).toBe(0);
        const { rows: sessions } = await app.query(`SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1`, [b.tenantId]);
        expect(sessions[0].n).toBe(0);
      } finally {
        await app.query('ROLLBACK');
      }
    });

    it("INSERT with another tenant's id fails the policy's WITH CHECK", async () => {
      const attempts = [
        [`INSERT INTO sessions (tenant_id, session_id, model) VALUES ($1, 'planted', 'm')`, [b.tenantId]],
        [
          `INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, payload_hash) VALUES ($1, $2, 999, 'planted', 'turn.aborted', '{}', '\\x00')`,
          [b.tenantId, victim],
        ],
        [`INSERT INTO idempotency_keys (tenant_id, key, request_hash, response_status, response_body) VALUES ($1, 'planted', '\\x00', 200, 'null')`, [b.tenantId]],
        [`INSERT INTO outbox (tenant_id, job_name, job_id, payload) VALUES ($1, 'compact', 'planted', '{}')`, [b.tenantId]],
      ] as const;
      for (const [sql, params] of attempts) {
        await app.query('BEGIN');
        try {
          await app.query(`SELECT set_config('app.tenant_id', $1, true)`, [a.tenantId]);
          await expect(app.query(sql, [...params])).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(/row-level security/) });
        } finally {
          await app.query('ROLLBACK');
        }
      }
    });

    it('the runtime role cannot UPDATE, DELETE or TRUNCATE session_events (append-only by grant)', async () => {
      const { rows } = await app.query(
        `SELECT has_table_privilege(current_user, 'session_events', 'UPDATE') AS upd,
                has_table_privilege(current_user, 'session_events', 'DELETE') AS del,
                has_table_privilege(current_user, 'session_events', 'TRUNCATE') AS trunc`,
      );
      expect(rows[0]).toEqual({ upd: false, del: false, trunc: false });
      for (const sql of [`UPDATE session_events SET data = '{}'`, 'DELETE FROM session_events', 'TRUNCATE session_events']) {
        await app.query('BEGIN');
        try {
          await app.query(`SELECT set_config('app.tenant_id', $1, true)`, [a.tenantId]);
          await expect(app.query(sql)).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(/permission denied/) });
        } finally {
          await app.query('ROLLBACK');
        }
      }
      // And the log is intact.
      expect((await client.allEvents(a.key, victim)).length).toBe(4);
    });

    it('the cross-tenant sweeper role reaches the outbox relay columns and nothing else', async () => {
      const sweeper = await connectAs(service.dbUrl, 'session_store_sweeper');
      try {
        const { rows: role } = await sweeper.query('SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user');
        expect(role).toEqual([{ rolsuper: false, rolbypassrls: false }]);
        for (const table of tenantTables.filter((t) => !['outbox', 'session_events', 'sessions'].includes(t))) {
          await expect(sweeper.query(`SELECT count(*) FROM ${table}`)).rejects.toMatchObject({ code: '42501' });
        }
        // It tells a trigger whose session is gone by the session's key (migration 1765300000000), and sees nothing else of it.
        await expect(sweeper.query('SELECT metadata FROM sessions')).rejects.toMatchObject({ code: '42501' });
        await expect(sweeper.query('SELECT tenant_id, session_id FROM sessions')).resolves.toBeDefined();
        // The reconciler reads ids and types of compaction events (migration 1764300000000), never content.
        await expect(sweeper.query('SELECT data FROM session_events')).rejects.toMatchObject({ code: '42501' });
        const { rows: visible } = await sweeper.query('SELECT DISTINCT type FROM session_events');
        for (const { type } of visible) expect(['compaction.requested', 'compaction.completed', 'compaction.failed']).toContain(type);
        await expect(sweeper.query(`UPDATE outbox SET payload = '{}'`)).rejects.toMatchObject({ code: '42501' });
        await expect(sweeper.query(`INSERT INTO outbox (tenant_id, job_name, job_id, payload) VALUES ($1, 'compact', 'x', '{}')`, [a.tenantId])).rejects.toMatchObject({
          code: '42501',
        });
      } finally {
        await sweeper.end();
      }
    });
  });

  describe('authentication', () => {
    const expect401 = (res: HttpResult, code = 'invalid_api_key') => {
      expect(res.status).toBe(401);
      problemJson(res);
      expect(res.body.code).toBe(code);
    };

    it('a revoked key gets 401 invalid_api_key at once; the tenant’s other keys keep working', async () => {
      const issued = await client.request('POST', `/v1/admin/tenants/${a.tenantId}/api-keys`, { key: ADMIN_TOKEN, body: { name: 'to-revoke' } });
      expect(issued.status).toBe(201);
      const second = issued.body.key as string;
      // Used once first, so a cached verification must not outlive the revocation.
      expect((await client.request('GET', `/v1/sessions/${victim}`, { key: second })).status).toBe(200);
      const revoked = await client.request('DELETE', `/v1/admin/tenants/${a.tenantId}/api-keys/${issued.body.keyId}`, { key: ADMIN_TOKEN });
      expect(revoked.status).toBe(204);
      expect401(await client.request('GET', `/v1/sessions/${victim}`, { key: second }));
      expect401(await client.append(second, victim, { events: [userMessage('after revocation')] }));
      expect((await client.request('GET', `/v1/sessions/${victim}`, { key: a.key })).status).toBe(200);
    });

    it("revoking names the tenant: B's tenant id with A's key id revokes nothing", async () => {
      const res = await client.request('DELETE', `/v1/admin/tenants/${b.tenantId}/api-keys/${a.keyId}`, { key: ADMIN_TOKEN });
      expect(res.status).toBe(404);
      expect((await client.request('GET', '/v1/sessions', { key: a.key })).status).toBe(200);
    });

    it('missing, malformed, unknown and tampered keys get 401', async () => {
      const secret = a.key.split('_')[2];
      const cases: Array<[string, Record<string, string>]> = [
        ['no Authorization', {}],
        ['empty bearer', { authorization: 'Bearer ' }],
        ['garbage', { authorization: 'Bearer garbage' }],
        ['another scheme', { authorization: `Basic ${Buffer.from(`x:${a.key}`).toString('base64')}` }],
        ['a well-formed unknown key', { authorization: `Bearer sst_${randomBytes(16).toString('hex')}_${randomBytes(32).toString('base64url')}` }],
        ["A's secret under B's tenant", { authorization: `Bearer sst_${b.tenantId.replace(/-/g, '')}_${secret}` }],
        ['one character changed', { authorization: `Bearer ${a.key.slice(0, -1)}${a.key.endsWith('A') ? 'B' : 'A'}` }],
        ['the admin token', { authorization: `Bearer ${ADMIN_TOKEN}` }],
        ['a 10 KB key', { authorization: `Bearer ${'k'.repeat(10_240)}` }],
      ];
      for (const [, headers] of cases) {
        expect401(await client.request('GET', `/v1/sessions/${victim}`, { headers }));
        expect401(await client.request('GET', '/v1/sessions', { headers }));
      }
    });

    it('admin routes refuse tenant keys with 401', async () => {
      const calls = [
        client.request('POST', '/v1/admin/tenants', { key: a.key, body: { name: 'evil' } }),
        client.request('POST', `/v1/admin/tenants/${a.tenantId}/api-keys`, { key: a.key, body: {} }),
        client.request('DELETE', `/v1/admin/tenants/${a.tenantId}/api-keys/${a.keyId}`, { key: a.key }),
        client.request('POST', '/v1/admin/tenants', { body: { name: 'anonymous' } }),
      ];
      for (const res of await Promise.all(calls)) expect401(res, 'invalid_admin_token');
      // The key survived the attempt to revoke it.
      expect((await client.request('GET', '/v1/sessions', { key: a.key })).status).toBe(200);
    });
  });

  describe('id fuzzing on session routes', () => {
    // Already URL-encoded path segments.
    const ids = [
      encodeURIComponent("' OR '1'='1"),
      encodeURIComponent('"; DROP TABLE sessions; --'),
      encodeURIComponent("x' UNION SELECT key_hash FROM api_keys --"),
      encodeURIComponent('%'),
      encodeURIComponent('*'),
      encodeURIComponent('a\\b'),
      '%00',
      'a%00b',
      'a'.repeat(10_240),
      encodeURIComponent('été'),
      encodeURIComponent('日本語'),
      encodeURIComponent('😀'),
      encodeURIComponent('\u202e'),
      '%ED%A0%80', // a UTF-16 surrogate encoded as UTF-8: invalid
      '%FF',
      '%C0%80', // overlong NUL
      'a%0Ab',
      '..%2F..%2Fadmin',
      '%',
    ];

    it('answers only 400 or 404 problems on session and ref routes, never 5xx', async () => {
      const seen = new Set<number>();
      const targets = [...ops.map((op) => [op, 'sessionId'] as const), ...refOps.map((op) => [op, 'refId'] as const)];
      for (const [op, idParam] of targets) {
        for (const id of ids) {
          const res = await call(op, id, a.key, idParam);
          const label = `${op.method} ${op.path} with ${id.slice(0, 40)}`;
          expect({ label, status: res.status, ok: [400, 404].includes(res.status) }).toEqual({ label, status: res.status, ok: true });
          problemJson(res);
          expect(typeof res.body.code).toBe('string');
          seen.add(res.status);
        }
      }
      // The service is still healthy and A's data intact.
      expect((await client.allEvents(a.key, victim)).length).toBe(4);
      expect(seen.has(404)).toBe(true);
    });

    it('forged list cursors are 400 invalid_cursor, never 5xx', async () => {
      const forged = [
        ['1', 's1'],
        ['2020-01-01T00:00:00Z', 'a\u0000'],
        ['2020-13-45 99:00:00+00', 's1'],
        [{}, 's1'],
      ].map((v) => Buffer.from(JSON.stringify(v)).toString('base64url'));
      for (const cursor of [...forged, 'not-base64!', '%00', 'x'.repeat(600)]) {
        const res = await client.request('GET', `/v1/sessions?cursor=${encodeURIComponent(cursor)}`, { key: a.key });
        expect({ cursor, status: res.status }).toEqual({ cursor, status: 400 });
        problemJson(res);
      }
    });
  });
});
