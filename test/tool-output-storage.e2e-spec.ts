import { Client as PgClient } from 'pg';
import { turnEvents } from './support/agent-script';
import { Client } from './support/client';
import { connectAs } from './support/database';
import { startService, TestService } from './support/service';

/**
 * Tool outputs stored once: an event keeps no second copy of an output the
 * tool-output store holds, the store no copy of one its event keeps inline
 * (shown whole), and every reader answers as before. "Before" is the same log imported into another tenant:
 * an import writes its events with their views in place, as every append
 * did until now, so the two sessions must read the same everywhere.
 */

const FORMATS = ['neutral', 'openai', 'openai-responses', 'anthropic', 'ai-sdk'] as const;
const SESSION = 'stored-once';
// Every kind of character JSON escapes (quotes, backslashes, tabs, control characters) and non-ASCII: the raw log
// splices each output, escaped on its own, into its event's JSON, which must read back as the event written.
const bigOutput = Array.from({ length: 3000 }, (_, i) => `2026-11-25T00:00:00Z INFO request ${i + 1} status=200 ünïcödé "q" C:\\tmp\t\u0001 ${'x'.repeat(i % 50)}`).join('\n');
const toolTurn = (callId: string, output: string) => [
  { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name: 'bash', input: { command: 'cat big.log' } }] } } },
  { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, output }], metadata: { kind: 'log', lines: 3000 } } } },
];

