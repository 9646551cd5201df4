import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Client as PgClient } from 'pg';
import {
  CLEARED_TOOL_INPUT,
  DIGEST_KIND,
  DIGEST_PREFIX,
  estimateMessageTokens,
  prunedPlaceholder,
  validateAnthropicRequest,
  validateOpenAIChatMessages,
} from '@app/domain';
// Not the lib's index: it loads the Nest module, which jest cannot require.
import { sessionJobId } from '../libs/queue/src/job-ids';
import { JobName, QueueName } from '../libs/queue/src/queue-names';
import { Client, userMessage } from './support/client';
import { connectAs } from './support/database';
import { jobResult } from './support/jobs';
import { LlmStub, startLlmStub } from './support/llm-stub';
import { startRedis, stopRedis } from './support/redis-server';
import { freePort, startService, TestService } from './support/service';
import { awaitEvent } from './support/sse';

/**
 * Pruning and tool-result archiving end to end: POST .../prune in
 * the API process, the delayed job after a step in the worker, what the
 * context shows afterwards, and that it stays valid for every provider.
 */

const JOB_DELAY_MS = 1000;
/** Outputs stay whole in the event, so sizes are exactly what the test sends. */
const WHOLE_OUTPUTS = { toolOutput: { enabled: false } };

const answer = (text = 'Done.') => ({ type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text }] } } });
const step = { type: 'step.finished', data: { usage: { input_tokens: 1_000, output_tokens: 100 }, finishReason: 'stop' } };
const inputOf = (callId: string) => ({ command: `run ${callId}` });

/** An assistant call and its result. */
function toolUse(callId: string, output: string, name = 'bash') {
  return [
    { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name, input: inputOf(callId) }] } } },
    { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name, output }] } } },
  ];
}

/** OpenCode's case: a long output in turn 1, then two more user turns. */
const longOutputThenTwoTurns = (callId: string, name = 'bash') => [
  userMessage('Turn 1: read the build log'),
  ...toolUse(callId, 'x'.repeat(200_000), name),
  answer(),
  userMessage('Turn 2'),
  answer(),
  userMessage('Turn 3'),
  answer(),
];

const toolParts = (messages: any[], callId: string) =>
  messages.flatMap((m: any) => m.parts ?? []).filter((p: any) => (p.type === 'tool_call' || p.type === 'tool_result') && p.callId === callId);
const resultOf = (messages: any[], callId: string) => toolParts(messages, callId).find((p: any) => p.type === 'tool_result');
const callOf = (messages: any[], callId: string) => toolParts(messages, callId).find((p: any) => p.type === 'tool_call');

