import { CODEX_SUMMARY_PREFIX, COMPACTED_CONTEXT_MARKER, OPENCODE_MARKER_TEXT, PREVIOUS_SUMMARY_MARKER } from '@app/domain';
import { Agent, agentSession, turnEvents } from './support/agent-script';
import { Client } from './support/client';
import { startService, TestService } from './support/service';

/**
 * Compaction end to end with the built-in heuristic summarizer (DESIGN.md
 * section 6, issue 5): the overflow trigger in the append path, the marker's
 * job in the worker, the pivot in the next context; the manual endpoint and
 * the history; the loop guard; each preset's documented shape.
 */
describe('compaction with the heuristic summarizer', () => {
  let service: TestService;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    service = await startService();
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant());
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('crosses the threshold → marker → job → pivot; the next context is smaller, valid and below the trigger', async () => {
    const agent = await agentSession(client, key, 'long-session');
    const { markerSeq } = await agent.untilMarker();
    const before = await agent.context();
    expect(before.tokens.estimated).toBeGreaterThanOrEqual(before.tokens.threshold);

    const events = await agent.events();
    const marker = events.find((e) => e.seq === markerSeq);
    expect(marker).toMatchObject({ id: `cmp-${markerSeq}-requested`, type: 'compaction.requested', data: { auto: true, reason: 'threshold' } });
    expect(events[markerSeq - 2].type).toBe('step.finished');

    const entry = await agent.settled(markerSeq);
    expect(entry).toMatchObject({ status: 'completed', auto: true, reason: 'threshold', strategy: 'retain-summary', model: 'heuristic', failures: [] });
    expect(entry.range).toEqual({ fromSeq: 1, throughSeq: expect.any(Number) });
    expect(entry.tokensAfter).toBeLessThan(entry.tokensBefore);
    expect(entry.tokensSaved).toBe(entry.tokensBefore - entry.tokensAfter);
    expect(entry.summary).toContain('## Goal');
    expect(entry.summary).toContain('src/module1.ts');

    const after = await agent.context();
    expect(after.pivotSeq).toBe(entry.completedSeq);
    expect(after.tokens.estimated).toBeLessThan(before.tokens.estimated);
    expect(after.tokens.estimated).toBeLessThan(after.tokens.threshold);
    // spec-000: the retain block (the head's tool output refs, kept in the store), the summary, then the last turn verbatim.
    expect(after.messages[1]).toMatchObject({ id: `cmp-${markerSeq}-retain`, role: 'user', metadata: { kind: 'compaction_retain' } });
    expect(after.messages[1].parts[0].text).toMatch(/^- ref=\S+ \(bash, \d+ lines\)$/m);
    expect(after.messages[2]).toMatchObject({ id: `cmp-${markerSeq}-summary`, role: 'user', metadata: { kind: 'compaction_summary' } });
    expect(after.messages[3].parts[0].text).toMatch(/^Turn \d+: fix the failing test/);
    await agent.expectValidForProviders();

    const state = await agent.state();
    expect(state.compaction).toEqual({ state: 'idle', lastError: null, pendingMarkerSeq: null, suppressedReason: null });
    expect(state.pivotSeq).toBe(entry.completedSeq);
    expect(after.compaction).toEqual(state.compaction);
  });

  it('compacts on demand: 202 queued, 200 with wait, tokens saved and messages compacted; Idempotency-Key replays the marker', async () => {
    const agent = await agentSession(client, key, 'manual', { compaction: { auto: false } });
    for (let turn = 1; turn <= 4; turn++) await agent.turn(turn);
    const headBefore = (await agent.state()).headSeq;

    const dry = await client.request('POST', `${agent.path}/compactions`, { key, body: { dryRun: true, instructions: 'Keep the module list.' } });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dryRun: true, status: 'completed', strategy: 'retain-summary', model: 'heuristic', failures: [] });
    expect(dry.body.tokensSaved).toBeGreaterThan(0);
    expect(dry.body.tokensSaved).toBe(dry.body.tokensBefore - dry.body.tokensAfter);
    expect(dry.body.context.messages.slice(1, 3).map((m: any) => m.metadata.kind)).toEqual(['compaction_retain', 'compaction_summary']);
    expect(dry.body.context.tokens.estimated).toBeLessThan((await agent.context()).tokens.estimated);
    expect((await agent.state()).headSeq).toBe(headBefore);

    const headers = { 'idempotency-key': 'compact-once' };
    const body = { wait: true, instructions: 'Keep the module list.' };
    const done = await client.request('POST', `${agent.path}/compactions`, { key, body, headers });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      markerSeq: headBefore + 1,
      joined: false,
      status: 'completed',
      auto: false,
      reason: 'manual',
      instructions: 'Keep the module list.',
      strategy: 'retain-summary',
      state: { state: 'idle', pendingMarkerSeq: null },
    });
    expect(done.body.messagesCompacted).toBeGreaterThan(0);
    expect(done.body.tokensSaved).toBeGreaterThan(0);

    const replay = await client.request('POST', `${agent.path}/compactions`, { key, body, headers });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(done.body);
    const markers = (await agent.events()).filter((e) => e.type === 'compaction.requested');
    expect(markers.map((e) => e.seq)).toEqual([headBefore + 1]);

    const history = await agent.compactions();
    expect(history.compactions).toHaveLength(1);
    expect(history.compactions[0]).toMatchObject({ markerSeq: headBefore + 1, status: 'completed', range: { fromSeq: 1 } });
    expect(history.nextAfterSeq).toBeNull();
  });

  it('joins the pending marker while no worker runs, and completes it once a worker is back', async () => {
    const agent = await agentSession(client, key, 'joining', { compaction: { auto: false } });
    for (let turn = 1; turn <= 3; turn++) await agent.turn(turn);
    await Promise.all(service.workers.splice(0).map((w) => w.stop()));
    let markerSeq: number;
    let waiting: ReturnType<Client['request']>;
    try {
      const queued = await client.request('POST', `${agent.path}/compactions`, { key, body: {} });
      markerSeq = queued.body.markerSeq;
      expect(queued.status).toBe(202);
      expect(queued.body).toMatchObject({ joined: false, status: 'pending', state: { state: 'pending', pendingMarkerSeq: markerSeq } });
      const timedOut = await client.request('POST', `${agent.path}/compactions`, { key, body: { wait: true, timeoutMs: 300 } });
      expect(timedOut.status).toBe(202);
      expect(timedOut.body).toMatchObject({ markerSeq, joined: true, status: 'pending' });
      expect((await agent.state()).compaction).toMatchObject({ state: 'pending', pendingMarkerSeq: markerSeq });
      // A forced trigger joins the pending marker too.
      const forced = await agent.append([{ type: 'context.overflowed', data: { error: 'context_length_exceeded' } }]);
      expect(forced.compaction).toEqual({ pendingMarkerSeq: markerSeq });
      // This waiter joins before the worker is back and answers once the pivot is committed.
      waiting = client.request('POST', `${agent.path}/compactions`, { key, body: { wait: true } });
    } finally {
      await service.startWorker();
    }
    const done = await waiting;
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ markerSeq, joined: true, status: 'completed' });
    const events = await agent.events();
    expect(events.filter((e) => e.type === 'compaction.requested').map((e) => e.seq)).toEqual([markerSeq]);
    expect(events.filter((e) => e.type === 'compaction.completed')).toHaveLength(1);
  });

  it("forces a compaction on context.overflowed and on a length-limited step, and runs a client's own marker", async () => {
    const overflowed = await agentSession(client, key, 'overflowed');
    await overflowed.turn(1);
    const first = await overflowed.append([{ type: 'context.overflowed', data: { error: 'context_length_exceeded' } }]);
    expect(first.compaction.pendingMarkerSeq).toBe(first.headSeq);
    expect((await overflowed.settled(first.compaction.pendingMarkerSeq)).reason).toBe('overflow');

    const cut = await agentSession(client, key, 'cut-short');
    await cut.append(turnEvents('cut-short', 1));
    const lengthStep = await cut.append([{ type: 'step.finished', data: { usage: { input_tokens: 100, output_tokens: 2000 }, finishReason: 'length' } }]);
    expect((await cut.settled(lengthStep.compaction.pendingMarkerSeq)).reason).toBe('finish_length');

    const own = await agentSession(client, key, 'client-marker', { compaction: { enabled: false } });
    await own.turn(1);
    await own.turn(2);
    const requested = await own.append([{ type: 'compaction.requested', data: { instructions: 'Mention every module.' } }]);
    expect(requested.compaction.pendingMarkerSeq).toBe(requested.headSeq);
    expect(await own.settled(requested.headSeq)).toMatchObject({ status: 'completed', auto: false, reason: 'manual', instructions: 'Mention every module.' });
  });

  it('does not repeat an automatic compaction that freed less than 5%; the state says why; a manual one still runs', async () => {
    // The provider counts 13k tokens the log never sees (tools, a long system prompt): compaction cannot shrink them.
    const agent = await agentSession(client, key, 'loop-guard');
    await agent.turn(1, { outputLines: 5 });
    const crossing = await agent.turn(2, { outputLines: 5, extraUsage: 13_000 });
    const markerSeq = crossing.compaction.pendingMarkerSeq;
    const entry = await agent.settled(markerSeq);
    expect(entry.tokensAfter).toBeGreaterThanOrEqual(entry.tokensBefore * 0.95);

    const next = await agent.turn(3, { outputLines: 5, extraUsage: 13_000 });
    expect(next.compaction).toBeUndefined();
    const state = await agent.state();
    expect(state.compaction.state).toBe('idle');
    expect(state.compaction.suppressedReason).toContain(`automatic compaction suspended: the compaction for marker ${markerSeq}`);
    expect((await agent.events()).filter((e) => e.type === 'compaction.requested')).toHaveLength(1);

    const manual = await client.request('POST', `${agent.path}/compactions`, { key, body: { wait: true } });
    expect(manual.body.status).toBe('completed');
    expect((await agent.state()).compaction.suppressedReason).toBeNull();
  });

  describe('each preset produces its documented shape', () => {
    const limits = { context: 30_000, output: 2_000 };
    const kinds = (messages: any[]) => messages.map((m) => `${m.role}:${m.metadata?.kind ?? 'log'}`);

    async function compactPreset(preset: string, config: Record<string, unknown> = {}): Promise<{ agent: Agent; entry: any; context: any }> {
      const agent = await agentSession(client, key, `preset-${preset}`, { preset, limits, ...config });
      // A todo list first: Codex's rebuild keeps the latest result of a protected tool.
      await agent.append([
        { type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: 'Plan the work in /srv/app first.' }] } } },
        { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'todo-1', name: 'manage_todo_list', input: { items: ['fix modules'] } }] } } },
        { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'todo-1', name: 'manage_todo_list', output: '- [ ] fix modules' }] } } },
      ]);
      const { markerSeq } = await agent.untilMarker();
      const entry = await agent.settled(markerSeq);
      expect(entry).toMatchObject({ status: 'completed', auto: true, model: 'heuristic' });
      const context = await agent.context();
      expect(context.tokens.estimated).toBeLessThan(context.tokens.threshold);
      await agent.expectValidForProviders();
      return { agent, entry, context };
    }

    it('opencode: marker "What did we do so far?", assistant summary, the last 2 user turns, then the auto-continue message', async () => {
      const { entry, context } = await compactPreset('opencode');
      expect(entry.strategy).toBe('summary-tail');
      const messages = context.messages.slice(1);
      expect(kinds(messages.slice(0, 2))).toEqual(['user:compaction_marker', 'assistant:compaction_summary']);
      expect(messages[0].parts[0].text).toBe(OPENCODE_MARKER_TEXT);
      expect(messages.filter((m: any) => m.role === 'user' && !m.metadata?.kind)).toHaveLength(2);
      expect(messages.at(-1)).toMatchObject({ id: `cmp-${entry.markerSeq}-continue`, role: 'user', metadata: { kind: 'auto_continue', userVisible: false } });
    });

    it('codex: earlier user messages, the summary with the handoff prefix, the protected tool result; no tail', async () => {
      const { entry, context } = await compactPreset('codex');
      expect(entry.strategy).toBe('user-rebuild');
      const messages = context.messages.slice(1);
      const users = messages.filter((m: any) => m.metadata?.kind === 'compaction_user_message');
      expect(users[0].parts[0].text).toBe('Plan the work in /srv/app first.');
      expect(users.length).toBeGreaterThan(2);
      expect(kinds(messages.slice(users.length, users.length + 3))).toEqual([
        'user:compaction_summary',
        'assistant:compaction_protected_tool',
        'tool:compaction_protected_tool',
      ]);
      expect(messages[users.length].parts[0].text.startsWith(CODEX_SUMMARY_PREFIX)).toBe(true);
      expect(messages.filter((m: any) => !m.metadata?.kind)).toEqual([]);
    });

    it('spec-000: the <retain> block and the summary as user messages, then the last turn', async () => {
      const { entry, context } = await compactPreset('spec-000');
      expect(entry.strategy).toBe('retain-summary');
      expect(entry.retain).toMatch(/^- ref=/);
      const messages = context.messages.slice(1);
      expect(kinds(messages.slice(0, 2))).toEqual(['user:compaction_retain', 'user:compaction_summary']);
      expect(messages.filter((m: any) => m.role === 'user' && !m.metadata?.kind)).toHaveLength(1);
    });

    it('spec-001: "[Previous conversation summary]", then the recent messages within keepRecentTokens', async () => {
      const { entry, context } = await compactPreset('spec-001');
      expect(entry.strategy).toBe('recent-tokens');
      const messages = context.messages.slice(1);
      expect(kinds(messages.slice(0, 1))).toEqual(['user:compaction_summary']);
      expect(messages[0].parts[0].text.startsWith(PREVIOUS_SUMMARY_MARKER)).toBe(true);
      // keepRecentTokens is 20k clamped to half of the 13,616 usable tokens.
      const tail = messages.slice(1).filter((m: any) => !m.metadata?.kind);
      expect(tail.length).toBeGreaterThan(0);
      expect(entry.tokensAfter).toBeLessThan(6_808 + 2_000);
    });

    it('spec-003: an assistant "[COMPACTED_CONTEXT]" summary and the last turns, within half the window', async () => {
      const { entry, context } = await compactPreset('spec-003', { compaction: { summaryMaxTokens: 2_000 } });
      expect(entry.strategy).toBe('compacted-context');
      const messages = context.messages.slice(1);
      expect(kinds(messages.slice(0, 1))).toEqual(['assistant:compaction_summary']);
      expect(messages[0].parts[0].text.startsWith(COMPACTED_CONTEXT_MARKER)).toBe(true);
      expect(messages.filter((m: any) => m.role === 'user' && !m.metadata?.kind).length).toBeGreaterThan(0);
      expect(entry.tokensAfter).toBeLessThanOrEqual(context.tokens.usable * 0.5);
    });
  });
});
