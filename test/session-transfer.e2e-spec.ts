import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client as PgClient } from 'pg';
import { Agent, agentSession, turnEvents } from './support/agent-script';
import { Client, HttpResult } from './support/client';
import { startService, TestService } from './support/service';

/**
 * Session export and import: GET .../export streams JSON Lines,
 * POST /v1/sessions/import reads them back into a new session, equal event
 * for event, context for context in every format, and byte for byte on tool
 * outputs (a 100 MB one included, with the API's memory growth bounded);
 * a bad line is a 400 naming it, and leaves nothing behind.
 */
const FORMATS = ['neutral', 'openai', 'openai-responses', 'anthropic'] as const;
/**
 * RSS growth the API may show while importing and while exporting a 100 MB
 * output (docs/lifecycle.md): far below the 230 MB an export held in memory
 * would take; the export's garbage varies with V8's collection timing.
 */
const IMPORT_MEMORY_BOUND_MIB = 64;
const EXPORT_MEMORY_BOUND_MIB = 96;
const BIG_OUTPUT_LINES = 1_000_000;

const problem = (res: HttpResult, status: number, code: string) => {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json/);
};

/** 100 bytes per line, deterministic: line n of the big output. */
const bigLine = (n: number) => `${`line ${n} `.padEnd(60, '.')} ${createHash('md5').update(String(n)).digest('hex').slice(0, 32)}\n`.padStart(100, ' ');
function* bigOutput(): Generator<Buffer> {
  for (let n = 1; n <= BIG_OUTPUT_LINES; n += 10_000) {
    let text = '';
    for (let i = n; i < n + 10_000; i++) text += bigLine(i);
    yield Buffer.from(text);
  }
}

/** VmRSS / VmHWM of a process, in bytes. */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Peak RSS growth of `pid` while `work` runs (the peak is reset first, through clear_refs). */
async function peakGrowth(pid: number, work: () => Promise<void>): Promise<number> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
  const before = await memoryOf(pid);
  await work();
  return (await memoryOf(pid)).peak - before.rss;
}

