import Anthropic from '@anthropic-ai/sdk';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { Client as PgClient } from 'pg';
import {
  ABORTED_TOOL_RESULT,
  defaultContextBudgetTokens,
  estimateMessageTokens,
  Message,
  Part,
  PendingMode,
  renderNeutral,
  sessionSettings,
  StoredEvent,
  viewAt,
} from '@app/domain';
import { aiSdkSchemaErrors } from '@app/domain/view/testing/ai-sdk-schema';
import { HIDDEN_MARKER, sessionEventsArbitrary } from '@app/domain/view/testing/arbitraries';
import { Client } from './support/client';
import { connectAs } from './support/database';
import { ProviderStub, startProviderStub } from './support/provider-stub';
import { startService, TestService } from './support/service';

/**
 * GET /v1/sessions/{id}/context end to end (DESIGN.md section 5):
 * a scripted session checked format by format, time travel, errors, the token
 * figures shared with the session state; then the acceptance test: the
 * official `openai` and `@anthropic-ai/sdk` clients, pointed at a local stub
 * of each API that checks requests strictly, accept the rendered context
 * unchanged, for a scripted session and for random session logs.
 */

const FORMATS = ['neutral', 'openai', 'openai-responses', 'anthropic'] as const;
type Format = (typeof FORMATS)[number];
const SYSTEM = 'You are a terse coding agent.';
const HIDDEN_TEXT = 'HIDDEN-NOTE: operator remark the agent must not see';

const say = (role: 'user' | 'system', text: string, id: string, metadata?: Record<string, unknown>) => ({
  type: 'message.added',
  data: { message: { id, role, parts: [{ type: 'text', text }], ...(metadata ? { metadata } : {}) } },
});
const toolCall = (callId: string, name: string, input: unknown) => ({ type: 'tool_call', callId, name, input });
const assistantSays = (id: string, ...parts: Array<string | Record<string, unknown>>) => ({
  type: 'message.added',
  data: { message: { id, role: 'assistant', parts: parts.map((p) => (typeof p === 'string' ? { type: 'text', text: p } : p)) } },
});
const toolResults = (id: string, ...results: Array<[callId: string, output: string]>) => ({
  type: 'message.added',
  data: { message: { id, role: 'tool', parts: results.map(([callId, output]) => ({ type: 'tool_result', callId, output })) } },
});
const stepFinished = (input: number, output: number) => ({
  type: 'step.finished',
  data: { usage: { input_tokens: input, output_tokens: output, cache_creation_tokens: 0, cache_read_tokens: 0 } },
});

/** The scripted session, one event per append (the service's session.created is seq 1). */
const SCRIPT = [
  say('user', 'List the files, then show the working directory.', 'u1'), // 2
  assistantSays('a1', 'Listing.', toolCall('call_ls', 'bash', { cmd: 'ls' }), toolCall('call_pwd', 'bash', { cmd: 'pwd' })), // 3
  toolResults('t1', ['call_ls', 'a.txt\nb.txt']), // 4: call_pwd is never answered
  stepFinished(50, 10), // 5: within 2x of the view's own estimate, so trusted
  say('user', HIDDEN_TEXT, 'u2', { agentVisible: false }), // 6: hidden
  say('user', 'Read a.txt.', 'u3'), // 7
  assistantSays('a2', toolCall('call_read', 'read', { path: 'a.txt' })), // 8
  toolResults('t2', ['call_read', 'hello from a.txt']), // 9: a clean pair
  assistantSays('a3', 'a.txt says hello.'), // 10
  say('user', 'Now delete b.txt.', 'u4'), // 11
  assistantSays('a4', toolCall('call_rm', 'bash', { cmd: 'rm b.txt' })), // 12: trailing, still running
];

const sha256 = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest();

/** What a context looks like independent of when it was read: headSeq and atSeq describe the read itself. */
const timeless = (context: any) => {
  const { headSeq: _headSeq, atSeq: _atSeq, ...rest } = context;
  return rest;
};

