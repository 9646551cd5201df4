import { createHash } from 'node:crypto';
import http from 'node:http';
import { Client as PgClient } from 'pg';
import { Client } from './support/client';
import { connectAs } from './support/database';
import { startService, TestService, waitFor } from './support/service';

/**
 * The tool-output cache end to end: streamed uploads, results that
 * reference them or carry their output inline, line reads, grep, raw bytes,
 * the model-callable tools, the view-time trim, and every bad input the
 * issue lists. A second service with a small upload limit, a 100 ms grep cap
 * and a 1 s retention covers the limits and the garbage collector.
 */

const TOTAL_LINES = 380_000;
/** Line n (1-based) of the generated output: about 57 bytes each, 21 MB in all. */
const lineText = (n: number) => `line ${n}: ${n % 1000 === 7 ? 'ERROR disk quota exceeded' : 'ok'} ${'x'.repeat(40)}`;

/** The generated output as a stream of ~64 KiB pieces, with its sha256 computed on the way. */
function generatedOutput(totalLines: number, hash = createHash('sha256')): { body: ReadableStream<Uint8Array>; hash: typeof hash } {
  let n = 1;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (n > totalLines) return controller.close();
      const lines: string[] = [];
      for (let size = 0; size < 64 * 1024 && n <= totalLines; n++) {
        const line = `${lineText(n)}\n`;
        lines.push(line);
        size += line.length;
      }
      const piece = Buffer.from(lines.join(''));
      hash.update(piece);
      controller.enqueue(piece);
    },
  });
  return { body, hash };
}

const numbered = (n: number, text: string) => `${String(n).padStart(6, ' ')}\t${text}`;
const toolCall = (callId: string, name = 'bash', id?: string) => ({
  ...(id ? { id } : {}),
  type: 'message.added',
  data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name, input: { cmd: 'run' } }] } },
});
const resultWithRef = (callId: string, refId: string, id?: string) => ({
  ...(id ? { id } : {}),
  type: 'message.added',
  data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, outputRef: { id: refId } }] } },
});
const resultInline = (callId: string, output: string, id?: string) => ({
  ...(id ? { id } : {}),
  type: 'message.added',
  data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, output }] } },
});