describe('tool outputs stored once', () => {
  let service: TestService;
  let client: Client;
  let owner: PgClient;
  let keyA: string;
  let keyB: string;

  beforeAll(async () => {
    service = await startService();
    client = new Client(service.baseUrl);
    owner = await connectAs(service.dbUrl);
    ({ key: keyA } = await client.createTenant('stored-once'));
    ({ key: keyB } = await client.createTenant('stored-as-before'));
  });
  afterAll(async () => {
    await owner?.end();
    await service?.stop();
  });

  const append = async (key: string, sessionId: string, events: unknown[]) => {
    const res = await client.append(key, sessionId, { events });
    if (res.status !== 201) throw new Error(`append: ${res.status} ${res.text}`);
  };
  const toolRows = async (sessionId: string) =>
    (
      await owner.query(
        `SELECT seq, data, octet_length(data::text) AS bytes FROM session_events
          WHERE session_id = $1 AND data->'message'->>'role' = 'tool' ORDER BY seq`,
        [sessionId],
      )
    ).rows.map((r) => ({ seq: Number(r.seq), part: r.data.message.parts[0], bytes: Number(r.bytes) }));
  const exported = async (key: string, sessionId: string) => {
    const res = await fetch(`${service.baseUrl}/v1/sessions/${sessionId}/export`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    return res.text();
  };
  const context = async (key: string, sessionId: string, format: string, atSeq?: number) => {
    const res = await client.request('GET', `/v1/sessions/${sessionId}/context?format=${format}${atSeq ? `&atSeq=${atSeq}` : ''}`, { key });
    expect(res.status).toBe(200);
    const { sessionId: _id, headSeq: _head, atSeq: _at, ...view } = res.body;
    return view;
  };
  const lines = async (key: string, refId: string) => (await client.request('GET', `/v1/tool-outputs/${refId}?offset=3&limit=4`, { key })).body;
  /** Events as the API shows them; `origin` only says where a fork's event was first appended. */
  const withoutOrigin = (events: any[]) => events.map(({ origin: _origin, ...event }) => event);

  it("keeps each inline output's text once, and every read answers as a session whose events hold the views", async () => {
    await client.createSession(keyA, { id: SESSION, system: 'You are a careful coding agent.', config: { compaction: { enabled: false } } });
    // A turn in one append, a turn one message per append, then a result whose view is truncated.
    const [turn1, turn2] = [turnEvents(SESSION, 1), turnEvents(SESSION, 2)];
    await append(keyA, SESSION, turn1);
    for (const event of turn2) await append(keyA, SESSION, [event]);
    await append(keyA, SESSION, toolTurn('call-big', bigOutput));
    await append(keyA, SESSION, toolTurn('call-empty', ''));

    // Stored once: outputs shown whole are their events' alone; the truncated one's event keeps only its view's own text.
    const sent = (turn: typeof turn1) => (turn[2].data.message.parts[0] as { output: string }).output;
    const stored = await toolRows(SESSION);
    expect(stored.map((r) => [r.part.output, r.part.outputFrom === true, Array.isArray(r.part.outputFrom)])).toEqual([
      [sent(turn1), false, false],
      [sent(turn2), false, false],
      [undefined, false, true],
      ['', false, false],
    ]);
    expect(stored[2].bytes).toBeLessThan(1500);
    const contentless = await owner.query(
      `SELECT count(*)::int AS n FROM tool_output_refs r JOIN tenants t USING (tenant_id) WHERE t.name = 'stored-once' AND r.session_id = $1 AND r.content_id IS NULL`,
      [SESSION],
    );
    expect(contentless.rows[0].n).toBe(3);
    const events = await client.allEvents(keyA, SESSION);
    const results = events.filter((e) => e.data.message?.role === 'tool').map((e) => e.data.message.parts[0]);
    expect(results.map((p) => p.output)).toEqual([sent(turn1), sent(turn2), expect.stringContaining('Total output lines: 3000'), '']);
    expect(results[2]).toMatchObject({ truncated: true, outputRef: { byte_size: Buffer.byteLength(bigOutput), line_count: 3000 } });

    // The same log as it was stored until now: imported into tenant B, whose events hold the views.
    const lines1 = await exported(keyA, SESSION);
    const imported = await fetch(`${service.baseUrl}/v1/sessions/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyB}`, 'content-type': 'application/x-ndjson' },
      body: lines1,
    });
    expect(imported.status).toBe(201);
    expect((await toolRows(SESSION)).length).toBe(8);
    const asBefore = (await owner.query(`SELECT data FROM session_events e JOIN tenants t USING (tenant_id) WHERE t.name = 'stored-as-before' AND e.data->'message'->>'role' = 'tool'`)).rows;
    expect(asBefore.map((r) => typeof r.data.message.parts[0].output)).toEqual(['string', 'string', 'string', 'string']);

    // The raw log, key order included; the export; every format of the context, now and at an earlier seq.
    const before = await client.allEvents(keyB, SESSION);
    expect(JSON.stringify(events)).toBe(JSON.stringify(before));
    expect(await exported(keyB, SESSION)).toBe(lines1);
    const midSeq = events.find((e) => e.data.message?.parts?.[0]?.callId === turn2[1].data.message.parts[1].callId && e.data.message.role === 'tool').seq;
    for (const format of FORMATS) {
      expect({ format, view: await context(keyA, SESSION, format) }).toEqual({ format, view: await context(keyB, SESSION, format) });
      expect({ format, view: await context(keyA, SESSION, format, midSeq) }).toEqual({ format, view: await context(keyB, SESSION, format, midSeq) });
    }
    // Line reads come from the store, as before.
    for (const result of results) expect(await lines(keyA, result.outputRef.id)).toEqual(await lines(keyB, result.outputRef.id));

    // A fork outlives its source: the rows it reads are copied on delete, the outputs' refs move to it.
    const forked = await client.request('POST', `/v1/sessions/${SESSION}/forks`, { key: keyA, body: { atSeq: midSeq, id: `${SESSION}-fork` } });
    expect(forked.status).toBe(201);
    expect((await client.request('DELETE', `/v1/sessions/${SESSION}`, { key: keyA })).status).toBe(204);
    const forkEvents = await client.allEvents(keyA, `${SESSION}-fork`);
    expect(withoutOrigin(forkEvents)).toEqual(before.filter((e) => e.seq <= midSeq));
    for (const format of FORMATS) {
      expect({ format, view: await context(keyA, `${SESSION}-fork`, format) }).toEqual({ format, view: await context(keyB, SESSION, format, midSeq) });
    }
  });
});