describe('GET /v1/sessions/{id}/context', () => {
  let service: TestService;
  let client: Client;
  let tenantId: string;
  let key: string;
  let otherKey: string;
  let owner: PgClient;
  let stub: ProviderStub;
  let openai: OpenAI;
  let anthropic: Anthropic;

  const context = (sessionId: string, query: Record<string, string | number> = {}, asKey = key) => {
    const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return client.request('GET', `/v1/sessions/${encodeURIComponent(sessionId)}/context${qs ? `?${qs}` : ''}`, { key: asKey });
  };
  const okContext = async (sessionId: string, query: Record<string, string | number> = {}) => {
    const res = await context(sessionId, query);
    if (res.status !== 200) throw new Error(`context ${JSON.stringify(query)}: ${res.status} ${res.text}`);
    return res.body;
  };
  const appendOk = async (sessionId: string, events: unknown[]) => {
    const res = await client.append(key, sessionId, { events });
    if (res.status !== 201) throw new Error(`append: ${res.status} ${res.text}`);
    return res.body.headSeq as number;
  };

  /**
   * Service-only events (compaction.completed, tool_outputs.pruned,
   * tool_results.archived) written the way the worker's append does: at
   * head+1, moving the head and, for a pivot, the session's pivot and
   * covered-through seqs. Written as the owner, since clients cannot.
   */
  const insertServiceEvent = async (sessionId: string, type: string, data: any, tokens = 0): Promise<number> => {
    await owner.query('BEGIN');
    try {
      const { rows } = await owner.query('SELECT head_seq FROM sessions WHERE tenant_id = $1 AND session_id = $2 FOR UPDATE', [tenantId, sessionId]);
      const seq = Number(rows[0].head_seq) + 1;
      await owner.query(
        `INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, tokens, payload_hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [tenantId, sessionId, seq, `svc-${seq}`, type, JSON.stringify(data), tokens, sha256([type, data])],
      );
      const pivot = type === 'compaction.completed';
      await owner.query(
        `UPDATE sessions SET head_seq = $3, updated_at = clock_timestamp(),
                pivot_seq = CASE WHEN $4 THEN $3 ELSE pivot_seq END,
                covered_through_seq = CASE WHEN $4 THEN $5 ELSE covered_through_seq END
          WHERE tenant_id = $1 AND session_id = $2`,
        [tenantId, sessionId, seq, pivot, pivot ? data.coveredThroughSeq : 0],
      );
      await owner.query('COMMIT');
      return seq;
    } catch (error) {
      await owner.query('ROLLBACK');
      throw error;
    }
  };

  /** Sends a rendered context, unchanged, through the official SDK its format targets. */
  const sendWithSdk = async (format: Exclude<Format, 'neutral'>, ctx: any): Promise<unknown> => {
    switch (format) {
      case 'openai':
        return openai.chat.completions.create({ model: ctx.model, messages: ctx.messages });
      case 'openai-responses':
        return openai.responses.create({ model: ctx.model, input: ctx.messages });
      case 'anthropic':
        return anthropic.messages.create({
          model: ctx.model,
          max_tokens: 256,
          ...(ctx.system !== undefined ? { system: ctx.system } : {}),
          messages: ctx.messages,
        });
    }
  };

  /** The SDK call succeeds and the stub saw exactly the rendered context, with no problem found. */
  const expectAccepted = async (format: Exclude<Format, 'neutral'>, ctx: any) => {
    const before = stub.requests.length;
    const reply: any = await sendWithSdk(format, ctx);
    expect(stub.requests).toHaveLength(before + 1);
    const seen = stub.requests[before];
    expect(seen.problems).toEqual([]);
    if (format === 'openai-responses') {
      expect(seen.body.input).toEqual(ctx.messages);
      expect(reply.output_text).toBe('ok');
    } else {
      expect(seen.body.messages).toEqual(ctx.messages);
      expect(seen.body.system).toEqual(ctx.system);
      expect(format === 'openai' ? reply.choices[0].message.content : reply.content[0].text).toBe('ok');
    }
  };

  beforeAll(async () => {
    [service, stub] = await Promise.all([startService({ worker: false }), startProviderStub()]);
    client = new Client(service.baseUrl);
    ({ tenantId, key } = await client.createTenant('context'));
    ({ key: otherKey } = await client.createTenant('someone-else'));
    owner = await connectAs(service.dbUrl);
    openai = new OpenAI({ baseURL: `${stub.url}/v1`, apiKey: 'test', maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: stub.url, apiKey: 'test', maxRetries: 0 });
  });
  afterAll(async () => {
    await owner?.end();
    await stub?.close();
    await service?.stop();
  });

  describe('a scripted session', () => {
    let sessionId: string;
    /** Every format's context as returned right after each seq was appended. */
    const asOf = new Map<number, Record<Format, any>>();
    const readAll = async (): Promise<Record<Format, any>> => {
      const entries = await Promise.all(FORMATS.map(async (format) => [format, await okContext(sessionId, { format })] as const));
      return Object.fromEntries(entries) as Record<Format, any>;
    };

    beforeAll(async () => {
      const session = await client.createSession(key, { model: 'gpt-4.1', system: SYSTEM });
      sessionId = session.id;
      asOf.set(1, await readAll());
      for (const event of SCRIPT) {
        const head = await appendOk(sessionId, [event]);
        asOf.set(head, await readAll());
      }
    });

    it('neutral: our parts after the system prompt; hidden message gone; unanswered and pending calls answered with the aborted result', async () => {
      const ctx = asOf.get(12)!.neutral;
      expect(ctx).toMatchObject({ format: 'neutral', model: 'gpt-4.1', headSeq: 12, atSeq: null, pivotSeq: null, compaction: { state: 'idle' } });
      expect(ctx.system).toBeUndefined();
      expect(ctx.messages.map((m: Message) => [m.role, m.id])).toEqual([
        ['system', 'system'],
        ['user', 'u1'],
        ['assistant', 'a1'],
        ['tool', 't1'],
        ['tool', 'aborted-call_pwd'],
        ['user', 'u3'],
        ['assistant', 'a2'],
        ['tool', 't2'],
        ['assistant', 'a3'],
        ['user', 'u4'],
        ['assistant', 'a4'],
        ['tool', 'aborted-call_rm'],
      ]);
      expect(ctx.messages[0].parts).toEqual([{ type: 'text', text: SYSTEM }]);
      expect(ctx.messages[4].parts).toEqual([{ type: 'tool_result', callId: 'call_pwd', name: 'bash', output: ABORTED_TOOL_RESULT, isError: true }]);
      // The server fills a result's tool name from its call (and may attach an output ref: not asserted here).
      expect(ctx.messages[7].parts).toHaveLength(1);
      expect(ctx.messages[7].parts[0]).toMatchObject({ type: 'tool_result', callId: 'call_read', name: 'read', output: 'hello from a.txt' });
      expect(ctx.pendingToolCalls).toEqual([{ callId: 'call_rm', name: 'bash' }]);
      expect(ctx.repairs).toEqual({ abortedCallIds: ['call_pwd', 'call_rm'], droppedResultCallIds: [], droppedCallIds: [] });
      for (const format of FORMATS) expect(JSON.stringify(asOf.get(12)![format])).not.toContain('HIDDEN-NOTE');
    });

    it('openai: Chat Completions messages, one tool message per call id right after its assistant message', () => {
      const ctx = asOf.get(12)!.openai;
      const calls = (...c: Array<[string, string, unknown]>) =>
        c.map(([id, name, input]) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(input) } }));
      expect(ctx.system).toBeUndefined();
      expect(ctx.messages).toEqual([
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'List the files, then show the working directory.' },
        { role: 'assistant', content: 'Listing.', tool_calls: calls(['call_ls', 'bash', { cmd: 'ls' }], ['call_pwd', 'bash', { cmd: 'pwd' }]) },
        { role: 'tool', tool_call_id: 'call_ls', content: 'a.txt\nb.txt' },
        { role: 'tool', tool_call_id: 'call_pwd', content: ABORTED_TOOL_RESULT },
        { role: 'user', content: 'Read a.txt.' },
        { role: 'assistant', content: null, tool_calls: calls(['call_read', 'read', { path: 'a.txt' }]) },
        { role: 'tool', tool_call_id: 'call_read', content: 'hello from a.txt' },
        { role: 'assistant', content: 'a.txt says hello.' },
        { role: 'user', content: 'Now delete b.txt.' },
        { role: 'assistant', content: null, tool_calls: calls(['call_rm', 'bash', { cmd: 'rm b.txt' }]) },
        { role: 'tool', tool_call_id: 'call_rm', content: ABORTED_TOOL_RESULT },
      ]);
      expect(ctx.pendingToolCalls).toEqual([{ callId: 'call_rm', name: 'bash' }]);
    });

    it('openai-responses: message, function_call and function_call_output items', () => {
      const ctx = asOf.get(12)!['openai-responses'];
      const input = (role: string, text: string) => ({ type: 'message', role, content: [{ type: 'input_text', text }] });
      const fnCall = (callId: string, name: string, args: unknown) => ({ type: 'function_call', call_id: callId, name, arguments: JSON.stringify(args) });
      const output = (callId: string, out: string) => ({ type: 'function_call_output', call_id: callId, output: out });
      expect(ctx.messages).toEqual([
        input('system', SYSTEM),
        input('user', 'List the files, then show the working directory.'),
        { type: 'message', role: 'assistant', content: 'Listing.' },
        fnCall('call_ls', 'bash', { cmd: 'ls' }),
        fnCall('call_pwd', 'bash', { cmd: 'pwd' }),
        output('call_ls', 'a.txt\nb.txt'),
        output('call_pwd', ABORTED_TOOL_RESULT),
        input('user', 'Read a.txt.'),
        fnCall('call_read', 'read', { path: 'a.txt' }),
        output('call_read', 'hello from a.txt'),
        { type: 'message', role: 'assistant', content: 'a.txt says hello.' },
        input('user', 'Now delete b.txt.'),
        fnCall('call_rm', 'bash', { cmd: 'rm b.txt' }),
        output('call_rm', ABORTED_TOOL_RESULT),
      ]);
    });

    it('anthropic: system apart, tool_result blocks first in the next user turn, same-role turns merged', () => {
      const ctx = asOf.get(12)!.anthropic;
      const text = (t: string) => ({ type: 'text', text: t });
      const use = (id: string, name: string, input: unknown) => ({ type: 'tool_use', id, name, input });
      const answer = (id: string, content: string, isError = false) => ({ type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) });
      expect(ctx.system).toBe(SYSTEM);
      expect(ctx.messages).toEqual([
        { role: 'user', content: [text('List the files, then show the working directory.')] },
        { role: 'assistant', content: [text('Listing.'), use('call_ls', 'bash', { cmd: 'ls' }), use('call_pwd', 'bash', { cmd: 'pwd' })] },
        { role: 'user', content: [answer('call_ls', 'a.txt\nb.txt'), answer('call_pwd', ABORTED_TOOL_RESULT, true), text('Read a.txt.')] },
        { role: 'assistant', content: [use('call_read', 'read', { path: 'a.txt' })] },
        { role: 'user', content: [answer('call_read', 'hello from a.txt')] },
        { role: 'assistant', content: [text('a.txt says hello.')] },
        { role: 'user', content: [text('Now delete b.txt.')] },
        { role: 'assistant', content: [use('call_rm', 'bash', { cmd: 'rm b.txt' })] },
        { role: 'user', content: [answer('call_rm', ABORTED_TOOL_RESULT, true)] },
      ]);
    });

    it('pending=omit leaves the still-running calls out (and their emptied assistant message) but still reports them', async () => {
      const omitted = await okContext(sessionId, { format: 'openai', pending: 'omit' });
      const aborted = asOf.get(12)!.openai;
      expect(omitted.messages).toEqual(aborted.messages.slice(0, -2));
      expect(omitted.messages.at(-1)).toEqual({ role: 'user', content: 'Now delete b.txt.' });
      expect(omitted.pendingToolCalls).toEqual([{ callId: 'call_rm', name: 'bash' }]);
      expect(omitted.repairs.abortedCallIds).toEqual(['call_pwd']);
      const anthropicOmitted = await okContext(sessionId, { format: 'anthropic', pending: 'omit' });
      expect(anthropicOmitted.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'Now delete b.txt.' }] });
      expect(JSON.stringify(anthropicOmitted.messages)).not.toContain('call_rm');
      // Explicit abort is the default.
      expect(await okContext(sessionId, { format: 'openai', pending: 'abort' })).toEqual(aborted);
    });

    it('a pending call is pending only while it trails: answered or followed by a user turn, it is not', async () => {
      // At seq 8 the read is pending; at seq 9 it is answered.
      expect(asOf.get(8)!.neutral.pendingToolCalls).toEqual([{ callId: 'call_read', name: 'read' }]);
      expect(asOf.get(9)!.neutral.pendingToolCalls).toEqual([]);
      // At seq 3 both calls are pending; from seq 7 (a user turn after them), call_pwd is aborted for good.
      expect(asOf.get(3)!.neutral.pendingToolCalls).toEqual([
        { callId: 'call_ls', name: 'bash' },
        { callId: 'call_pwd', name: 'bash' },
      ]);
      expect(asOf.get(4)!.neutral.pendingToolCalls).toEqual([{ callId: 'call_pwd', name: 'bash' }]);
      expect(asOf.get(7)!.neutral.pendingToolCalls).toEqual([]);
    });

    it('tokens: usage of the latest step plus estimates after it, identical in every format and in the session state', async () => {
      const figures = asOf.get(12)!.neutral.tokens;
      expect(figures).toMatchObject({ basis: 'usage+estimate', limit: 1_047_576 });
      expect(figures.estimated).toBeGreaterThan(60);
      expect(figures.usable).toBeGreaterThan(0);
      expect(figures.usable).toBeLessThanOrEqual(figures.limit);
      expect(figures.ratio).toBeCloseTo(figures.estimated / figures.usable, 6);
      for (const format of FORMATS) expect(asOf.get(12)![format].tokens).toEqual(figures);
      // Before any step.finished: an estimate of the whole view; the system prompt counts.
      expect(asOf.get(1)!.neutral.tokens.basis).toBe('estimate');
      expect(asOf.get(1)!.neutral.tokens.estimated).toBeGreaterThan(0);
      expect(asOf.get(4)!.neutral.tokens.estimated).toBeGreaterThan(asOf.get(2)!.neutral.tokens.estimated);
      // The hidden message adds nothing.
      expect(asOf.get(6)!.neutral.tokens).toEqual(asOf.get(5)!.neutral.tokens);

      const state = await client.request('GET', `/v1/sessions/${sessionId}`, { key });
      expect(state.status).toBe(200);
      expect(state.body.tokens).toEqual(figures);
      expect(state.body).toMatchObject({ id: sessionId, headSeq: 12, pivotSeq: null, compaction: { state: 'idle' } });
    });

    it('atSeq=k returns exactly what the context returned when the head was k, in every format', async () => {
      for (const [seq, formats] of asOf) {
        for (const format of FORMATS) {
          const past = await okContext(sessionId, { format, atSeq: seq });
          expect(past.atSeq).toBe(seq);
          expect(past.headSeq).toBe(12);
          expect(timeless(past)).toEqual(timeless(formats[format]));
        }
      }
      // Beyond the head: the view at the head.
      const beyond = await okContext(sessionId, { format: 'openai', atSeq: 10_000 });
      expect(beyond.atSeq).toBe(12);
      expect(timeless(beyond)).toEqual(timeless(asOf.get(12)!.openai));
    });

    it('another tenant gets 404, as does an unknown session', async () => {
      for (const path of [`/v1/sessions/${sessionId}/context`, `/v1/sessions/${sessionId}/context?format=openai&atSeq=3`, `/v1/sessions/${sessionId}`]) {
        const res = await client.request('GET', path, { key: otherKey });
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('session_not_found');
        expect(res.text).not.toContain('List the files');
      }
      const unknown = await context('no-such-session');
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('session_not_found');
    });

    it('a bad format, atSeq or pending is a 400 problem', async () => {
      const bad: Array<Record<string, string>> = [
        { format: 'xml' },
        { format: 'OPENAI' },
        { atSeq: '0' },
        { atSeq: '-3' },
        { atSeq: 'abc' },
        { atSeq: '1.5' },
        { atSeq: '' },
        { pending: 'later' },
        { at: '3' },
      ];
      for (const query of bad) {
        const res = await context(sessionId, query);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(res.body.code).toBe('validation_failed');
      }
      expect((await client.request('GET', `/v1/sessions/${sessionId}/context`)).status).toBe(401);
    });

    it('the official SDKs accept every rendered format, with pending abort and omit', async () => {
      for (const pending of ['abort', 'omit'] as const) {
        for (const format of ['openai', 'openai-responses', 'anthropic'] as const) {
          await expectAccepted(format, await okContext(sessionId, { format, pending }));
        }
      }
      // Every intermediate state too (the trailing-call states in particular).
      for (const formats of asOf.values()) {
        for (const format of ['openai', 'openai-responses', 'anthropic'] as const) await expectAccepted(format, formats[format]);
      }
    });

    it('the stub is strict: the SDKs surface its 400 for a request that breaks the pairing rule', async () => {
      const ctx = asOf.get(12)!;
      const withoutLast = (c: any) => ({ ...c, messages: c.messages.slice(0, -1) });
      await expect(sendWithSdk('openai', withoutLast(ctx.openai))).rejects.toMatchObject({ status: 400, constructor: OpenAI.BadRequestError });
      await expect(sendWithSdk('openai-responses', withoutLast(ctx['openai-responses']))).rejects.toMatchObject({ status: 400 });
      await expect(sendWithSdk('anthropic', withoutLast(ctx.anthropic))).rejects.toMatchObject({
        status: 400,
        constructor: Anthropic.BadRequestError,
      });
      expect(stub.requests.at(-1)!.problems.join('\n')).toContain('`tool_use` ids were found without `tool_result` blocks immediately after: call_rm');
      // Shape checks too: an unknown role.
      await expect(
        openai.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'robot', content: 'hi' } as any] }),
      ).rejects.toMatchObject({ status: 400 });
    });

    describe('after a compaction pivot', () => {
      let pivotSeq: number;
      const prefix = [{ id: 'summary-1', role: 'user', parts: [{ type: 'text', text: '<summary>Listed files, read a.txt.</summary>' }] }];

      beforeAll(async () => {
        pivotSeq = await insertServiceEvent(sessionId, 'compaction.completed', {
          markerSeq: 12,
          coveredThroughSeq: 9,
          summary: 'Listed files, read a.txt.',
          prefix,
          strategy: 'retain-summary',
          model: 'gpt-4.1',
          tokensBefore: 400,
          tokensAfter: 60,
          messagesCompacted: 8,
          durationMs: 5,
        });
        await appendOk(sessionId, [say('user', 'Go on.', 'u5')]);
      });

      it('the context starts at the pivot: system prompt, its prefix, then the events after coveredThroughSeq', async () => {
        expect(pivotSeq).toBe(13);
        const ctx = await okContext(sessionId, { format: 'neutral' });
        expect(ctx).toMatchObject({ headSeq: 14, pivotSeq: 13 });
        expect(ctx.messages.map((m: Message) => m.id)).toEqual(['system', 'summary-1', 'a3', 'u4', 'a4', 'aborted-call_rm', 'u5']);
        // No longer trailing: aborted, not pending.
        expect(ctx.pendingToolCalls).toEqual([]);
        // The usage at seq 5 measured a context that no longer exists.
        expect(ctx.tokens.basis).toBe('estimate');
        const state = await client.request('GET', `/v1/sessions/${sessionId}`, { key });
        expect(state.body).toMatchObject({ headSeq: 14, pivotSeq: 13, coveredThroughSeq: 9 });
        expect(state.body.tokens).toEqual(ctx.tokens);
        for (const format of ['openai', 'openai-responses', 'anthropic'] as const) {
          await expectAccepted(format, await okContext(sessionId, { format }));
        }
      });

      it('ai-sdk: system apart, the pivot prefix first, tool-call and tool-result parts the AI SDK schema accepts, pending abort and omit', async () => {
        const ctx = await okContext(sessionId, { format: 'ai-sdk' });
        expect(ctx.system).toBe(SYSTEM);
        expect(ctx.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'tool', 'user']);
        expect(ctx.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: '<summary>Listed files, read a.txt.</summary>' }] });
        expect(ctx.messages.slice(3, 5)).toEqual([
          { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_rm', toolName: 'bash', input: { cmd: 'rm b.txt' } }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_rm', toolName: 'bash', output: { type: 'error-text', value: ABORTED_TOOL_RESULT } }] },
        ]);
        expect(aiSdkSchemaErrors(ctx.messages)).toEqual([]);
        // Before the pivot, with the trailing call still running.
        for (const pending of ['abort', 'omit'] as const) {
          expect(aiSdkSchemaErrors((await okContext(sessionId, { format: 'ai-sdk', atSeq: 12, pending })).messages)).toEqual([]);
        }
      });

      it('atSeq before the pivot still gives the pre-pivot view; at the pivot, the pivot applies', async () => {
        for (const seq of [1, 5, 9, 12]) {
          for (const format of FORMATS) expect(timeless(await okContext(sessionId, { format, atSeq: seq }))).toEqual(timeless(asOf.get(seq)![format]));
        }
        const atPivot = await okContext(sessionId, { atSeq: 13 });
        expect(atPivot.pivotSeq).toBe(13);
        expect(atPivot.messages.map((m: Message) => m.id)).toEqual(['system', 'summary-1', 'a3', 'u4', 'a4', 'aborted-call_rm']);
        expect(atPivot.pendingToolCalls).toEqual([{ callId: 'call_rm', name: 'bash' }]);
      });
    });
  });

  describe('random session logs (fast-check): the SDKs accept every render', () => {
    /**
     * Replays a generated log the way it can really come about: client
     * events through the API (calls the API would refuse at write time, a
     * repeated call id or a result for an unknown or answered call, are
     * dropped; the generator's output refs become plain outputs), service
     * events (pivots, prunes, archives) written directly as the worker
     * would. A pivot keeps its distance back from the head.
     */
    const written = { pivots: 0, rewrites: 0, droppedParts: 0 };
    const replay = async (sessionId: string, model: string, events: StoredEvent[]): Promise<void> => {
      const issued = new Set<string>();
      const answered = new Set<string>();
      let batch: unknown[] = [];
      let head = 1;
      const flush = async () => {
        if (batch.length > 0) head = await appendOk(sessionId, batch);
        batch = [];
      };
      for (const event of events) {
        switch (event.type) {
          case 'session.created':
            break;
          case 'message.added': {
            const parts = event.data.message.parts.flatMap((part): Part[] => {
              if (part.type === 'tool_call') {
                if (issued.has(part.callId)) return [];
                issued.add(part.callId);
              }
              if (part.type === 'tool_result') {
                if (!issued.has(part.callId) || answered.has(part.callId)) return [];
                answered.add(part.callId);
                const { outputRef: _ref, ...plain } = part;
                return [plain];
              }
              return [part];
            });
            written.droppedParts += event.data.message.parts.length - parts.length;
            if (parts.length > 0) batch.push({ type: 'message.added', data: { message: { ...event.data.message, parts } } });
            break;
          }
          case 'step.finished':
          case 'turn.aborted':
            batch.push({ type: event.type, data: event.data });
            break;
          case 'compaction.completed': {
            await flush();
            const back = event.seq - 1 - event.data.coveredThroughSeq;
            const covered = Math.max(0, head - back);
            head = await insertServiceEvent(sessionId, event.type, { ...event.data, markerSeq: covered, coveredThroughSeq: covered });
            written.pivots++;
            break;
          }
          case 'tool_outputs.pruned':
          case 'tool_results.archived': {
            await flush();
            const digest = event.type === 'tool_results.archived' ? event.data.digest : null;
            head = await insertServiceEvent(sessionId, event.type, event.data, digest ? estimateMessageTokens(digest, model) : 0);
            written.rewrites++;
            break;
          }
          default:
            throw new Error(`the generator made an event the replay does not know: ${event.type}`);
        }
      }
      await flush();
    };

    /** The log as the API returns it, typed as the domain's stored events. */
    const storedLog = async (sessionId: string): Promise<StoredEvent[]> =>
      (await client.allEvents(key, sessionId)).map((e) => ({ ...e, createdAt: new Date(e.createdAt), tokens: 0 }) as StoredEvent);

    const setups = fc.record({
      model: fc.constantFrom('gpt-4.1', 'claude-haiku-4-5'),
      system: fc.constantFrom<string | undefined>(undefined, 'be brief'),
      // A tiny tool-output budget makes the view-time trim kick in.
      config: fc.constantFrom<Record<string, unknown>>({}, { toolOutput: { viewTrim: true, contextBudgetTokens: 40 } }),
    });

    it('~30 random logs replayed through the API: openai, openai-responses and anthropic renders pass the SDKs; atSeq matches the domain view', async () => {
      let sessions = 0;
      await fc.assert(
        fc.asyncProperty(sessionEventsArbitrary({ maxSteps: 25 }), setups, fc.nat(), async (events, setup, pick) => {
          sessions++;
          const session = await client.createSession(key, {
            model: setup.model,
            config: setup.config,
            ...(setup.system ? { system: setup.system } : {}),
          });
          await replay(session.id, setup.model, events);

          for (const pending of ['abort', 'omit'] as const) {
            const rendered: Partial<Record<Format, any>> = {};
            for (const format of FORMATS) {
              rendered[format] = await okContext(session.id, { format, pending });
              expect(JSON.stringify(rendered[format])).not.toContain(HIDDEN_MARKER);
            }
            for (const format of FORMATS) expect(rendered[format].tokens).toEqual(rendered.neutral.tokens);
            for (const format of ['openai', 'openai-responses', 'anthropic'] as const) await expectAccepted(format, rendered[format]);
          }

          // Time travel: the view at a random seq equals the domain's view computed from the log read back.
          const log = await storedLog(session.id);
          const k = 1 + (pick % log.length);
          const pending: PendingMode = pick % 2 === 0 ? 'abort' : 'omit';
          const past = await okContext(session.id, { format: 'neutral', atSeq: k, pending });
          const { config, limits } = sessionSettings({ model: setup.model, config: setup.config, tenantConfig: {} });
          const contextBudgetTokens = config.toolOutput.viewTrim
            ? (config.toolOutput.contextBudgetTokens ?? defaultContextBudgetTokens(limits.context))
            : Number.POSITIVE_INFINITY;
          const expected = viewAt(log, k, { system: setup.system, model: setup.model, options: { pending, contextBudgetTokens } });
          expect(past.messages).toEqual(renderNeutral(expected));
          expect(past.pendingToolCalls).toEqual(expected.pendingToolCalls);
          expect(past.pivotSeq).toEqual(expected.pivotSeq);
          expect(past.repairs).toEqual(expected.repairs);
          for (const format of ['openai', 'openai-responses', 'anthropic'] as const) {
            await expectAccepted(format, await okContext(session.id, { format, atSeq: k, pending }));
          }
        }),
        { numRuns: 30, endOnFailure: true },
      );
      expect(sessions).toBe(30);
      // The logs did exercise pivots, prunes/archives and calls the API would refuse (left out of the replay).
      expect(written.pivots).toBeGreaterThan(0);
      expect(written.rewrites).toBeGreaterThan(0);
      expect(written.droppedParts).toBeGreaterThan(0);
    });
  });
});