async function upload(service: TestService, key: string, sessionId: string, body: RequestInit['body'], contentType = 'text/plain') {
  const response = await fetch(`${service.baseUrl}/v1/sessions/${encodeURIComponent(sessionId)}/tool-outputs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: response.status, body: (await response.json()) as any };
}

/** A body sent chunked (no Content-Length) through node:http, which keeps the response even when the server stops reading. */
function streamUpload(service: TestService, key: string, sessionId: string, totalBytes: number): Promise<{ status: number; body: any }> {
  const url = new URL(`${service.baseUrl}/v1/sessions/${sessionId}/tool-outputs`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { method: 'POST', hostname: url.hostname, port: url.port, path: url.pathname, headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(parts).toString()) }));
      },
    );
    // Writes fail once the server has answered and closed; only an error with no answer after it counts.
    req.on('error', (error) => setTimeout(() => reject(error), 2000));
    const piece = Buffer.alloc(64 * 1024, 'z');
    let sent = 0;
    const write = () => {
      while (sent < totalBytes) {
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

describe('tool-output cache', () => {
  let service: TestService;
  let client: Client;
  let owner: PgClient;
  let tenantId: string;
  let key: string;
  let otherKey: string;

  const get = (path: string, asKey = key) => client.request('GET', path, { key: asKey });
  const appendOk = async (sessionId: string, events: unknown[]) => {
    const res = await client.append(key, sessionId, { events });
    if (res.status !== 201) throw new Error(`append: ${res.status} ${res.text}`);
    return res.body;
  };
  const toolMessages = async (sessionId: string) =>
    (await client.allEvents(key, sessionId)).filter((e) => e.type === 'message.added' && e.data.message.role === 'tool');
  const counts = async () => {
    const { rows } = await owner.query(
      `SELECT (SELECT count(*) FROM tool_output_contents WHERE tenant_id = $1)::int AS contents,
              (SELECT count(*) FROM tool_output_contents WHERE tenant_id = $1 AND sha256 IS NULL)::int AS staged,
              (SELECT count(*) FROM tool_output_chunks WHERE tenant_id = $1)::int AS chunks,
              (SELECT count(*) FROM tool_output_refs WHERE tenant_id = $1)::int AS refs`,
      [tenantId],
    );
    return rows[0] as { contents: number; staged: number; chunks: number; refs: number };
  };

  beforeAll(async () => {
    service = await startService();
    client = new Client(service.baseUrl);
    owner = await connectAs(service.dbUrl);
    ({ tenantId, key } = await client.createTenant('outputs'));
    ({ key: otherKey } = await client.createTenant('someone else'));
  });

  afterAll(async () => {
    await owner?.end();
    await service?.stop();
  });

  describe('a 21 MB output uploaded as a stream, referenced by a result, read and grepped by the model', () => {
    const sessionId = 'big-output';
    let ref: { id: string; byte_size: number; line_count: number; sha256: string };

    beforeAll(async () => {
      await client.createSession(key, { id: sessionId, config: { toolOutput: { mode: 'head_tail' } } });
      const { body, hash } = generatedOutput(TOTAL_LINES);
      const res = await upload(service, key, sessionId, body);
      expect(res.status).toBe(201);
      ref = res.body.ref;
      expect(ref.sha256).toBe(hash.digest('hex'));
      expect(ref.line_count).toBe(TOTAL_LINES);
      expect(ref.byte_size).toBeGreaterThan(20 * 1024 * 1024);
      expect(ref.id).toMatch(/^out_[A-Za-z0-9_-]{22}$/);
      // The view per the session's defaults (head_tail, 2,000 lines): Codex's header, both ends, the note.
      expect(res.body.truncated).toBe(true);
      expect(res.body.view.startsWith(`Total output lines: ${TOTAL_LINES}\n\n${lineText(1)}\n`)).toBe(true);
      expect(res.body.view).toContain(`${lineText(TOTAL_LINES)}\n`);
      expect(res.body.view).toContain(`stored whole under ref_id "${ref.id}"`);
    });

    it('a result referencing the upload stores its view and the real figures', async () => {
      await appendOk(sessionId, [toolCall('call-big'), resultWithRef('call-big', ref.id)]);
      const [tool] = await toolMessages(sessionId);
      const part = tool.data.message.parts[0];
      expect(part.outputRef).toEqual(ref);
      expect(part.truncated).toBe(true);
      expect(part.name).toBe('bash');
      expect(part.output).toMatch(/^Total output lines: 380000\n\nline 1: ok x+\n/);
      expect(part.output).toContain('…');
      expect(Buffer.byteLength(part.output)).toBeLessThan(60 * 1024);
    });

    it('reads a line range as numbered lines, near the end, and past the end', async () => {
      const mid = await get(`/v1/tool-outputs/${ref.id}?offset=123456&limit=3`);
      expect(mid.status).toBe(200);
      expect(mid.body).toEqual({
        ref,
        offset: 123456,
        lines: [123456, 123457, 123458].map((n) => numbered(n, lineText(n))).join('\n'),
        lineCount: 3,
        totalLines: TOTAL_LINES,
        nextOffset: 123459,
      });
      const end = await get(`/v1/tool-outputs/${ref.id}?offset=${TOTAL_LINES - 1}&limit=100`);
      expect(end.body.lines).toBe([TOTAL_LINES - 1, TOTAL_LINES].map((n) => numbered(n, lineText(n))).join('\n'));
      expect(end.body.nextOffset).toBeNull();
      const past = await get(`/v1/tool-outputs/${ref.id}?offset=${TOTAL_LINES + 1}`);
      expect(past.status).toBe(200);
      expect(past.body).toMatchObject({ lines: '', lineCount: 0, totalLines: TOTAL_LINES, nextOffset: null });
    });

    it('greps it through the model-callable tool endpoint, arguments as the model wrote them', async () => {
      const grep = await client.request('POST', `/v1/sessions/${sessionId}/tool-calls`, {
        key,
        body: { name: 'tool_output_cache_grep', arguments: JSON.stringify({ ref_id: ref.id, pattern: 'line 32\\d007: ERROR', context: 1 }) },
      });
      expect(grep.status).toBe(200);
      expect(grep.body.isError).toBe(false);
      const expected = [320007, 321007, 322007, 323007, 324007, 325007, 326007, 327007, 328007, 329007]
        .map((n) => [`${n - 1}-${lineText(n - 1)}`, `${n}:${lineText(n)}`, `${n + 1}-${lineText(n + 1)}`].join('\n'))
        .join('\n--\n');
      expect(grep.body.output).toBe(`${expected}\n\n(10 matches for /line 32\\d007: ERROR/ in ${TOTAL_LINES} lines)`);

      const read = await client.request('POST', `/v1/sessions/${sessionId}/tool-calls`, {
        key,
        body: { name: 'tool_output_cache', arguments: { ref_id: ref.id, offset: 200000, limit: 2 } },
      });
      expect(read.body).toEqual({
        output: `${numbered(200000, lineText(200000))}\n${numbered(200001, lineText(200001))}\n\n(showing lines 200000-200001 of ${TOTAL_LINES}; next offset 200002)`,
        isError: false,
      });
    });

    it('greps over HTTP with context, a match limit and the partial flag', async () => {
      const res = await get(`/v1/tool-outputs/${ref.id}/grep?pattern=${encodeURIComponent('error DISK')}&ignoreCase=true&limit=3`);
      expect(res.status).toBe(200);
      expect(res.body.matches.map((m: any) => m.line)).toEqual([7, 1007, 2007]);
      expect(res.body.matches[0]).toEqual({ line: 7, text: lineText(7), before: [], after: [] });
      expect(res.body).toMatchObject({ truncated: true, partial: { reason: 'matches' } });
      const all = await get(`/v1/tool-outputs/${ref.id}/grep?pattern=${encodeURIComponent('^line 329999:')}`);
      expect(all.body).toMatchObject({ truncated: false, partial: null, scannedLines: TOTAL_LINES, scannedBytes: ref.byte_size });
      expect(all.body.matches.map((m: any) => m.line)).toEqual([329999]);
    });

    it('streams the original bytes from /raw', async () => {
      const response = await fetch(`${service.baseUrl}/v1/tool-outputs/${ref.id}/raw`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/octet-stream');
      expect(Number(response.headers.get('content-length'))).toBe(ref.byte_size);
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(ref.sha256);
    });

    it('offers the two tools in every context format', async () => {
      const names = (format: string, tools: any[]) =>
        tools.map((t) => (format === 'openai' ? t.function.name : t.name));
      for (const format of ['neutral', 'openai', 'openai-responses', 'anthropic']) {
        const res = await get(`/v1/sessions/${sessionId}/context?format=${format}&tools=tool_output_cache`);
        expect(res.status).toBe(200);
        expect(names(format, res.body.tools)).toEqual(['tool_output_cache', 'tool_output_cache_grep']);
      }
      const anthropic = await get(`/v1/sessions/${sessionId}/context?format=anthropic&tools=tool_output_cache`);
      expect(anthropic.body.tools[0].input_schema.required).toEqual(['ref_id']);
      const plain = await get(`/v1/sessions/${sessionId}/context`);
      expect(plain.body.tools).toBeUndefined();
      expect((await get(`/v1/sessions/${sessionId}/context?tools=bash`)).status).toBe(400);
    });
  });

  describe('inline outputs', () => {
    it('stores a full output given inline; the context shows the truncated view and its ref; a replay adds nothing', async () => {
      const sessionId = 'inline';
      await client.createSession(key, { id: sessionId });
      const output = Array.from({ length: 3000 }, (_, i) => `row ${i + 1}`).join('\n');
      const events = [toolCall('call-inline', 'seq', 'call-event'), resultInline('call-inline', output, 'result-event')];
      const first = await appendOk(sessionId, events);
      const before = await counts();

      const ctx = await get(`/v1/sessions/${sessionId}/context?format=openai`);
      const toolMessage = ctx.body.messages.find((m: any) => m.role === 'tool');
      const [tool] = await toolMessages(sessionId);
      const { outputRef } = tool.data.message.parts[0];
      expect(outputRef).toMatchObject({ byte_size: Buffer.byteLength(output), line_count: 3000 });
      expect(outputRef.sha256).toBe(createHash('sha256').update(output).digest('hex'));
      // The default preset (spec-000) keeps the head: 2,000 lines, then the marker.
      expect(toolMessage.content.startsWith('Total output lines: 3000\n\nrow 1\nrow 2\n')).toBe(true);
      expect(toolMessage.content).toContain('row 2000\n…');
      expect(toolMessage.content).not.toContain('row 2001');
      expect(toolMessage.content).toContain('"offset":2001');
      expect(toolMessage.content).toContain(`ref_id "${outputRef.id}"`);
      expect((await get(`/v1/tool-outputs/${outputRef.id}?offset=1500&limit=1`)).body.lines).toBe(numbered(1500, 'row 1500'));

      const replay = await client.append(key, sessionId, { events });
      expect(replay.status).toBe(200);
      expect(replay.body.events).toEqual(first.events);
      expect(await counts()).toEqual(before);
    });

    it('stores identical outputs once per tenant', async () => {
      await client.createSession(key, { id: 'dedup-a' });
      await client.createSession(key, { id: 'dedup-b' });
      // Larger than the view: stored, not kept inline.
      const output = Array.from({ length: 3000 }, (_, i) => `same ${Date.now()} ${i}`).join('\n');
      const before = await counts();
      await appendOk('dedup-a', [toolCall('c-a'), resultInline('c-a', output)]);
      await appendOk('dedup-b', [toolCall('c-b'), resultInline('c-b', output)]);
      const after = await counts();
      expect(after.contents - before.contents).toBe(1);
      expect(after.refs - before.refs).toBe(2);
    });

    describe('an output its view shows whole, kept in its event, reads as the same bytes stored', () => {
      const sessionId = 'kept-inline';
      // Unicode, a tab, a long line, an empty line and no final newline: whatever line numbering and grep windows must agree on.
      const output = [
        ...Array.from({ length: 40 }, (_, i) => `${i + 1}\tcheck ${i % 7 === 3 ? 'ERROR ünïcödé' : 'ok'} ${'·'.repeat(i)}`),
        '',
        `long ${'y'.repeat(1500)} ERROR at the end`,
        'last line',
      ].join('\n');
      let inline: { id: string; byte_size: number; line_count: number; sha256: string };
      let stored: { id: string; byte_size: number; line_count: number; sha256: string };
      let resultSeq: number;
      /** The same answer for both refs (each body naming its own ref); the inline one's body. */
      const same = async (request: (refId: string) => Promise<{ status: number; body: any }>) => {
        const [a, b] = [await request(inline.id), await request(stored.id)];
        expect(a.status).toBe(200);
        expect(JSON.parse(JSON.stringify(a.body).replaceAll(inline.id, stored.id))).toEqual(b.body);
        return a.body;
      };

      beforeAll(async () => {
        await client.createSession(key, { id: sessionId });
        const before = await counts();
        const appended = await appendOk(sessionId, [toolCall('call-kept'), resultInline('call-kept', output)]);
        resultSeq = appended.events[1].seq;
        const after = await counts();
        // No content, no chunk: one ref row, naming the event.
        expect({ contents: after.contents - before.contents, chunks: after.chunks - before.chunks, refs: after.refs - before.refs }).toEqual({ contents: 0, chunks: 0, refs: 1 });
        const part = (await toolMessages(sessionId))[0].data.message.parts[0];
        inline = part.outputRef;
        // The upload of the same bytes is the stored counterpart.
        stored = (await upload(service, key, sessionId, output)).body.ref;
        expect(part).toMatchObject({ output, truncated: false });
      });

      it('the event holds the output, with the figures a stored copy has; its ref row has no content and names the event', async () => {
        const { id: _inlineId, ...figures } = inline;
        const { id: _storedId, ...storedFigures } = stored;
        expect(figures).toEqual(storedFigures);
        expect(figures).toEqual({ byte_size: Buffer.byteLength(output), line_count: 43, sha256: createHash('sha256').update(output).digest('hex') });
        expect(inline.id).toMatch(/^out_[A-Za-z0-9_-]{22}$/);
        const { rows } = await owner.query(`SELECT content_id, session_id, attached_seq::int AS seq FROM tool_output_refs WHERE tenant_id = $1 AND ref_id = $2`, [tenantId, inline.id]);
        expect(rows).toEqual([{ content_id: null, session_id: sessionId, seq: resultSeq }]);
        const { rows: raw } = await owner.query(`SELECT data FROM session_events WHERE tenant_id = $1 AND session_id = $2 AND seq = $3`, [tenantId, sessionId, resultSeq]);
        expect(raw[0].data.message.parts[0].output).toBe(output);
      });

      it('line reads: from the start, a range, a long line, the end, past the end', async () => {
        expect((await same((id) => get(`/v1/tool-outputs/${id}`))).totalLines).toBe(43);
        expect((await same((id) => get(`/v1/tool-outputs/${id}?offset=3&limit=4`))).lines).toBe([3, 4, 5, 6].map((n) => numbered(n, output.split('\n')[n - 1])).join('\n'));
        await same((id) => get(`/v1/tool-outputs/${id}?offset=40&limit=3`));
        expect((await same((id) => get(`/v1/tool-outputs/${id}?offset=43&limit=10`))).nextOffset).toBeNull();
        expect((await same((id) => get(`/v1/tool-outputs/${id}?offset=44`))).lines).toBe('');
      });

      it('grep: context, ignoreCase, the match limit, anchors, a match in a long line, no match', async () => {
        expect((await same((id) => get(`/v1/tool-outputs/${id}/grep?pattern=ERROR&context=1`))).matches.length).toBe(7);
        expect((await same((id) => get(`/v1/tool-outputs/${id}/grep?pattern=${encodeURIComponent('error ü')}&ignoreCase=true&limit=2`))).partial).toEqual({ reason: 'matches' });
        await same((id) => get(`/v1/tool-outputs/${id}/grep?pattern=${encodeURIComponent('^last line$')}`));
        await same((id) => get(`/v1/tool-outputs/${id}/grep?pattern=${encodeURIComponent('ERROR at the end$')}&context=2`));
        expect((await same((id) => get(`/v1/tool-outputs/${id}/grep?pattern=nowhere`))).matches).toEqual([]);
      });

      it('raw bytes, with the same headers', async () => {
        const raw = async (id: string) => fetch(`${service.baseUrl}/v1/tool-outputs/${id}/raw`, { headers: { authorization: `Bearer ${key}` } });
        const [a, b] = [await raw(inline.id), await raw(stored.id)];
        expect(a.status).toBe(200);
        for (const header of ['content-type', 'content-length', 'etag']) expect(a.headers.get(header)).toBe(b.headers.get(header));
        expect(Buffer.from(await a.arrayBuffer()).equals(Buffer.from(output))).toBe(true);
      });

      it("the model's tools read and grep it as they do a stored one", async () => {
        const call = (name: string, args: object) => (refId: string) =>
          client.request('POST', `/v1/sessions/${sessionId}/tool-calls`, { key, body: { name, arguments: { ref_id: refId, ...args } } });
        expect((await same(call('tool_output_cache', { offset: 2, limit: 3 }))).isError).toBe(false);
        expect((await same(call('tool_output_cache_grep', { pattern: 'ERROR', context: 1 }))).isError).toBe(false);
      });

      it('a later result citing its ref gets the same view and ref', async () => {
        await appendOk(sessionId, [toolCall('call-again'), resultWithRef('call-again', inline.id)]);
        const part = (await toolMessages(sessionId)).at(-1)!.data.message.parts[0];
        expect(part).toMatchObject({ output, outputRef: inline, truncated: false });
      });

      it('a fork reads it through its source, and keeps it when the source is deleted', async () => {
        const source = 'kept-inline-source';
        await client.createSession(key, { id: source });
        await appendOk(source, [toolCall('call-src'), resultInline('call-src', output)]);
        const ref = (await toolMessages(source))[0].data.message.parts[0].outputRef;
        const forked = await client.request('POST', `/v1/sessions/${source}/forks`, { key, body: { id: `${source}-fork` } });
        expect(forked.status).toBe(201);
        const read = () =>
          client.request('POST', `/v1/sessions/${source}-fork/tool-calls`, { key, body: { name: 'tool_output_cache', arguments: { ref_id: ref.id, offset: 41 } } });
        const before = await read();
        expect(before.body).toMatchObject({ isError: false, output: expect.stringContaining('last line') });
        expect((await client.request('DELETE', `/v1/sessions/${source}`, { key })).status).toBe(204);
        expect((await read()).body).toEqual(before.body);
        expect((await get(`/v1/tool-outputs/${ref.id}?offset=43`)).body.lines).toBe(numbered(43, 'last line'));
      });
    });

    it('trims older outputs at view time beyond the budget, newest kept', async () => {
      const sessionId = 'trim';
      await client.createSession(key, { id: sessionId, config: { preset: 'spec-000', toolOutput: { contextBudgetTokens: 1000 } } });
      // 2,400 characters each (600 tokens at chars/4), in short lines, so the write-time view keeps them whole.
      const output = (n: number) => `${`${n}`.repeat(79)}\n`.repeat(30);
      for (const n of [1, 2, 3]) await appendOk(sessionId, [toolCall(`t${n}`), resultInline(`t${n}`, output(n))]);
      const ids = (await toolMessages(sessionId)).map((e) => e.data.message.parts[0].outputRef.id);
      const ctx = await get(`/v1/sessions/${sessionId}/context`);
      const outputs = ctx.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.parts[0].output);
      expect(outputs).toEqual([`[tool output trimmed; ref=${ids[0]}]`, `[tool output trimmed; ref=${ids[1]}]`, output(3)]);
    });
  });

  describe('bad input', () => {
    const sessionId = 'bad-input';
    let refId: string;

    beforeAll(async () => {
      await client.createSession(key, { id: sessionId });
      await client.createSession(key, { id: 'elsewhere' });
      refId = (await upload(service, key, sessionId, 'some output\n')).body.ref.id;
    });

    it('an unknown or another tenant’s ref is a 404 on every read', async () => {
      for (const path of ['', '/grep?pattern=x', '/raw']) {
        const unknown = await get(`/v1/tool-outputs/out_doesnotexist${path}`);
        expect([unknown.status, unknown.body.code]).toEqual([404, 'output_ref_not_found']);
        const foreign = await get(`/v1/tool-outputs/${refId}${path}`, otherKey);
        expect([foreign.status, foreign.body.code]).toEqual([404, 'output_ref_not_found']);
        expect((await get(`/v1/tool-outputs/${'%00'.repeat(3)}${path}`)).status).toBe(404);
      }
      expect((await get(`/v1/tool-outputs/${refId}`)).status).toBe(200);
    });

    it('a result referencing an unknown ref, or one of another session or tenant, is a 400 and writes nothing', async () => {
      const otherSessionRef = (await upload(service, key, 'elsewhere', 'not yours')).body.ref.id;
      await client.createSession(otherKey, { id: 'theirs' });
      const otherTenantRef = (await upload(service, otherKey, 'theirs', 'not yours either')).body.ref.id;
      await appendOk(sessionId, [toolCall('call-bad')]);
      const head = (await client.allEvents(key, sessionId)).length;
      for (const id of ['out_nope', otherSessionRef, otherTenantRef]) {
        const res = await client.append(key, sessionId, { events: [resultWithRef('call-bad', id)] });
        expect([res.status, res.body.code, res.body.path]).toEqual([400, 'unknown_output_ref', '$.events[0].data.message.parts[0].outputRef.id']);
      }
      expect(await client.allEvents(key, sessionId)).toHaveLength(head);
      await appendOk(sessionId, [resultWithRef('call-bad', refId)]);
    });

    it('an invalid or oversized regex is a 400', async () => {
      const invalid = await get(`/v1/tool-outputs/${refId}/grep?pattern=${encodeURIComponent('(a')}`);
      expect([invalid.status, invalid.body.code]).toEqual([400, 'invalid_pattern']);
      const backreference = await get(`/v1/tool-outputs/${refId}/grep?pattern=${encodeURIComponent('(a)\\1')}`);
      expect([backreference.status, backreference.body.code]).toEqual([400, 'invalid_pattern']);
      const long = await get(`/v1/tool-outputs/${refId}/grep?pattern=${'a'.repeat(513)}`);
      expect([long.status, long.body.code]).toEqual([400, 'pattern_too_long']);
      const viaTool = await client.request('POST', `/v1/sessions/${sessionId}/tool-calls`, {
        key,
        body: { name: 'tool_output_cache_grep', arguments: { ref_id: refId, pattern: '(?=x)' } },
      });
      expect(viaTool.status).toBe(200);
      expect(viaTool.body.isError).toBe(true);
      expect(viaTool.body.output).toMatch(/^Error: invalid regular expression/);
    });

    it('tool calls: a tool that is not ours is a 400, a ref of another session an error result for the model', async () => {
      const call = (body: unknown) => client.request('POST', `/v1/sessions/${sessionId}/tool-calls`, { key, body });
      expect((await call({ name: 'bash', arguments: '{}' })).body.code).toBe('unknown_tool');
      const missing = await call({ name: 'tool_output_cache', arguments: '{"offset":3}' });
      expect(missing.body).toEqual({ output: 'Error: ref_id is required', isError: true });
      const notJson = await call({ name: 'tool_output_cache', arguments: '{ref_id:' });
      expect(notJson.body).toEqual({ output: 'Error: tool arguments are not valid JSON', isError: true });
      const otherSession = await call({ name: 'tool_output_cache', arguments: { ref_id: (await upload(service, key, 'elsewhere', 'x')).body.ref.id } });
      expect(otherSession.body.isError).toBe(true);
      expect((await client.request('POST', '/v1/sessions/nope/tool-calls', { key, body: { name: 'tool_output_cache', arguments: {} } })).status).toBe(404);
    });

    it('a binary output is stored byte-exact and shown safely', async () => {
      const bytes = Buffer.concat([Buffer.from('header\n'), Buffer.from([0x00, 0xff, 0xfe, 0xc0, 0x80, 0x0a, 0xe2, 0x82]), Buffer.from('\ntail\u0000end\n')]);
      const res = await upload(service, key, sessionId, bytes, 'application/octet-stream');
      expect(res.status).toBe(201);
      expect(res.body.ref).toMatchObject({ byte_size: bytes.length, line_count: 4, sha256: createHash('sha256').update(bytes).digest('hex') });
      expect(res.body.view).not.toContain('\u0000');
      expect(res.body.view).toContain('\uFFFD');
      const raw = await fetch(`${service.baseUrl}/v1/tool-outputs/${res.body.ref.id}/raw`, { headers: { authorization: `Bearer ${key}` } });
      expect(Buffer.from(await raw.arrayBuffer()).equals(bytes)).toBe(true);
      await appendOk(sessionId, [toolCall('call-binary'), resultWithRef('call-binary', res.body.ref.id)]);
      const stored = (await toolMessages(sessionId)).at(-1)!.data.message.parts[0];
      expect(stored.output).toBe(res.body.view);
      const lines = await get(`/v1/tool-outputs/${res.body.ref.id}?offset=3&limit=2`);
      expect(lines.body.lines).toBe(`${numbered(3, '\uFFFD')}\n${numbered(4, 'tail\uFFFDend')}`);
    });

    it('an upload needs a text or octet-stream body', async () => {
      const json = await client.request('POST', `/v1/sessions/${sessionId}/tool-outputs`, { key, body: { output: 'x' } });
      expect([json.status, json.body.code]).toEqual([415, 'unsupported_media_type']);
      const gzip = await client.request('POST', `/v1/sessions/${sessionId}/tool-outputs`, {
        key,
        rawBody: 'x',
        headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' },
      });
      expect(gzip.status).toBe(415);
      const unknownSession = await upload(service, key, 'no-such-session', 'x');
      expect([unknownSession.status, unknownSession.body.code]).toEqual([404, 'session_not_found']);
    });
  });

  it('deleting a session removes its outputs and the contents no other session uses', async () => {
    await client.createSession(key, { id: 'doomed' });
    await client.createSession(key, { id: 'survivor' });
    const shared = `shared ${Date.now()}`;
    const own = (await upload(service, key, 'doomed', `own ${Date.now()}`)).body.ref;
    await appendOk('doomed', [toolCall('d1'), resultInline('d1', shared), toolCall('d2'), resultWithRef('d2', own.id)]);
    await appendOk('survivor', [toolCall('s1'), resultInline('s1', shared)]);
    const sharedRef = (await toolMessages('doomed'))[0].data.message.parts[0].outputRef;
    const survivorRef = (await toolMessages('survivor'))[0].data.message.parts[0].outputRef;
    const before = await counts();

    expect((await client.request('DELETE', '/v1/sessions/doomed', { key })).status).toBe(204);
    expect((await get(`/v1/tool-outputs/${own.id}`)).status).toBe(404);
    expect((await get(`/v1/tool-outputs/${sharedRef.id}`)).status).toBe(404);
    expect((await get(`/v1/tool-outputs/${survivorRef.id}?limit=1`)).body.lines).toBe(numbered(1, shared));
    const after = await counts();
    expect(before.refs - after.refs).toBe(2);
    expect(before.contents - after.contents).toBe(1);
    const { rows } = await owner.query(`SELECT count(*)::int AS n FROM tool_output_refs WHERE tenant_id = $1 AND session_id = 'doomed'`, [tenantId]);
    expect(rows[0].n).toBe(0);
  });

  describe('limits and garbage collection (1 s retention, 100 ms grep cap, 16 MiB uploads)', () => {
    let small: TestService;
    let smallClient: Client;
    let smallOwner: PgClient;
    let smallKey: string;
    let smallTenant: string;
    const MAX = 16 * 1024 * 1024;
    const contentRows = async () =>
      (await smallOwner.query(`SELECT count(*)::int AS n, count(*) FILTER (WHERE sha256 IS NULL)::int AS staged FROM tool_output_contents WHERE tenant_id = $1`, [smallTenant]))
        .rows[0];

    beforeAll(async () => {
      small = await startService({
        env: { MAX_TOOL_OUTPUT_BYTES: String(MAX), GREP_TIME_LIMIT_MS: '100', TOOL_OUTPUT_RETENTION_SECONDS: '1', TOOL_OUTPUT_GC_INTERVAL_MS: '300' },
      });
      smallClient = new Client(small.baseUrl);
      smallOwner = await connectAs(small.dbUrl);
      ({ key: smallKey, tenantId: smallTenant } = await smallClient.createTenant('limits'));
      await smallClient.createSession(smallKey, { id: 'limits' });
    });

    afterAll(async () => {
      await smallOwner?.end();
      await small?.stop();
    });

    it('an upload over the limit is a 413 and stores nothing, streamed or declared', async () => {
      const before = await contentRows();
      const streamed = await streamUpload(small, smallKey, 'limits', MAX + 4 * 1024 * 1024);
      expect([streamed.status, streamed.body.code]).toEqual([413, 'tool_output_too_large']);
      const declared = await upload(small, smallKey, 'limits', Buffer.alloc(MAX + 1, 'y'));
      expect([declared.status, declared.body.code]).toEqual([413, 'tool_output_too_large']);
      expect(await contentRows()).toEqual(before);
      expect((await smallClient.request('GET', '/healthz')).status).toBe(200);
    });

    it('a catastrophic pattern on a large output stops at the time cap with a partial flag', async () => {
      const lines = Buffer.from(`${'a'.repeat(1000)}!\n`.repeat(15_000)); // 15 MB of a…a!
      const { ref } = (await upload(small, smallKey, 'limits', lines)).body;
      // Attached to an event, so the 1 s retention does not collect it meanwhile.
      const append = await smallClient.append(smallKey, 'limits', { events: [toolCall('cat'), resultWithRef('cat', ref.id)] });
      expect(append.status).toBe(201);
      const started = Date.now();
      const res = await smallClient.request('GET', `/v1/tool-outputs/${ref.id}/grep?pattern=${encodeURIComponent('(a+)+$')}`, { key: smallKey });
      const elapsed = Date.now() - started;
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ truncated: true, partial: { reason: 'time' }, matches: [] });
      expect(res.body.scannedBytes).toBeLessThan(lines.length);
      expect(elapsed).toBeLessThan(100 + 1500);
    });

    it('collects an upload no event referenced after the retention age, keeps attached ones', async () => {
      // Kept is older than the orphan: the run that collects the orphan had it in its age window too.
      const kept = (await upload(small, smallKey, 'limits', `kept ${Date.now()}\n`)).body.ref;
      await smallClient.append(smallKey, 'limits', { events: [toolCall('keep'), resultWithRef('keep', kept.id), toolCall('inline'), resultInline('inline', 'kept inline\n')] });
      const inlineRef = (await smallClient.allEvents(smallKey, 'limits')).at(-1)!.data.message.parts[0].outputRef;
      const orphan = (await upload(small, smallKey, 'limits', `orphan ${Date.now()}\n`)).body.ref;
      const orphanContents = async () =>
        (
          await smallOwner.query(`SELECT count(*)::int AS n FROM tool_output_contents WHERE tenant_id = $1 AND sha256 = $2`, [
            smallTenant,
            Buffer.from(orphan.sha256, 'hex'),
          ])
        ).rows[0].n;
      // The ref expires first; its content becomes an orphan that the same run's
      // next step (or the next run, if its age falls just inside the window) deletes.
      await waitFor(
        async () =>
          (await smallClient.request('GET', `/v1/tool-outputs/${orphan.id}`, { key: smallKey })).status === 404 && (await orphanContents()) === 0,
        'the GC job to collect the unreferenced upload and its content',
        15_000,
      );
      expect((await smallClient.request('GET', `/v1/tool-outputs/${kept.id}`, { key: smallKey })).status).toBe(200);
      // An inline output lives as long as its event.
      expect((await smallClient.request('GET', `/v1/tool-outputs/${inlineRef.id}`, { key: smallKey })).body.lines).toBe(numbered(1, 'kept inline'));
      expect((await contentRows()).staged).toBe(0);
    });
  });
});