describe('session export and import', () => {
  let service: TestService;
  let client: Client;
  let owner: PgClient;
  let dir: string;
  let keyA: string;
  let keyB: string;

  beforeAll(async () => {
    // A 100 MB upload or import is charged to its tenant's byte rate and would hold its next append back; rates are tested in faults/quotas.
    service = await startService({ env: { TENANT_BYTE_RATE: '0' } });
    client = new Client(service.baseUrl);
    owner = new PgClient({ connectionString: service.dbUrl });
    await owner.connect();
    ({ key: keyA } = await client.createTenant('transfer-a'));
    ({ key: keyB } = await client.createTenant('transfer-b'));
    dir = await mkdtemp(join(tmpdir(), 'transfer-'));
  });
  afterAll(async () => {
    await owner?.end();
    await rm(dir, { recursive: true, force: true });
    await service?.stop();
  });

  const exportTo = async (key: string, sessionId: string, file: string) => {
    const res = await fetch(`${service.baseUrl}/v1/sessions/${encodeURIComponent(sessionId)}/export`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    await pipeline(Readable.fromWeb(res.body as any), createWriteStream(file));
  };
  const importFrom = async (key: string, body: RequestInit['body'], id?: string): Promise<HttpResult> => {
    const res = await fetch(`${service.baseUrl}/v1/sessions/import${id ? `?id=${encodeURIComponent(id)}` : ''}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson' },
      body,
      duplex: 'half',
    } as RequestInit);
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
  };
  const importFile = (key: string, file: string, id?: string) => importFrom(key, Readable.toWeb(createReadStream(file)) as any, id);
  const contexts = async (agent: Agent) => {
    const all: Record<string, unknown> = {};
    for (const format of FORMATS) {
      const { sessionId: _sessionId, ...context } = await agent.context(format);
      all[format] = context;
    }
    return all;
  };
  const rowCounts = async (sessionId: string) => {
    const { rows } = await owner.query(
      `SELECT (SELECT count(*) FROM sessions WHERE session_id = $1)::int AS sessions,
              (SELECT count(*) FROM session_events WHERE session_id = $1)::int AS events,
              (SELECT count(*) FROM session_tool_calls WHERE session_id = $1)::int AS calls,
              (SELECT count(*) FROM tool_output_refs WHERE session_id = $1)::int AS refs,
              (SELECT count(*) FROM tool_output_contents)::int AS contents,
              (SELECT count(*) FROM tool_output_chunks)::int AS chunks`,
      [sessionId],
    );
    return rows[0];
  };
  const rawSha256 = async (key: string, refId: string) => {
    const res = await fetch(`${service.baseUrl}/v1/tool-outputs/${refId}/raw`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const hash = createHash('sha256');
    for await (const piece of Readable.fromWeb(res.body as any)) hash.update(piece as Buffer);
    return hash.digest('hex');
  };
  const refsOf = (events: any[]) =>
    events.flatMap((e) => (e.type === 'message.added' ? e.data.message.parts.filter((p: any) => p.outputRef).map((p: any) => p.outputRef.id) : []));

  /** A session with tool outputs (turn 2's larger than its view, so stored; the others kept inline), a pin, a compaction pivot and events after it. */
  async function richSession(id: string): Promise<Agent> {
    const agent = await agentSession(client, keyA, id);
    for (let turn = 1; turn <= 3; turn++) await agent.append(turnEvents(id, turn, turn === 2 ? 3000 : undefined));
    const pinned = await client.request('POST', `${agent.path}/pins`, { key: keyA, body: { text: 'PIN: deploy only to eu-west-1.' } });
    expect(pinned.status).toBe(201);
    const compacted = await client.request('POST', `${agent.path}/compactions`, { key: keyA, body: { wait: true } });
    expect(compacted.status).toBe(200);
    await agent.append(turnEvents(id, 4));
    await agent.append([{ type: 'step.finished', data: { usage: { input_tokens: 3_000, output_tokens: 100 } } }]);
    const events = await agent.events();
    expect(events.some((e) => e.type === 'compaction.completed')).toBe(true);
    expect(events.some((e) => e.type === 'pin.added')).toBe(true);
    return agent;
  }

  it('round trip into another tenant: the same events (seqs, ids, data, times), the same context in every format, the same tool outputs by ref, line range and grep', async () => {
    const source = await richSession('rich-1');
    const file = join(dir, 'rich-1.jsonl');
    await exportTo(keyA, 'rich-1', file);
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ kind: 'session', format: 'session-store.session', version: 1, session: { id: 'rich-1', model: 'gpt-4.1', headSeq: (await source.state()).headSeq } });

    const imported = await importFile(keyB, file);
    expect(imported.status).toBe(201);
    expect(imported.headers.get('location')).toBe('/v1/sessions/rich-1');
    expect(imported.body).toMatchObject({ session: { id: 'rich-1', headSeq: lines[0].session.headSeq, createdAt: lines[0].session.createdAt }, renamedRefs: {} });
    const copy = new Agent(client, keyB, 'rich-1');

    const events = await source.events();
    expect(await copy.events()).toEqual(events);
    expect(await contexts(copy)).toEqual(await contexts(source));
    const { tokens: _t1, ...state } = await source.state();
    const { tokens: _t2, updatedAt: _u2, ...copyState } = await copy.state();
    expect(copyState).toEqual({ ...state, updatedAt: undefined });
    expect((await copy.compactions()).compactions).toEqual((await source.compactions()).compactions);

    const refs = refsOf(events);
    expect(refs.length).toBe(4);
    // Both kinds: the stored output travels as its own lines, the inline ones in their events, and land as they left.
    expect(lines.filter((l) => l.kind === 'tool_output').map((l) => l.ref)).toEqual([refs[1]]);
    const contentless = async (tenantName: string) =>
      (
        await owner.query(
          `SELECT r.ref_id FROM tool_output_refs r JOIN tenants t USING (tenant_id) WHERE t.name = $1 AND r.session_id = 'rich-1' AND r.content_id IS NULL ORDER BY r.attached_seq`,
          [tenantName],
        )
      ).rows.map((r) => r.ref_id);
    expect(await contentless('transfer-b')).toEqual([refs[0], refs[2], refs[3]]);
    expect(await contentless('transfer-a')).toEqual(await contentless('transfer-b'));
    for (const ref of refs) {
      for (const path of [`/v1/tool-outputs/${ref}?offset=5&limit=20`, `/v1/tool-outputs/${ref}/grep?pattern=${encodeURIComponent('value=\\d+7\\b')}`]) {
        const [a, b] = [await client.request('GET', path, { key: keyA }), await client.request('GET', path, { key: keyB })];
        expect({ path, status: b.status, body: b.body }).toEqual({ path, status: 200, body: a.body });
      }
      expect(await rawSha256(keyB, ref)).toBe(await rawSha256(keyA, ref));
    }
    // The ledger was rebuilt: an answered call cannot be answered twice, a new call can be made.
    const twice = await client.append(keyB, 'rich-1', { events: [{ type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'rich-1-call-4', output: 'again' }] } } }] });
    problem(twice, 400, 'duplicate_tool_result');
    await copy.append(turnEvents('rich-1', 5));
    await copy.expectValidForProviders();
  });

  it('into the same tenant under ?id=: the source is untouched; its ref ids, taken, are renamed wherever the log cites them', async () => {
    const source = await richSession('rich-2');
    const file = join(dir, 'rich-2.jsonl');
    await exportTo(keyA, 'rich-2', file);
    const taken = await importFile(keyA, file);
    problem(taken, 409, 'session_exists');

    const imported = await importFile(keyA, file, 'rich-2-copy');
    expect(imported.status).toBe(201);
    const renamed: Record<string, string> = imported.body.renamedRefs;
    const events = await source.events();
    expect(Object.keys(renamed).sort()).toEqual(refsOf(events).sort());
    const rename = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/out_[A-Za-z0-9_-]{22}/g, (id) => renamed[id] ?? id));
    const copy = new Agent(client, keyA, 'rich-2-copy');
    expect(await copy.events()).toEqual(rename(events));
    expect(await contexts(copy)).toEqual(rename(await contexts(source)));
    for (const [from, to] of Object.entries(renamed)) expect(await rawSha256(keyA, to)).toBe(await rawSha256(keyA, from));
    expect(await source.events()).toEqual(events);
  });

  it("a fork's export carries the outputs it inherited, inline and stored, and imports with the same reads", async () => {
    const source = await richSession('rich-fork-source');
    const events = await source.events();
    const atSeq = events.filter((e) => refsOf([e]).length > 0)[2].seq;
    const forked = await client.request('POST', `${source.path}/forks`, { key: keyA, body: { atSeq, id: 'rich-fork' } });
    expect(forked.status).toBe(201);
    const file = join(dir, 'rich-fork.jsonl');
    await exportTo(keyA, 'rich-fork', file);
    expect((await importFile(keyB, file)).status).toBe(201);
    const refs = refsOf(events.filter((e) => e.seq <= atSeq));
    expect(refs.length).toBe(3);
    for (const ref of refs) {
      const path = `/v1/tool-outputs/${ref}?offset=2&limit=5`;
      const [a, b] = [await client.request('GET', path, { key: keyA }), await client.request('GET', path, { key: keyB })];
      expect({ ref, status: b.status, body: b.body }).toEqual({ ref, status: 200, body: a.body });
    }
  });

  it("another tenant's session is a 404 to export, like an unknown one", async () => {
    await agentSession(client, keyA, 'private-1');
    for (const id of ['private-1', 'no-such-session']) {
      problem(await client.request('GET', `/v1/sessions/${id}/export`, { key: keyB }), 404, 'session_not_found');
    }
  });

  describe('bad input is a 400 naming the line, and leaves nothing', () => {
    let lines: string[];

    beforeAll(async () => {
      await richSession('bad-source');
      const file = join(dir, 'bad-source.jsonl');
      await exportTo(keyA, 'bad-source', file);
      lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    });

    const kindAt = (l: string) => JSON.parse(l).kind as string;
    const refLine = () => lines.findIndex((l) => kindAt(l) === 'tool_output');
    const firstOutput = () => JSON.parse(lines[refLine()]).ref as string;
    /** Without the first stored output's lines. */
    const withoutFirstOutput = () =>
      lines.filter((l) => !((kindAt(l) === 'tool_output' || kindAt(l) === 'tool_output.chunk') && JSON.parse(l).ref === firstOutput()));
    const cutAt = () => lines.findIndex((l, i) => i > 3 && kindAt(l) === 'event');
    const citing = (ref: () => string) => (body: string[]) => body.findIndex((l) => kindAt(l) === 'event' && l.includes(ref())) + 1;
    /** `lines` with the first event `pick` chooses rewritten by `edit`. */
    const editFirst = (pick: (event: any) => boolean, edit: (event: any) => void) => () => {
      let done = false;
      return lines.map((l) => {
        const value = JSON.parse(l);
        if (done || value.kind !== 'event' || !pick(value)) return l;
        done = true;
        edit(value);
        return JSON.stringify(value);
      });
    };
    const messageOf = (role: string) => (event: any) => event.type === 'message.added' && event.data.message.role === role;
    const citingResult = (event: any) => event.type === 'message.added' && event.data.message.parts.some((p: any) => p.outputRef);
    const withOutputFrom = (outputFrom: unknown) => editFirst(citingResult, (event) => (event.data.message.parts.find((p: any) => p.outputRef).outputFrom = outputFrom));
    const lineWith = (text: string) => (body: string[]) => body.findIndex((l) => l.includes(text)) + 1;
    // [what, body lines, code, line named]
    const cases: Array<[string, () => string[], string, (body: string[]) => number]> = [
      ['a truncated line', () => [...lines.slice(0, 6), lines[6].slice(0, 40)], 'invalid_json', () => 7],
      ['a file cut after a line', () => lines.slice(0, cutAt() + 1), 'missing_events', (body) => body.length],
      [
        'an event out of order',
        () => {
          const moved = [...lines];
          [moved[2], moved[3]] = [moved[3], moved[2]];
          return moved;
        },
        'event_out_of_order',
        () => 3,
      ],
      ['a ref to a missing output', withoutFirstOutput, 'unknown_output_ref', citing(firstOutput)],
      // An inline output's bytes are its event's: they must be what its ref's figures say.
      [
        'an inline output whose bytes are not its ref\'s',
        editFirst(citingResult, (event) => (event.data.message.parts.find((p: any) => p.outputRef).output += ' changed')),
        'output_ref_mismatch',
        lineWith(' changed"'),
      ],
      ['a wrong version', () => [JSON.stringify({ ...JSON.parse(lines[0]), version: 2 }), ...lines.slice(1)], 'unsupported_version', () => 1],
      [
        'output bytes that do not match their sha256',
        () => lines.map((l, i) => (i === refLine() ? JSON.stringify({ ...JSON.parse(l), sha256: '0'.repeat(64) }) : l)),
        'output_mismatch',
        () => refLine() + 1,
      ],
      // Byte ranges of a stored output are the service's to write: a reader would rebuild whatever they say.
      ['a tool result carrying outputFrom ranges far beyond its output', withOutputFrom([[0, 1e12]]), 'unknown_field', lineWith('"outputFrom"')],
      ['a tool result carrying outputFrom reversed', withOutputFrom([[9, 2]]), 'unknown_field', lineWith('"outputFrom"')],
      ['a tool result carrying outputFrom false', withOutputFrom(false), 'unknown_field', lineWith('"outputFrom"')],
      // The parts an append refuses, refused in an import too.
      ['a text part whose text is a number', editFirst(messageOf('user'), (e) => (e.data.message.parts = [{ type: 'text', text: 42 }])), 'invalid_field', lineWith('"text":42')],
      [
        'a reasoning part whose text is an object',
        editFirst(messageOf('assistant'), (e) => (e.data.message.parts = [{ type: 'reasoning', text: { a: 1 } }])),
        'invalid_field',
        lineWith('"text":{"a":1}'),
      ],
      [
        'a file part without mediaType',
        editFirst(messageOf('user'), (e) => (e.data.message.parts = [{ type: 'file', url: 'https://example.com/no-media-type.png' }])),
        'invalid_field',
        lineWith('no-media-type'),
      ],
    ];

    it.each(cases)('%s', async (_what, bodyLines, code, lineOf) => {
      const before = await rowCounts('bad-copy');
      const body = bodyLines();
      const res = await importFrom(keyB, `${body.join('\n')}\n`, 'bad-copy');
      problem(res, 400, code);
      expect(res.body.line).toBe(lineOf(body));
      expect(res.body.detail).toContain(`line ${lineOf(body)}`);
      expect(await rowCounts('bad-copy')).toEqual(before);
      expect((await client.request('GET', '/v1/sessions/bad-copy', { key: keyB })).status).toBe(404);
    });

    // Service events carry what the service writes; one that lacks it is refused, not stored to fail every read later.
    const header = () => lines[0];
    const created = () => lines.find((l) => JSON.parse(l).type === 'session.created')!;
    const event = (seq: number, type: string, data: unknown) =>
      JSON.stringify({ kind: 'event', seq, id: `svc-${seq}`, type, data, createdAt: new Date().toISOString() });
    const withHead = (head: string, headSeq: number) => JSON.stringify({ ...JSON.parse(head), session: { ...JSON.parse(head).session, headSeq } });
    const marker = (seq: number) => event(seq, 'compaction.requested', { auto: false, reason: 'manual' });
    const pivot = (seq: number, data: object) =>
      event(seq, 'compaction.completed', {
        summary: 'done',
        prefix: [],
        strategy: 'opencode',
        model: 'gpt-4.1',
        tokensBefore: 100,
        tokensAfter: 10,
        messagesCompacted: 1,
        durationMs: 5,
        ...data,
      });
    const userText = (seq: number, part: object) => event(seq, 'message.added', { message: { id: `m-${seq}`, role: 'user', parts: [part] } });
    // [what, body lines, code, line named]
    it.each<[string, () => string[], string, number]>([
      ['a pin without its text', () => [withHead(header(), 2), created(), event(2, 'pin.added', {})], 'invalid_field', 3],
      [
        'a prune record without its calls, hidden from the head by a later pivot',
        () => [withHead(header(), 4), created(), event(2, 'tool_outputs.pruned', {}), marker(3), pivot(4, { markerSeq: 3, coveredThroughSeq: 3 })],
        'invalid_field',
        3,
      ],
      [
        'a malformed message hidden from the head by a forged pivot',
        () => [withHead(header(), 4), created(), userText(2, { type: 'text' }), marker(3), pivot(4, { markerSeq: 3, coveredThroughSeq: 2 })],
        'invalid_field',
        3,
      ],
      [
        'a pivot answering no compaction request',
        () => [withHead(header(), 3), created(), userText(2, { type: 'text', text: 'hi' }), pivot(3, { markerSeq: 2, coveredThroughSeq: 2 })],
        'invalid_log',
        4,
      ],
      [
        'a pivot carrying an overhead no provider count in the log holds',
        () => [withHead(header(), 4), created(), userText(2, { type: 'text', text: 'hi' }), marker(3), pivot(4, { markerSeq: 3, coveredThroughSeq: 2, overhead: 5_000_000 })],
        'invalid_log',
        5,
      ],
      [
        'a pivot carrying a pin the log never added',
        () => [withHead(header(), 4), created(), userText(2, { type: 'text', text: 'hi' }), marker(3), pivot(4, { markerSeq: 3, coveredThroughSeq: 2, pins: [{ pinId: 'p', text: 'x', seq: 2 }] })],
        'invalid_log',
        5,
      ],
    ])('a service event checked against its log (%s) is a 400 naming the line, and leaves nothing', async (_what, bodyLines, code, line) => {
      const before = await rowCounts('bad-copy');
      const res = await importFrom(keyB, `${bodyLines().join('\n')}\n`, 'bad-copy');
      expect({ status: res.status, code: res.body?.code, line: res.body?.line }).toEqual({ status: 400, code, line });
      expect(await rowCounts('bad-copy')).toEqual(before);
      expect((await client.request('GET', '/v1/sessions/bad-copy', { key: keyB })).status).toBe(404);
    });
  });

  it('the same export imported twice at once into another tenant: both land, the second under renamed refs', async () => {
    await richSession('twice');
    const file = join(dir, 'twice.jsonl');
    await exportTo(keyA, 'twice', file);
    const [first, second] = await Promise.all([importFile(keyB, file, 'twice-1'), importFile(keyB, file, 'twice-2')]);
    expect([first.status, second.status]).toEqual([201, 201]);
    const renamedCounts = [first, second].map((r) => Object.keys(r.body.renamedRefs).length).sort();
    expect(renamedCounts[0]).toBe(0);
    expect(renamedCounts[1]).toBeGreaterThan(0);
  });

  it('a 100 MB output: byte for byte equal after the round trip, the API growing by less than 64 MiB while exporting and while importing', async () => {
    // The model's own window: a 100 MB result's view stays far below its trigger, so no compaction runs meanwhile.
    await client.createSession(keyA, { id: 'big-1', model: 'gpt-4.1' });
    const agent = new Agent(client, keyA, 'big-1');
    const uploaded = await fetch(`${service.baseUrl}${agent.path}/tool-outputs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyA}`, 'content-type': 'text/plain' },
      body: Readable.toWeb(Readable.from(bigOutput())) as any,
      duplex: 'half',
    } as RequestInit);
    expect(uploaded.status).toBe(201);
    const { ref } = (await uploaded.json()) as any;
    expect(ref.byte_size).toBe(BIG_OUTPUT_LINES * 100);
    await agent.append([
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'big-call', name: 'bash', input: { cmd: 'cat big.log' } }] } } },
      { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'big-call', outputRef: { id: ref.id } }] } } },
    ]);

    const file = join(dir, 'big-1.jsonl');
    const pid = service.api.child.pid!;
    const exportGrowth = await peakGrowth(pid, () => exportTo(keyA, 'big-1', file));
    let imported: HttpResult | undefined;
    const importGrowth = await peakGrowth(pid, async () => {
      imported = await importFile(keyB, file);
    });
    expect(imported!.status).toBe(201);
    // In MiB, so a failure shows the figure.
    expect(exportGrowth / 2 ** 20).toBeLessThan(EXPORT_MEMORY_BOUND_MIB);
    expect(importGrowth / 2 ** 20).toBeLessThan(IMPORT_MEMORY_BOUND_MIB);

    expect(await rawSha256(keyB, ref.id)).toBe(ref.sha256);
    const copy = new Agent(client, keyB, 'big-1');
    expect(await copy.events()).toEqual(await agent.events());
    expect(await contexts(copy)).toEqual(await contexts(agent));
    const range = `/v1/tool-outputs/${ref.id}?offset=777777&limit=3`;
    const read = await client.request('GET', range, { key: keyB });
    expect(read.body).toEqual((await client.request('GET', range, { key: keyA })).body);
    expect(JSON.stringify(read.body)).toContain('line 777777 ');
    const grep = `/v1/tool-outputs/${ref.id}/grep?pattern=${encodeURIComponent('^ *line 99999[0-9] ')}&limit=20`;
    expect((await client.request('GET', grep, { key: keyB })).body).toEqual((await client.request('GET', grep, { key: keyA })).body);
  });
});
