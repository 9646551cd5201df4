import { CODEX_SUMMARY_PREFIX, COMPACTED_CONTEXT_MARKER, OPENCODE_MARKER_TEXT, PREVIOUS_SUMMARY_MARKER } from '@app/domain';
import { Agent, agentSession, step, turnEvents } from './support/agent-script';
import { Client } from './support/client';
import { freePort, startReady, startService, TestService } from './support/service';

/**
 * Compaction end to end with the built-in heuristic summarizer (DESIGN.md
 * section 6): the overflow trigger in the append path, the marker's
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
    // Asked for one step early: the figure plus the next step's expected growth (at most a quarter of usable) reached the threshold.
    expect(before.tokens.estimated + Math.min(before.tokens.expectedGrowth, before.tokens.usable / 4)).toBeGreaterThanOrEqual(before.tokens.threshold);

    const events = await agent.events();
    const marker = events.find((e) => e.seq === markerSeq);
    expect(marker).toMatchObject({ id: `cmp-${markerSeq}-requested`, type: 'compaction.requested', data: { auto: true, reason: 'threshold' } });
    // The marker follows the batch that crossed: the step's usage, or the turn's messages when their estimates crossed first.
    expect(['step.finished', 'message.added']).toContain(events[markerSeq - 2].type);

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

  it('does not repeat an automatic compaction that did not shrink enough; re-arms once the view grows a tenth of the window; a manual one resumes', async () => {
    // A loop guard at 20%: any compaction that keeps more than a fifth of the context counts as stalled.
    const agent = await agentSession(client, key, 'loop-guard', { compaction: { loopGuardRatio: 0.2 } });
    const { markerSeq, turns } = await agent.untilMarker(1, 40, { outputLines: 20 });
    const entry = await agent.settled(markerSeq);
    expect(entry.tokensAfter).toBeGreaterThanOrEqual(entry.tokensBefore * 0.2);

    // A small turn measured on the new context confirms the stall: suspended, and the state says until when.
    const small = await agent.turn(turns + 1, { outputLines: 1 });
    expect(small.compaction).toBeUndefined();
    const suspended = (await agent.state()).compaction.suppressedReason;
    expect(suspended).toContain(`automatic compaction suspended: the compaction for marker ${markerSeq}`);
    const resumesAt = Number(/it resumes once the context reaches (\d+) tokens/.exec(suspended)![1]);
    const { tokens } = await agent.context();
    expect(resumesAt).toBe(Number(/left (\d+) tokens/.exec(suspended)![1]) + Math.ceil(tokens.usable * 0.1));

    // Growing by a tenth of the window re-arms it by itself; crossing the threshold then opens a new automatic marker.
    let turn = turns + 2;
    while ((await agent.context()).tokens.estimated < resumesAt) await agent.turn(turn++, { outputLines: 20 });
    expect((await agent.state()).compaction.suppressedReason).toBeNull();
    const again = await agent.untilMarker(turn, 40, { outputLines: 20 });
    expect(again.markerSeq).toBeGreaterThan(markerSeq);
    expect(await agent.settled(again.markerSeq)).toMatchObject({ status: 'completed', auto: true, reason: 'threshold' });

    const manual = await client.request('POST', `${agent.path}/compactions`, { key, body: { wait: true } });
    expect(manual.body.status).toBe('completed');
    expect((await agent.state()).compaction.suppressedReason).toBeNull();
  });

  it('reads whole outputs from the tool-output store: an error in the last lines of a big output, hidden by its head-only view, is in the summary (worker and dry run)', async () => {
    const agent = await agentSession(client, key, 'whole-outputs', {
      limits: { context: 200_000, output: 8_000 },
      compaction: { auto: false },
      toolOutput: { maxMessageBytes: 4_096 },
    });
    const log = [
      ...Array.from({ length: 3_000 }, (_, i) => `[build] compiled module ${i} in ${i % 97} ms`),
      'Error: connect ECONNREFUSED 10.0.0.7:5432',
      '    at TCPConnectWrap.afterConnect (src/db/pool.ts:88:13)',
      'Process exited with code 1',
    ].join('\n');
    const say = (role: string, text: string) => ({ type: 'message.added', data: { message: { role, parts: [{ type: 'text', text }] } } });
    await agent.append([
      say('user', 'Build the service and tell me why it fails.'),
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'build-1', name: 'bash', input: { command: 'npm run build' } }] } } },
      { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'build-1', name: 'bash', output: log, isError: true }] } } },
      say('assistant', 'The build ran; looking at it.'),
      say('user', 'Now look at the tests.'),
      say('assistant', 'Looking at the tests.'),
    ]);
    const view = JSON.stringify(await agent.context());
    expect(view).toContain('[build] compiled module 0 in');
    expect(view).not.toContain('ECONNREFUSED');

    const dry = await client.request('POST', `${agent.path}/compactions`, { key, body: { dryRun: true } });
    expect(dry.body.summary).toContain('ECONNREFUSED 10.0.0.7:5432');
    expect(dry.body.retention).toMatchObject({ ratio: 1, missing: [] });

    const done = await client.request('POST', `${agent.path}/compactions`, { key, body: { wait: true } });
    expect(done.body).toMatchObject({ status: 'completed', retention: { ratio: 1 } });
    expect(done.body.summary).toContain('ECONNREFUSED 10.0.0.7:5432');
    expect(done.body.summary).toContain('src/db/pool.ts:88');
    const [entry] = (await agent.compactions()).compactions;
    expect(entry.retention).toEqual(done.body.retention);
  });

  it("exports each committed compaction's retention as worker metrics: the ratios and the facts carried forward", async () => {
    // A worker whose metrics port this test knows takes over the queue.
    await Promise.all(service.workers.splice(0).map((w) => w.stop()));
    const port = await freePort();
    service.workers.push(await startReady('worker', { ...service.env, WORKER_PORT: String(port) }, `http://127.0.0.1:${port}/healthz`));

    const agent = await agentSession(client, key, 'retention-metrics', { compaction: { auto: false } });
    for (let turn = 1; turn <= 3; turn++) await agent.turn(turn);
    const done = await client.request('POST', `${agent.path}/compactions`, { key, body: { wait: true } });
    expect(done.body).toMatchObject({ status: 'completed', retention: { ratio: expect.any(Number) } });
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const sample = (name: string) => Number(new RegExp(`^${name}\\{strategy="retain-summary"\\} (\\S+)$`, 'm').exec(metrics)?.[1]);
    expect(sample('session_store_compaction_retention_ratio_count')).toBe(1);
    expect(sample('session_store_compaction_retention_ratio_sum')).toBeCloseTo(done.body.retention.ratio, 6);
    expect(sample('session_store_compaction_summarizer_retention_ratio_count')).toBe(1);
    expect(sample('session_store_compaction_carried_facts_total')).toBe(done.body.retention.carried);
  });

  describe('triggers on what the model will see', () => {
    /** An assistant call and its result with `lines` lines of output: no step.finished anywhere. */
    const toolExchange = (id: string, lines: number) => [
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: id, name: 'bash', input: { command: `cat ${id}.log` } }] } } },
      {
        type: 'message.added',
        data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: id, name: 'bash', output: Array.from({ length: lines }, (_, i) => `${id} line ${i} value=${i * 7919}`).join('\n') }] } },
      },
    ];

    it('a client appending tool results and reading context, with no step.finished, gets a compaction before the view exceeds the window', async () => {
      const agent = await agentSession(client, key, 'growth-only');
      await agent.append([{ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: 'Read every log under /var/log/app.' }] } } }]);
      let markerSeq: number | undefined;
      for (let i = 1; markerSeq === undefined && i <= 60; i++) {
        const appended = await agent.append(toolExchange(`log-${i}`, 40));
        markerSeq = appended.compaction?.pendingMarkerSeq;
        const { tokens } = await agent.context();
        if (markerSeq === undefined) expect(tokens.estimated).toBeLessThan(tokens.threshold);
      }
      expect(markerSeq).toBeDefined();
      const events = await agent.events();
      expect(events.filter((e) => e.type === 'step.finished')).toEqual([]);
      expect(events.find((e) => e.seq === markerSeq)).toMatchObject({ type: 'compaction.requested', data: { auto: true, reason: 'threshold' } });
      // The marker opened on the append that crossed the threshold, below the window.
      expect(events[markerSeq! - 2].type).toBe('message.added');

      const entry = await agent.settled(markerSeq!);
      expect(entry).toMatchObject({ status: 'completed', auto: true });
      const after = await agent.context();
      expect(after.pivotSeq).toBe(entry.completedSeq);
      expect(after.tokens.estimated).toBeLessThan(after.tokens.threshold);
      await agent.expectValidForProviders();
    });

    it('a late step.finished (measured before the pivot, appended after it) starts no second compaction; a step tied to the new context counts', async () => {
      const agent = await agentSession(client, key, 'late-step');
      // Each turn and its step in one batch: the step precedes any marker and so the pivot, whatever the worker's
      // speed, and the client's next step without contextSeq is one it sent before the pivot.
      let markerSeq = 0;
      for (let turn = 1; markerSeq === 0 && turn <= 40; turn++) {
        const { tokens } = await agent.context();
        const appended = await agent.append([...turnEvents('late-step', turn), step(tokens.estimated + 2_500)]);
        markerSeq = appended.compaction?.pendingMarkerSeq ?? 0;
      }
      expect(markerSeq).toBeGreaterThan(0);
      const entry = await agent.settled(markerSeq);
      const pivoted = await agent.context();
      expect(pivoted.pivotSeq).toBe(entry.completedSeq);
      const overThreshold = pivoted.tokens.threshold + 500;

      // The client's call ran on the old context: its reply and its usage (over the threshold) arrive after the pivot.
      const late = await agent.append([
        { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text: 'Done with that step.' }] } } },
        { type: 'step.finished', data: { usage: { input_tokens: overThreshold, output_tokens: 50 } } },
      ]);
      expect(late.compaction).toBeUndefined();
      const afterLate = await agent.context();
      expect(afterLate.tokens.basis).toBe('estimate');
      expect(afterLate.tokens.estimated).toBeLessThan(afterLate.tokens.threshold);
      expect((await agent.events()).filter((e) => e.type === 'compaction.requested').map((e) => e.seq)).toEqual([markerSeq]);

      // The same figure with contextSeq before the pivot is just as stale; a figure tied to the new context is trusted.
      const tied = await agent.append([
        { type: 'step.finished', data: { usage: { input_tokens: overThreshold, output_tokens: 50 }, contextSeq: markerSeq } },
      ]);
      expect(tied.compaction).toBeUndefined();
      const current = await agent.context();
      const trusted = await agent.append([
        { type: 'step.finished', data: { usage: { input_tokens: current.tokens.estimated, output_tokens: 10 }, contextSeq: current.headSeq } },
      ]);
      expect(trusted.compaction).toBeUndefined();
      expect((await agent.context()).tokens).toMatchObject({ basis: 'usage+estimate', estimated: current.tokens.estimated + 10 });
    });
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