describe('prune and archive', () => {
  let service: TestService;
  let client: Client;
  let stub: LlmStub;
  let key: string;
  let tenantId: string;
  let owner: PgClient;
  let redis: Redis;
  let queue: Queue;

  beforeAll(async () => {
    stub = await startLlmStub();
    service = await startService({ env: { PRUNE_JOB_DELAY_MS: String(JOB_DELAY_MS), OPENAI_BASE_URL: `${stub.url}/v1` } });
    client = new Client(service.baseUrl);
    ({ key, tenantId } = await client.createTenant());
    owner = await connectAs(service.dbUrl);
    redis = new Redis(service.redisUrl, { maxRetriesPerRequest: null });
    queue = new Queue(QueueName.Maintenance, { connection: redis, prefix: service.prefix });
  });
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await owner?.end();
    await service?.stop();
    await stub?.close();
  });

  const path = (id: string) => `/v1/sessions/${encodeURIComponent(id)}`;

  async function session(id: string, config: Record<string, unknown>, events: unknown[]) {
    await client.createSession(key, { id, model: 'gpt-4.1', system: 'You are a careful coding agent.', config });
    return append(id, events);
  }

  async function append(id: string, events: unknown[]) {
    const res = await client.append(key, id, { events });
    expect(res.status).toBe(201);
    return res.body as { headSeq: number };
  }

  async function prune(id: string, body: unknown = { wait: true }, as = key) {
    return client.request('POST', `${path(id)}/prune`, { key: as, body });
  }

  async function pruneNow(id: string) {
    const res = await prune(id);
    expect(res.status).toBe(200);
    return res.body;
  }

  async function context(id: string, format = 'neutral') {
    const res = await client.request('GET', `${path(id)}/context?format=${format}`, { key });
    expect(res.status).toBe(200);
    return res.body;
  }

  /** Every view after pruning or archiving passes the providers' ordering rules. */
  async function expectValidForProviders(id: string) {
    const anthropic = await context(id, 'anthropic');
    expect(validateAnthropicRequest({ system: anthropic.system, messages: anthropic.messages })).toEqual([]);
    expect(validateOpenAIChatMessages((await context(id, 'openai')).messages)).toEqual([]);
  }

  const eventsOfType = async (id: string, type: string) => (await client.allEvents(key, id)).filter((e) => e.type === type);

  it("OpenCode: a 200,000-char output in turn 1 and two more user turns is pruned once, even by concurrent runs; the stored output is untouched", async () => {
    const { headSeq } = await session('oc-long', { preset: 'opencode', ...WHOLE_OUTPUTS }, longOutputThenTwoTurns('oc-1'));

    const [first, second] = await Promise.all([prune('oc-long'), prune('oc-long')]);
    expect([first.status, second.status]).toEqual([200, 200]);
    const [done, idle] = first.body.prune.status === 'pruned' ? [first.body, second.body] : [second.body, first.body];
    expect(done).toMatchObject({
      sessionId: 'oc-long',
      headSeq: headSeq + 1,
      prune: {
        status: 'pruned',
        seq: headSeq + 1,
        eventId: `prune-${headSeq + 1}`,
        mode: 'opencode',
        callIds: ['oc-1'],
        tokensFreed: 50_000,
        cleared_tool_uses: 1,
        cleared_input_tokens: 50_000,
        clearInputs: false,
        policy: { mode: 'opencode', protectTurns: 2, protectTokens: 40_000, minimumTokens: 20_000, protectedTools: ['skill'] },
      },
      archive: { status: 'disabled' },
    });
    expect(idle).toEqual({ sessionId: 'oc-long', headSeq: headSeq + 1, prune: { status: 'nothing' }, archive: { status: 'disabled' }, rewrite: null });
    expect(await pruneNow('oc-long')).toMatchObject({ headSeq: headSeq + 1, prune: { status: 'nothing' } });

    const view = await context('oc-long');
    expect(resultOf(view.messages, 'oc-1').output).toBe(prunedPlaceholder());
    expect(callOf(view.messages, 'oc-1').input).toEqual(inputOf('oc-1'));
    expect(view.tokens.estimated).toBeLessThan(1_000);
    const events = await client.allEvents(key, 'oc-long');
    expect(events.filter((e) => e.type === 'tool_outputs.pruned')).toHaveLength(1);
    expect(resultOf(events.map((e) => e.data.message ?? {}), 'oc-1').output).toHaveLength(200_000);
    await expectValidForProviders('oc-long');

    // The prune history alone, as the inspector asks for it: only those types, in a last page.
    const history = await client.request('GET', '/v1/sessions/oc-long/events?types=tool_outputs.pruned,tool_results.archived&limit=50', { key });
    expect(history.status).toBe(200);
    expect(history.body.events).toEqual(events.filter((e) => e.type === 'tool_outputs.pruned' || e.type === 'tool_results.archived'));
    expect(history.body.nextAfterSeq).toBeNull();
    const paged = await client.request('GET', '/v1/sessions/oc-long/events?types=message.added&limit=2', { key });
    expect(paged.body.events.map((e: { seq: number }) => e.seq)).toEqual(events.filter((e) => e.type === 'message.added').slice(0, 2).map((e) => e.seq));
    expect(paged.body.nextAfterSeq).toBe(paged.body.events[1].seq);
    for (const bad of ['', 'no.such.type', 'message.added,,']) {
      const res = await client.request('GET', `/v1/sessions/oc-long/events?types=${encodeURIComponent(bad)}`, { key });
      expect({ bad, status: res.status, code: res.body.code }).toEqual({ bad, status: 400, code: 'validation_failed' });
    }
  });

  it('OpenCode: a protected tool (skill) stays, and a prune below the minimum does nothing', async () => {
    await session('oc-skill', { preset: 'opencode', ...WHOLE_OUTPUTS }, longOutputThenTwoTurns('sk-1', 'skill'));
    expect((await pruneNow('oc-skill')).prune).toEqual({ status: 'nothing' });
    expect(resultOf((await context('oc-skill')).messages, 'sk-1').output).toHaveLength(200_000);

    // 15,000 tokens, then 30,000: the newer is protected, the older frees less than 20,000.
    await session('oc-small', { preset: 'opencode', ...WHOLE_OUTPUTS }, [
      userMessage('Turn 1'),
      ...toolUse('sm-1', 'a'.repeat(60_000)),
      ...toolUse('sm-2', 'b'.repeat(120_000)),
      userMessage('Turn 2'),
      userMessage('Turn 3'),
    ]);
    expect((await pruneNow('oc-small')).prune).toEqual({ status: 'nothing' });
    expect(await eventsOfType('oc-small', 'tool_outputs.pruned')).toEqual([]);
  });

  it('OpenCode with the tool-output cache on (preset default): the placeholder carries the ref', async () => {
    // 210,000 chars each; the in-context view the cache keeps is ~50 KB (about 12,800 tokens).
    const outputs = Array.from({ length: 6 }, (_, i) => toolUse(`ref-${i}`, `${String(i).repeat(99)}\n`.repeat(2_100))).flat();
    await session('oc-refs', { preset: 'opencode' }, [userMessage('Turn 1'), ...outputs, userMessage('Turn 2'), userMessage('Turn 3')]);
    const report = await pruneNow('oc-refs');
    expect(report.prune.status).toBe('pruned');
    // The oldest go, the newest 40,000 tokens stay.
    expect(report.prune.callIds[0]).toBe('ref-0');
    expect(report.prune.callIds).not.toContain('ref-5');
    const view = await context('oc-refs');
    const stored = (await client.allEvents(key, 'oc-refs')).map((e) => e.data.message ?? {});
    for (const callId of report.prune.callIds) {
      const ref = resultOf(stored, callId).outputRef.id;
      expect(resultOf(view.messages, callId).output).toBe(prunedPlaceholder(ref));
      expect(prunedPlaceholder(ref)).toBe(`[Old tool result content cleared; ref=${ref}]`);
    }
    await expectValidForProviders('oc-refs');
  });

  it('OpenCode over outputs kept inline (each shown whole in its event): the placeholder carries the ref, which still reads', async () => {
    // 48,000 chars each in 480 lines: whole in the ~50 KB view, so their events keep them and no content row is written.
    const lineOf = (i: number) => String(i).repeat(99);
    const outputs = Array.from({ length: 8 }, (_, i) => toolUse(`in-${i}`, `${lineOf(i)}\n`.repeat(480))).flat();
    await session('oc-inline', { preset: 'opencode' }, [userMessage('Turn 1'), ...outputs, userMessage('Turn 2'), userMessage('Turn 3')]);
    const report = await pruneNow('oc-inline');
    expect(report.prune.status).toBe('pruned');
    expect(report.prune.callIds[0]).toBe('in-0');
    const view = await context('oc-inline');
    const stored = (await client.allEvents(key, 'oc-inline')).map((e) => e.data.message ?? {});
    for (const callId of report.prune.callIds) {
      const part = resultOf(stored, callId);
      expect(part.truncated).toBe(false);
      expect(resultOf(view.messages, callId).output).toBe(prunedPlaceholder(part.outputRef.id));
      const read = await client.request('GET', `/v1/tool-outputs/${part.outputRef.id}?offset=480`, { key });
      expect([read.status, read.body.lines]).toEqual([200, `   480\t${lineOf(Number(callId.slice(3)))}`]);
    }
  });

  describe('Anthropic parameters from the session config', () => {
    const uses = [
      ['an-1', 'bash'],
      ['an-2', 'read_file'],
      ['an-3', 'bash'],
      ['an-4', 'bash'],
      ['an-5', 'bash'],
      ['an-6', 'bash'],
    ] as const;
    const events = [userMessage('Refactor the parser'), ...uses.flatMap(([callId, name]) => toolUse(callId, 'y'.repeat(8_000), name)), answer()];
    const anthropic = (overrides: Record<string, unknown>) => ({
      prune: {
        enabled: true,
        trigger: { type: 'tool_uses', value: 3 },
        keep: { type: 'tool_uses', value: 2 },
        clearAtLeast: 3_000,
        excludeTools: ['read_file'],
        clearToolInputs: true,
        ...overrides,
      },
      ...WHOLE_OUTPUTS,
    });
    // Each cleared use frees its output (2,000 tokens) and, with clear_tool_inputs, its input.
    const freed = ['an-1', 'an-3', 'an-4'].reduce((sum, id) => sum + 2_000 + Math.ceil(JSON.stringify(inputOf(id)).length / 4), 0);

    it('keep, exclude_tools and clear_tool_inputs: the older uses are cleared, inputs too, and reported', async () => {
      await session('an-keep', anthropic({}), events);
      const report = await pruneNow('an-keep');
      expect(report.prune).toMatchObject({
        status: 'pruned',
        mode: 'anthropic',
        callIds: ['an-1', 'an-3', 'an-4'],
        clearInputs: true,
        cleared_tool_uses: 3,
        cleared_input_tokens: freed,
        tokensFreed: freed,
        policy: { mode: 'anthropic', keep: { type: 'tool_uses', value: 2 }, clearAtLeast: 3_000, excludeTools: ['read_file'], clearToolInputs: true },
      });
      const view = await context('an-keep');
      for (const id of ['an-1', 'an-3', 'an-4']) {
        expect(callOf(view.messages, id).input).toEqual(CLEARED_TOOL_INPUT);
        expect(resultOf(view.messages, id).output).toBe(prunedPlaceholder());
      }
      for (const id of ['an-2', 'an-5', 'an-6']) {
        expect(callOf(view.messages, id).input).toEqual(inputOf(id));
        expect(resultOf(view.messages, id).output).toHaveLength(8_000);
      }
      expect((await pruneNow('an-keep')).prune).toEqual({ status: 'nothing' });
      await expectValidForProviders('an-keep');
    });

    it('trigger on input tokens fires on the context figure; clear_at_least and an unmet trigger leave everything', async () => {
      await session('an-input', anthropic({ trigger: { type: 'input_tokens', value: 5_000 } }), events);
      expect((await pruneNow('an-input')).prune).toMatchObject({ status: 'pruned', callIds: ['an-1', 'an-3', 'an-4'] });

      await session('an-at-least', anthropic({ clearAtLeast: freed + 1 }), events);
      expect((await pruneNow('an-at-least')).prune).toEqual({ status: 'nothing' });

      await session('an-quiet', anthropic({ trigger: { type: 'input_tokens', value: 1_000_000 } }), events);
      expect((await pruneNow('an-quiet')).prune).toEqual({ status: 'nothing' });
      expect(await eventsOfType('an-quiet', 'tool_outputs.pruned')).toEqual([]);
    });
  });

  describe('archiving', () => {
    const fiveUses = [
      userMessage('Find the failing module'),
      ...[1, 2, 3, 4, 5].flatMap((n) => toolUse(`ar-${n}`, `result of ar-${n}: src/module${n}.ts has ${n} failures`)),
      answer(),
    ];
    const archiving = (archive: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      archive: { enabled: true, toolCallCutoff: 3, ...archive },
      ...WHOLE_OUTPUTS,
      ...extra,
    });

    /** The digest message in the view, and that the archived pairs are gone while the others stay. */
    async function expectArchived(id: string, digest: string) {
      const view = await context(id);
      expect(toolParts(view.messages, 'ar-1')).toEqual([]);
      expect(toolParts(view.messages, 'ar-2')).toEqual([]);
      expect(resultOf(view.messages, 'ar-3').output).toContain('src/module3.ts');
      const digests = view.messages.filter((m: any) => m.metadata?.kind === DIGEST_KIND);
      expect(digests).toHaveLength(1);
      expect(digests[0]).toMatchObject({ role: 'user', metadata: { userVisible: false }, parts: [{ type: 'text', text: `${DIGEST_PREFIX}\n${digest}` }] });
      await expectValidForProviders(id);
      return digests[0];
    }

    it('heuristic: the oldest pairs above the cutoff leave the view, one digest takes their place; its tokens are stored', async () => {
      const { headSeq } = await session('ar-heuristic', archiving({ strategy: 'heuristic' }), fiveUses);
      const report = await pruneNow('ar-heuristic');
      expect(report).toMatchObject({
        headSeq: headSeq + 1,
        prune: { status: 'disabled' },
        archive: { status: 'archived', seq: headSeq + 1, eventId: `archive-${headSeq + 1}`, callIds: ['ar-1', 'ar-2'], strategy: 'heuristic', digestBy: 'heuristic' },
      });
      expect(report.archive.digest).toContain('bash (ok) input {"command":"run ar-1"}: result of ar-1: src/module1.ts has 1 failures');
      const digest = await expectArchived('ar-heuristic', report.archive.digest);

      const { rows } = await owner.query('SELECT tokens FROM session_events WHERE session_id = $1 AND event_id = $2', ['ar-heuristic', report.archive.eventId]);
      expect(rows[0].tokens).toBe(estimateMessageTokens(digest, 'gpt-4.1'));
      expect(report.archive.digestTokens).toBe(rows[0].tokens);
      expect(await pruneNow('ar-heuristic')).toMatchObject({ headSeq: headSeq + 1, archive: { status: 'nothing' } });
    });

    it('off: nothing is archived', async () => {
      const { headSeq } = await session('ar-off', archiving({ strategy: 'off' }), fiveUses);
      expect(await pruneNow('ar-off')).toEqual({ sessionId: 'ar-off', headSeq, prune: { status: 'disabled' }, archive: { status: 'disabled' }, rewrite: null });
      expect((await context('ar-off')).messages.filter((m: any) => m.metadata?.kind === DIGEST_KIND)).toEqual([]);
    });

    it('llm: the digest comes from the session summarizer (an OpenAI-compatible server); a failing or absent LLM falls back to the heuristic', async () => {
      await session('ar-llm', archiving({ strategy: 'llm' }, { compaction: { summarizer: 'openai', model: 'stub-ok' } }), fiveUses);
      const report = await pruneNow('ar-llm');
      expect(report.archive).toMatchObject({ status: 'archived', callIds: ['ar-1', 'ar-2'], strategy: 'llm', digestBy: 'llm', model: 'stub-ok' });
      expect(report.archive.digest).toContain('stub summary by openai');
      const request = stub.requests.find((r) => r.model === 'stub-ok')!;
      expect(request.problems).toEqual([]);
      expect(request.system).toContain('You summarize multiple tool execution outputs');
      expect(request.messages[0].content).toContain('[1] Tool: bash\nStatus: ok\nInput: {"command":"run ar-1"}');
      expect(request.messages[0].content).not.toContain('ar-3');
      await expectArchived('ar-llm', report.archive.digest);

      await session('ar-llm-500', archiving({ strategy: 'llm' }, { compaction: { summarizer: 'openai', model: 'stub-500' } }), fiveUses);
      const failed = await pruneNow('ar-llm-500');
      expect(failed.archive).toMatchObject({ status: 'archived', strategy: 'llm', digestBy: 'heuristic', fallback: expect.stringMatching(/^llm_failed: HTTP 500/) });
      await expectArchived('ar-llm-500', failed.archive.digest);

      // spec-001's own settings: archive on with strategy llm, the summarizer heuristic (no LLM): cutoff 10.
      const eleven = [userMessage('Go'), ...Array.from({ length: 11 }, (_, i) => toolUse(`s1-${i}`, `out ${i}`)).flat()];
      await session('ar-spec-001', { preset: 'spec-001' }, eleven);
      expect((await pruneNow('ar-spec-001')).archive).toMatchObject({
        status: 'archived',
        callIds: ['s1-0'],
        strategy: 'llm',
        digestBy: 'heuristic',
        fallback: 'no_llm_configured',
      });
    });
    it('llm: results appended during the LLM call do not void its digest; they are archived by the next run', async () => {
      const four = [userMessage('Go'), ...[1, 2, 3, 4].flatMap((n) => toolUse(`sl-${n}`, `out ${n}`))];
      // Seed 001's archive at every run (rule `always`): with `pay-off` the second would wait for the compaction.
      const seedTiming = { compaction: { summarizer: 'openai', model: 'stub-slow-1500' }, cache: { rewrites: 'always' } };
      await session('ar-slow', archiving({ strategy: 'llm' }, seedTiming), four);
      const running = prune('ar-slow');
      await stub.received((r) => r.model === 'stub-slow-1500', 'the digest call', 10_000);
      await append('ar-slow', [...toolUse('sl-5', 'out 5'), ...toolUse('sl-6', 'out 6')]);
      const first = (await running).body;
      expect(first.archive).toMatchObject({ status: 'archived', callIds: ['sl-1'], digestBy: 'llm' });
      expect((await pruneNow('ar-slow')).archive).toMatchObject({ status: 'archived', callIds: ['sl-2', 'sl-3'], digestBy: 'llm' });
      expect((await context('ar-slow')).messages.filter((m: any) => m.metadata?.kind === DIGEST_KIND)).toHaveLength(2);
      await expectValidForProviders('ar-slow');
    });
  });

  it('after a step, the delayed job prunes in the worker: one job per session for a burst of steps, none where prune and archive are off', async () => {
    await session('auto-on', { preset: 'opencode', ...WHOLE_OUTPUTS }, longOutputThenTwoTurns('au-1'));
    await session('auto-off', { preset: 'spec-000', ...WHOLE_OUTPUTS }, longOutputThenTwoTurns('ao-1'));
    const heads: number[] = [];
    for (let i = 0; i < 3; i++) heads.push((await append('auto-on', [step])).headSeq);
    const offHead = (await append('auto-off', [step])).headSeq;

    const job = (await queue.getJob(sessionJobId(JobName.Prune, tenantId, 'auto-on', heads[0])))!;
    expect(job.opts.delay).toBe(JOB_DELAY_MS);
    await jobResult(queue, job.id!, 'the prune job', 20_000);
    expect((await queue.getJob(job.id!))!.returnvalue).toMatchObject({ prune: { status: 'pruned', callIds: ['au-1'] } });
    const mine = (await queue.getJobs(['completed', 'active', 'delayed', 'waiting'])).filter((j) => j.name === JobName.Prune && j.data.sessionId === 'auto-on');
    expect(mine.map((j) => j.id)).toEqual([job.id]);
    expect(await eventsOfType('auto-on', 'tool_outputs.pruned')).toHaveLength(1);
    await expectValidForProviders('auto-on');

    expect(await queue.getJob(sessionJobId(JobName.Prune, tenantId, 'auto-off', offHead))).toBeUndefined();
    expect(await eventsOfType('auto-off', 'tool_outputs.pruned')).toEqual([]);
  });

  it('queues a job now without wait; 404 for another tenant or an unknown session', async () => {
    const { headSeq } = await session('queued', { preset: 'opencode', ...WHOLE_OUTPUTS }, longOutputThenTwoTurns('qu-1'));
    const queued = await prune('queued', {});
    expect(queued.status).toBe(202);
    expect(queued.body).toEqual({ sessionId: 'queued', headSeq, queued: true, jobId: sessionJobId(JobName.Prune, tenantId, 'queued', `now-${headSeq}`) });
    await awaitEvent(service.baseUrl, key, 'queued', (e) => e.type === 'tool_outputs.pruned', 'the queued prune to commit', 20_000);
    expect(await eventsOfType('queued', 'tool_outputs.pruned')).toHaveLength(1);

    const other = await client.createTenant('other');
    for (const body of [{ wait: true }, {}]) {
      expect((await prune('queued', body, other.key)).status).toBe(404);
      expect((await prune('nope', body)).body).toMatchObject({ status: 404, code: 'session_not_found' });
    }
    expect((await prune('queued', { wait: 'yes' })).status).toBe(400);
  });

  it('with Redis gone, a step still appends (unscheduled) and wait runs the job in the API; without wait it is 503', async () => {
    const port = await freePort();
    const redisServer = await startRedis(port);
    const down = await startService({ worker: false, redisUrl: `redis://127.0.0.1:${port}` });
    try {
      const api = new Client(down.baseUrl);
      const tenant = await api.createTenant();
      await api.createSession(tenant.key, { id: 'offline', model: 'gpt-4.1', config: { preset: 'opencode', ...WHOLE_OUTPUTS } });
      expect((await api.append(tenant.key, 'offline', { events: longOutputThenTwoTurns('of-1') })).status).toBe(201);
      await stopRedis(redisServer);

      expect((await api.append(tenant.key, 'offline', { events: [step] })).status).toBe(201);
      const now = await api.request('POST', '/v1/sessions/offline/prune', { key: tenant.key, body: { wait: true } });
      expect(now.body.prune).toMatchObject({ status: 'pruned', callIds: ['of-1'] });
      const queued = await api.request('POST', '/v1/sessions/offline/prune', { key: tenant.key, body: {} });
      expect(queued.body).toMatchObject({ status: 503, code: 'redis_unavailable' });
      expect(Number(queued.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await down.stop();
      await stopRedis(redisServer);
    }
  });
});
