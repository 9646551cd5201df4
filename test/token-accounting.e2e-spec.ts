import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { CLEARED_TOOL_INPUT, prunedPlaceholder } from '@app/domain';
// Not the lib's index: it loads the Nest module, which jest cannot require.
import { sessionJobId } from '../libs/queue/src/job-ids';
import { JobName, QueueName } from '../libs/queue/src/queue-names';
import { turnEvents } from './support/agent-script';
import { Client, userMessage } from './support/client';
import { jobResult } from './support/jobs';
import { startService, TestService } from './support/service';
import { awaitEvent } from './support/sse';

/**
 * The session's token figure with the usage a real agent posts: every case
 * appends its messages and a `step.finished` carrying the provider's usage
 * through HTTP, and checks what the service decides from it (the automatic
 * compaction marker, Anthropic-style clearing of tool uses, the overhead it
 * learns) against the systems it reproduces.
 *
 * 1. OpenCode's overflow check, ported case by case from
 *    anomalyco/opencode (formerly sst/opencode),
 *    packages/opencode/test/session/compaction.test.ts,
 *    describe("session.compaction.isOverflow"), over
 *    packages/opencode/src/session/overflow.ts (`usable`, `isOverflow`):
 *      count   = tokens.total || input + output + cache.read + cache.write
 *      reserved = compaction.reserved ?? min(20_000, maxOutputTokens)
 *      usable  = limit.input ? limit.input - reserved : limit.context - maxOutputTokens
 *      overflow when count >= usable; never when compaction.auto === false or limit.context === 0
 *    where maxOutputTokens = min(limit.output, OUTPUT_TOKEN_MAX = 32_000).
 *    (The newest stored upstream overflow.ts, sst/opencode 31e22f65, also
 *    subtracts `reserved` without limit.input: context - maxOutput - reserved.
 *    No isOverflow case below changes its answer with it, but `usable` and the
 *    threshold asserted here follow the formula above, the one the opencode
 *    preset implements and ../shared/reference.md documents.)
 * 2. Anthropic context editing, `clear_tool_uses_20250919`
 *    (https://docs.anthropic.com/en/docs/build-with-claude/context-editing):
 *    `trigger` (default 100,000 input tokens), `keep` (default 3 tool uses),
 *    `clear_at_least`, `exclude_tools`, `clear_tool_inputs`; it reports
 *    `cleared_tool_uses` and `cleared_input_tokens`.
 * 3. A session whose provider usage is about 5× the view's estimate (tool
 *    definitions the log never sees): it compacts when the usage crosses the
 *    threshold, and after the pivot reports the new estimate plus the learnt
 *    overhead (docs/compaction.md section 12).
 */

const JOB_DELAY_MS = 200;
/** Outputs stay whole in the events, so token sizes are exactly what the test sends. */
const WHOLE_OUTPUTS = { toolOutput: { enabled: false } };

type Usage = { input_tokens: number; output_tokens: number; cache_read_tokens?: number; cache_creation_tokens?: number };
/** A step; with `contextSeq`, the head of the context its call was sent with (else the service infers it). */
const stepFinished = (usage: Usage, finishReason = 'tool_use', contextSeq?: number) => ({
  type: 'step.finished',
  data: { usage, finishReason, ...(contextSeq === undefined ? {} : { contextSeq }) },
});
const assistantText = (text: string) => ({ type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text }] } } });
const usageTotal = (u: Usage) => u.input_tokens + u.output_tokens + (u.cache_read_tokens ?? 0) + (u.cache_creation_tokens ?? 0);

describe('token accounting with the usage a client posts', () => {
  let service: TestService;
  let client: Client;
  let key: string;
  let tenantId: string;
  let redis: Redis;
  let queue: Queue;

  beforeAll(async () => {
    service = await startService({ env: { PRUNE_JOB_DELAY_MS: String(JOB_DELAY_MS) } });
    client = new Client(service.baseUrl);
    ({ key, tenantId } = await client.createTenant());
    redis = new Redis(service.redisUrl, { maxRetriesPerRequest: null });
    queue = new Queue(QueueName.Maintenance, { connection: redis, prefix: service.prefix });
  });
  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await service?.stop();
  });

  const path = (id: string) => `/v1/sessions/${encodeURIComponent(id)}`;

  async function createSession(id: string, model: string, config: Record<string, unknown>) {
    await client.createSession(key, { id, model, system: 'You are a careful coding agent.', config });
  }

  async function append(id: string, events: unknown[]) {
    const res = await client.append(key, id, { events });
    if (res.status !== 201) throw new Error(`append ${id}: ${res.status} ${res.text}`);
    return res.body as { headSeq: number; compaction?: { pendingMarkerSeq: number } };
  }

  /** The context now, or exactly as it was after `atSeq` (before a marker the worker may already have compacted). */
  async function context(id: string, atSeq?: number) {
    const res = await client.request('GET', `${path(id)}/context${atSeq ? `?atSeq=${atSeq}` : ''}`, { key });
    if (res.status !== 200) throw new Error(`context ${id}: ${res.status} ${res.text}`);
    // The session's own figure, the trigger's: a read over the usable window is fitted, and reports the figure before fitting.
    const { fitted, tokens } = res.body;
    return { ...res.body, tokens: { ...tokens, estimated: fitted?.tokensBefore ?? tokens.estimated } };
  }

  async function state(id: string) {
    const res = await client.request('GET', path(id), { key });
    if (res.status !== 200) throw new Error(`session ${id}: ${res.status} ${res.text}`);
    return res.body;
  }

  const eventsOfType = async (id: string, type: string) => (await client.allEvents(key, id)).filter((e) => e.type === type);
  /** The compaction.completed event of the marker, awaited on the session's event stream. */
  const compacted = (id: string, markerSeq: number) =>
    awaitEvent(service.baseUrl, key, id, (e) => e.type === 'compaction.completed' && e.data.markerSeq === markerSeq, `the compaction of marker ${markerSeq}`, 30_000);

  describe("OpenCode's isOverflow, usage posted by the client (preset opencode)", () => {
    interface Limits {
      context: number;
      input?: number;
      output: number;
    }
    interface OverflowCase {
      name: string;
      limits: Limits;
      /** OpenCode's `tokens` as the processor records them from the provider's usage. */
      tokens: { input: number; output: number; reasoning: 0; cache: { read: number; write: number } };
      auto?: false;
      /** What OpenCode's isOverflow returns. */
      overflow: boolean;
    }

    /** OpenCode's `usable` (overflow.ts) with compaction.reserved unset; null where the model has no context limit. */
    const openCodeUsable = ({ context, input, output }: Limits): number | null => {
      if (context === 0) return null;
      const maxOutput = Math.min(output, 32_000);
      return input ? input - Math.min(20_000, maxOutput) : context - maxOutput;
    };

    // The upstream tests, in their order. The asymmetry test checks two models with the same tokens: two rows.
    const cases: OverflowCase[] = [
      {
        name: 'returns true when token count exceeds usable context',
        limits: { context: 100_000, output: 32_000 },
        tokens: { input: 75_000, output: 5_000, reasoning: 0, cache: { read: 0, write: 0 } },
        overflow: true,
      },
      {
        name: 'returns false when token count within usable context',
        limits: { context: 200_000, output: 32_000 },
        tokens: { input: 100_000, output: 10_000, reasoning: 0, cache: { read: 0, write: 0 } },
        overflow: false,
      },
      {
        name: 'includes cache.read in token count',
        limits: { context: 100_000, output: 32_000 },
        tokens: { input: 60_000, output: 10_000, reasoning: 0, cache: { read: 10_000, write: 0 } },
        overflow: true,
      },
      {
        name: 'respects input limit for input caps',
        limits: { context: 400_000, input: 272_000, output: 128_000 },
        tokens: { input: 271_000, output: 1_000, reasoning: 0, cache: { read: 2_000, write: 0 } },
        overflow: true,
      },
      {
        name: 'returns false when input/output are within input caps',
        limits: { context: 400_000, input: 272_000, output: 128_000 },
        tokens: { input: 200_000, output: 20_000, reasoning: 0, cache: { read: 10_000, write: 0 } },
        overflow: false,
      },
      {
        name: 'returns false when output within limit with input caps',
        limits: { context: 200_000, input: 120_000, output: 10_000 },
        tokens: { input: 50_000, output: 9_999, reasoning: 0, cache: { read: 0, write: 0 } },
        overflow: false,
      },
      {
        name: 'BUG: no headroom when limit.input is set — compaction should trigger near boundary',
        limits: { context: 200_000, input: 200_000, output: 32_000 },
        tokens: { input: 180_000, output: 15_000, reasoning: 0, cache: { read: 3_000, write: 0 } },
        overflow: true,
      },
      {
        name: 'BUG: without limit.input, same token count correctly triggers compaction',
        limits: { context: 200_000, output: 32_000 },
        tokens: { input: 180_000, output: 15_000, reasoning: 0, cache: { read: 3_000, write: 0 } },
        overflow: true,
      },
      {
        name: 'BUG: asymmetry — the model with limit.input (reserve min(20_000, output) from the input limit)',
        limits: { context: 200_000, input: 200_000, output: 32_000 },
        tokens: { input: 166_000, output: 10_000, reasoning: 0, cache: { read: 5_000, write: 0 } },
        overflow: true,
      },
      {
        name: 'BUG: asymmetry — the same model without limit.input (reserve the whole output from the window)',
        limits: { context: 200_000, output: 32_000 },
        tokens: { input: 166_000, output: 10_000, reasoning: 0, cache: { read: 5_000, write: 0 } },
        overflow: true,
      },
      {
        name: 'returns false when model context limit is 0',
        limits: { context: 0, output: 32_000 },
        tokens: { input: 100_000, output: 10_000, reasoning: 0, cache: { read: 0, write: 0 } },
        overflow: false,
      },
      {
        name: 'returns false when compaction.auto is disabled',
        limits: { context: 100_000, output: 32_000 },
        tokens: { input: 75_000, output: 5_000, reasoning: 0, cache: { read: 0, write: 0 } },
        auto: false,
        overflow: false,
      },
      // Not upstream test cases: the documented boundaries of the same formula (count >= usable; cache.write counts).
      {
        name: '(boundary) count equal to usable overflows: >=, not >',
        limits: { context: 100_000, output: 32_000 },
        tokens: { input: 60_000, output: 8_000, reasoning: 0, cache: { read: 0, write: 0 } },
        overflow: true,
      },
      {
        name: '(boundary) one token below usable does not',
        limits: { context: 100_000, output: 32_000 },
        tokens: { input: 60_000, output: 7_999, reasoning: 0, cache: { read: 0, write: 0 } },
        overflow: false,
      },
      {
        name: '(boundary) cache.write counts toward the total',
        limits: { context: 100_000, output: 32_000 },
        tokens: { input: 50_000, output: 8_000, reasoning: 0, cache: { read: 0, write: 10_000 } },
        overflow: true,
      },
      {
        name: '(boundary) output limit above OUTPUT_TOKEN_MAX reserves 32,000 without limit.input',
        limits: { context: 200_000, output: 128_000 },
        tokens: { input: 160_000, output: 8_000, reasoning: 0, cache: { read: 0, write: 0 } },
        overflow: true,
      },
    ];

    it.each(cases.map((c, i) => [c.name, c, i] as const))('%s', async (_name, c, i) => {
      const id = `oc-overflow-${i}`;
      await createSession(id, 'gpt-4.1', { preset: 'opencode', limits: c.limits, ...(c.auto === false ? { compaction: { auto: false } } : {}) });
      await append(id, [userMessage('Summarize the repository layout.'), assistantText('Reading the tree now.')]);
      const usage: Usage = {
        input_tokens: c.tokens.input,
        output_tokens: c.tokens.output,
        cache_read_tokens: c.tokens.cache.read,
        cache_creation_tokens: c.tokens.cache.write,
      };
      const stepped = await append(id, [stepFinished(usage)]);

      const count = c.tokens.input + c.tokens.output + c.tokens.cache.read + c.tokens.cache.write;
      const usable = openCodeUsable(c.limits);
      // The case's own arithmetic agrees with OpenCode's expected answer (guards the table).
      expect(c.auto !== false && usable !== null && count >= usable).toBe(c.overflow);

      // The figure is the posted usage, trusted whatever its size against the estimate of two short messages
      // (read as of the step: the worker may already have compacted after the marker).
      const stepSeq = c.overflow ? stepped.headSeq - 1 : stepped.headSeq;
      const { tokens } = await context(id, stepSeq);
      expect(tokens).toMatchObject({ estimated: count, basis: 'usage+estimate', usable, threshold: usable });

      const markers = await eventsOfType(id, 'compaction.requested');
      if (c.overflow) {
        // The step's own append opened the automatic marker, right after the step.
        expect(stepped.compaction?.pendingMarkerSeq).toBe(stepped.headSeq);
        expect(markers).toHaveLength(1);
        expect(markers[0]).toMatchObject({ seq: stepped.headSeq, data: { auto: true, reason: 'threshold' } });
      } else {
        expect(stepped.compaction).toBeUndefined();
        expect(markers).toEqual([]);
        expect((await state(id)).compaction).toMatchObject({ state: 'idle', pendingMarkerSeq: null });
      }
    });
  });

  describe("Anthropic's clear_tool_uses, usage posted by the client (prune mode anthropic)", () => {
    const OUTPUT_CHARS = 8_000; // 2,000 tokens each by ceil(chars / 4)
    const inputOf = (callId: string) => ({ command: `cat src/${callId}.ts` });
    const toolUse = (callId: string, name: string) => [
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name, input: inputOf(callId) }] } } },
      { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name, output: `${callId}:`.padEnd(OUTPUT_CHARS, 'y') }] } } },
    ];
    const uses = (prefix: string, names: string[]) => names.map((name, i) => [`${prefix}-${i + 1}`, name] as const);
    const sixUses = (prefix: string, names = ['bash', 'bash', 'bash', 'bash', 'bash', 'bash']) => uses(prefix, names);

    const parts = (messages: any[], callId: string) => messages.flatMap((m: any) => m.parts ?? []).filter((p: any) => p.callId === callId);
    const resultOf = (messages: any[], callId: string) => parts(messages, callId).find((p: any) => p.type === 'tool_result');
    const callOf = (messages: any[], callId: string) => parts(messages, callId).find((p: any) => p.type === 'tool_call');

    /** A Claude session with the tool uses and its prune settings; outputs whole, compaction far away (200k window, 0.8). */
    async function toolSession(id: string, prune: Record<string, unknown>, list: ReadonlyArray<readonly [string, string]>) {
      await createSession(id, 'claude-sonnet-4-5', { prune: { enabled: true, mode: 'anthropic', ...prune }, ...WHOLE_OUTPUTS });
      await append(id, [userMessage('Refactor the parser.'), ...list.flatMap(([callId, name]) => toolUse(callId, name)), assistantText('Looking at the results.')]);
    }

    /** A step with this usage, then the prune job that step scheduled (the worker's run, as an agent gets it): its report. */
    async function stepAndJob(id: string, usage: Usage) {
      const { headSeq } = await append(id, [stepFinished(usage)]);
      const jobId = sessionJobId(JobName.Prune, tenantId, id, headSeq);
      return jobResult(queue, jobId, `the prune job after seq ${headSeq} of ${id}`, 20_000);
    }

    const freedOutputs = (n: number) => n * 2_000;
    const freedInput = (callId: string) => Math.ceil(JSON.stringify(inputOf(callId)).length / 4);

    it('defaults: nothing while the input tokens are not above 100,000; above, every use but the newest 3 is cleared and reported; the figure drops by what was freed', async () => {
      const id = 'an-defaults';
      const list = sixUses('ad');
      await toolSession(id, {}, list);
      const estimateOnly = (await context(id)).tokens;
      expect(estimateOnly.basis).toBe('estimate');
      expect(estimateOnly.estimated).toBeLessThan(15_000); // the log alone is far from the trigger

      // 100,000 tokens is not *above* the trigger.
      expect((await stepAndJob(id, { input_tokens: 99_000, output_tokens: 1_000 })).prune).toEqual({ status: 'nothing' });
      expect((await context(id)).tokens).toMatchObject({ estimated: 100_000, basis: 'usage+estimate' });
      expect(await eventsOfType(id, 'tool_outputs.pruned')).toEqual([]);

      const next = { input_tokens: 100_500, output_tokens: 500 };
      const before = (await context(id)).tokens;
      const report = await stepAndJob(id, next);
      const freed = freedOutputs(3);
      expect(report.prune).toMatchObject({
        status: 'pruned',
        mode: 'anthropic',
        callIds: ['ad-1', 'ad-2', 'ad-3'],
        tokensFreed: freed,
        cleared_tool_uses: 3,
        cleared_input_tokens: freed,
        clearInputs: false,
        policy: {
          mode: 'anthropic',
          trigger: { type: 'input_tokens', value: 100_000 },
          keep: { type: 'tool_uses', value: 3 },
          clearAtLeast: 0,
          excludeTools: [],
          clearToolInputs: false,
        },
      });
      // The event the client reads carries the same report.
      const [event] = await eventsOfType(id, 'tool_outputs.pruned');
      expect(event.seq).toBe(report.prune.seq);
      expect(event.data).toMatchObject({ callIds: ['ad-1', 'ad-2', 'ad-3'], tokensFreed: freed, cleared_tool_uses: 3, cleared_input_tokens: freed });

      const view = await context(id);
      for (const [callId] of list.slice(0, 3)) {
        expect(resultOf(view.messages, callId).output).toBe(prunedPlaceholder());
        expect(callOf(view.messages, callId).input).toEqual(inputOf(callId));
      }
      for (const [callId] of list.slice(3)) expect(resultOf(view.messages, callId).output).toHaveLength(OUTPUT_CHARS);

      // The usage measured the view before the prune: stale now. The figure is the new estimate plus the overhead it learnt.
      expect(before.estimated).toBe(100_000);
      const after = view.tokens;
      expect(after.basis).toBe('estimate');
      expect(after.overhead).toBeGreaterThan(80_000);
      // The overhead is learnt on the input side: the step's output, with no message of its own in the log here, is not in the next view.
      expect(after.estimated).toBeLessThanOrEqual(usageTotal(next) - freed + 3 * 30);
      expect(after.estimated).toBeGreaterThanOrEqual(next.input_tokens - freed);
    });

    it('exclude_tools: an excluded tool is never cleared, and the newest 3 uses of any tool are kept', async () => {
      const id = 'an-exclude';
      await toolSession(id, { excludeTools: ['read_file'] }, sixUses('ax', ['bash', 'read_file', 'bash', 'read_file', 'bash', 'bash']));
      const report = await stepAndJob(id, { input_tokens: 120_000, output_tokens: 800 });
      expect(report.prune).toMatchObject({
        status: 'pruned',
        callIds: ['ax-1', 'ax-3'],
        cleared_tool_uses: 2,
        cleared_input_tokens: freedOutputs(2),
        policy: { mode: 'anthropic', excludeTools: ['read_file'] },
      });
      const view = await context(id);
      expect(resultOf(view.messages, 'ax-2').output).toHaveLength(OUTPUT_CHARS);
      expect(resultOf(view.messages, 'ax-4').output).toHaveLength(OUTPUT_CHARS);
    });

    it('clear_tool_inputs: the cleared uses lose their inputs too, counted in cleared_input_tokens', async () => {
      const id = 'an-inputs';
      const list = sixUses('ai');
      await toolSession(id, { clearToolInputs: true }, list);
      const report = await stepAndJob(id, { input_tokens: 120_000, output_tokens: 800 });
      const freed = freedOutputs(3) + ['ai-1', 'ai-2', 'ai-3'].reduce((sum, callId) => sum + freedInput(callId), 0);
      expect(report.prune).toMatchObject({ status: 'pruned', callIds: ['ai-1', 'ai-2', 'ai-3'], clearInputs: true, cleared_tool_uses: 3, cleared_input_tokens: freed, tokensFreed: freed });
      const view = await context(id);
      for (const [callId] of list.slice(0, 3)) expect(callOf(view.messages, callId).input).toEqual(CLEARED_TOOL_INPUT);
      for (const [callId] of list.slice(3)) expect(callOf(view.messages, callId).input).toEqual(inputOf(callId));
    });

    it('clear_at_least: a clearing that frees less is not applied; one that frees exactly as much is', async () => {
      await toolSession('an-at-least-unmet', { clearAtLeast: freedOutputs(3) + 1 }, sixUses('au'));
      expect((await stepAndJob('an-at-least-unmet', { input_tokens: 120_000, output_tokens: 800 })).prune).toEqual({ status: 'nothing' });
      expect(await eventsOfType('an-at-least-unmet', 'tool_outputs.pruned')).toEqual([]);

      await toolSession('an-at-least-met', { clearAtLeast: freedOutputs(3) }, sixUses('am'));
      expect((await stepAndJob('an-at-least-met', { input_tokens: 120_000, output_tokens: 800 })).prune).toMatchObject({
        status: 'pruned',
        cleared_tool_uses: 3,
        cleared_input_tokens: freedOutputs(3),
        policy: { clearAtLeast: freedOutputs(3) },
      });
    });

    it('a configured trigger and keep: cache reads count toward the input tokens; keep 1 clears all but the newest use', async () => {
      const id = 'an-custom';
      await toolSession(id, { trigger: { type: 'input_tokens', value: 50_000 }, keep: { type: 'tool_uses', value: 1 } }, sixUses('ac'));
      expect((await stepAndJob(id, { input_tokens: 20_000, cache_read_tokens: 29_000, output_tokens: 1_000 })).prune).toEqual({ status: 'nothing' });
      const report = await stepAndJob(id, { input_tokens: 2_000, cache_read_tokens: 47_000, cache_creation_tokens: 500, output_tokens: 1_000 });
      expect(report.prune).toMatchObject({
        status: 'pruned',
        callIds: ['ac-1', 'ac-2', 'ac-3', 'ac-4', 'ac-5'],
        cleared_tool_uses: 5,
        cleared_input_tokens: freedOutputs(5),
        policy: { trigger: { type: 'input_tokens', value: 50_000 }, keep: { type: 'tool_uses', value: 1 } },
      });
    });
  });

  describe('a provider usage 5× the estimate (tool definitions the log never sees)', () => {
    it('compacts at the first append whose usage-based figure reaches the threshold (not when the estimate does); afterwards the figure is the new estimate plus the learnt overhead, below the threshold', async () => {
      const id = 'five-x';
      // OpenCode preset, 40,000-token window, 4,000 output: usable = threshold = 36,000. Without anticipating the next
      // step's growth (compaction.anticipateGrowth), so the crossing is at the threshold itself, as OpenCode compares.
      await createSession(id, 'gpt-4.1', { preset: 'opencode', limits: { context: 40_000, output: 4_000 }, compaction: { anticipateGrowth: false } });
      const THRESHOLD = 36_000;
      // What the provider counts beyond the log: tool definitions and framing, the same on every call.
      const TOOL_DEFINITIONS = 28_000;
      // The answer is a logged message the step's input already counts (contextSeq is the messages' head): no output apart.
      const OUTPUT = 0;

      /**
       * Each turn: the agent's messages (a user request, a tool call and its result, the answer), then the step with the
       * provider's usage: the estimate of the view the call was sent with (the messages' head, as contextSeq says) plus
       * the tool definitions, which the service learns as the overhead (input side: the output is no overhead). The service checks
       * the threshold after both appends, on its figure: the last usage plus the estimates of what came after it.
       */
      let markerSeq: number | null = null;
      let crossing: { figure: number; estimate: number; by: 'messages' | 'step' } | null = null;
      let previousFigure = 0;
      for (let turn = 1; turn <= 60 && markerSeq === null; turn++) {
        const messages = await append(id, turnEvents(id, turn, 12));
        const atMessages = (await context(id, messages.compaction ? messages.headSeq - 1 : messages.headSeq)).tokens;
        const estimate = atMessages.estimated - atMessages.overhead;
        if (turn > 1) {
          // Last usage + the new messages' estimates: the overhead is not counted twice.
          expect(atMessages).toMatchObject({ basis: 'usage+estimate', overhead: TOOL_DEFINITIONS });
          expect(atMessages.estimated).toBeGreaterThan(previousFigure);
        }
        if (messages.compaction) {
          expect(messages.compaction.pendingMarkerSeq).toBe(messages.headSeq);
          markerSeq = messages.headSeq;
          crossing = { figure: atMessages.estimated, estimate, by: 'messages' };
          break;
        }
        expect(atMessages.estimated).toBeLessThan(THRESHOLD);

        const usage = { input_tokens: estimate + TOOL_DEFINITIONS, output_tokens: OUTPUT };
        const stepped = await append(id, [stepFinished(usage, 'stop', messages.headSeq)]);
        const total = usageTotal(usage);
        const atStep = (await context(id, stepped.compaction ? stepped.headSeq - 1 : stepped.headSeq)).tokens;
        // The usage is the figure, ≈5× the estimate, trusted.
        expect(atStep).toMatchObject({ estimated: total, basis: 'usage+estimate', overhead: TOOL_DEFINITIONS, threshold: THRESHOLD });
        if (stepped.compaction) {
          expect(stepped.compaction.pendingMarkerSeq).toBe(stepped.headSeq);
          markerSeq = stepped.headSeq;
          crossing = { figure: total, estimate, by: 'step' };
        } else {
          expect(total).toBeLessThan(THRESHOLD);
        }
        previousFigure = total;
      }
      expect(markerSeq).not.toBeNull();
      // It crossed at the first append whose usage-based figure reached the threshold (every earlier one was below,
      // asserted above), when the estimate was about a fifth of it: not when the estimate itself reached it.
      expect(crossing!.figure).toBeGreaterThanOrEqual(THRESHOLD);
      expect(crossing!.figure).toBeLessThan(THRESHOLD + 2_000);
      expect(crossing!.figure / crossing!.estimate).toBeGreaterThan(4);
      expect(crossing!.estimate).toBeLessThan(THRESHOLD / 4);
      const events = await client.allEvents(key, id);
      expect(events.find((e) => e.seq === markerSeq)).toMatchObject({ type: 'compaction.requested', data: { auto: true, reason: 'threshold' } });
      expect(events.find((e) => e.seq === markerSeq! - 1)).toMatchObject({ type: crossing!.by === 'step' ? 'step.finished' : 'message.added' });
      const lastUsage = crossing!.figure;

      // The worker compacts; the pivot carries the overhead the step measured.
      const completed = await compacted(id, markerSeq!);
      expect(completed.data.overhead).toBe(TOOL_DEFINITIONS);

      const after = await context(id);
      expect(after.pivotSeq).toBe(completed.seq);
      // The usage measured the view before the pivot: stale. The figure is the new view's estimate plus the overhead.
      expect(after.tokens.basis).toBe('estimate');
      expect(after.tokens.overhead).toBe(TOOL_DEFINITIONS);
      expect(after.tokens.estimated).toBeGreaterThan(after.tokens.overhead);
      expect(after.tokens.estimated).toBeLessThan(THRESHOLD);
      expect(after.tokens.estimated).toBeLessThan(lastUsage);
      const st = await state(id);
      expect(st.tokens).toEqual(after.tokens);
      expect(st.compaction).toMatchObject({ state: 'idle', pendingMarkerSeq: null, suppressedReason: null });

      // The next call is sent with this context, and its step says so (contextSeq): it measures the new view, the
      // overhead holds, the figure is its usage, still below the threshold.
      const estimate = after.tokens.estimated - after.tokens.overhead;
      const usage = { input_tokens: estimate + TOOL_DEFINITIONS, output_tokens: OUTPUT };
      const stepped = await append(id, [{ type: 'step.finished', data: { usage, finishReason: 'stop', contextSeq: after.headSeq } }]);
      expect(stepped.compaction).toBeUndefined();
      expect((await context(id)).tokens).toMatchObject({ estimated: usageTotal(usage), basis: 'usage+estimate', overhead: TOOL_DEFINITIONS });
      expect(usageTotal(usage)).toBeLessThan(THRESHOLD);
    });

    it("the first usage a session gets is the step that crosses: the marker follows that step, and the pivot carries the overhead it measured", async () => {
      // A transcript taken over from another agent: turns logged without usage, then the first call with its tool definitions.
      const id = 'five-x-first-step';
      await createSession(id, 'gpt-4.1', { preset: 'opencode', limits: { context: 40_000, output: 4_000 } });
      const THRESHOLD = 36_000;
      let estimate = 0;
      for (let turn = 1; estimate < 7_300; turn++) {
        expect((await append(id, turnEvents(id, turn, 12))).compaction).toBeUndefined();
        estimate = (await context(id)).tokens.estimated;
      }
      const read = await context(id);
      const before = read.tokens;
      expect(before).toMatchObject({ basis: 'estimate', overhead: 0, threshold: THRESHOLD });
      expect(before.estimated).toBeLessThan(THRESHOLD / 4);

      // The provider counts 5× the estimate: the step's own append opens the marker, right after it.
      const usage = { input_tokens: 5 * estimate - 500, output_tokens: 500 };
      expect(usageTotal(usage)).toBeGreaterThanOrEqual(THRESHOLD);
      const stepped = await append(id, [stepFinished(usage, 'stop', read.headSeq)]);
      expect(stepped.compaction?.pendingMarkerSeq).toBe(stepped.headSeq);
      const events = await client.allEvents(key, id);
      expect(events.find((e) => e.seq === stepped.headSeq - 1)).toMatchObject({ type: 'step.finished' });
      expect(events.find((e) => e.seq === stepped.headSeq)).toMatchObject({ type: 'compaction.requested', data: { auto: true, reason: 'threshold' } });
      // The overhead is the input side beyond the view it was sent.
      const overhead = usage.input_tokens - estimate;
      expect((await context(id, stepped.headSeq - 1)).tokens).toMatchObject({ estimated: 5 * estimate, basis: 'usage+estimate', overhead });

      const completed = await compacted(id, stepped.headSeq);
      expect(completed.data.overhead).toBe(overhead);
      const after = (await context(id)).tokens;
      expect(after).toMatchObject({ basis: 'estimate', overhead });
      expect(after.estimated).toBeGreaterThan(4 * estimate);
      expect(after.estimated).toBeLessThan(THRESHOLD);
    });
  });
  describe("a provider's usage object, passed whole", () => {
    // The same call (294 fresh prompt tokens, 1,536 read from the cache, 41 out) as each SDK reports it.
    const SAME_CALL = { input_tokens: 294, output_tokens: 41, cache_read_tokens: 1536 };
    const PROVIDER_USAGE: Array<[string, Record<string, unknown>]> = [
      ['openai (CompletionUsage)', { prompt_tokens: 1830, completion_tokens: 41, total_tokens: 1871, prompt_tokens_details: { cached_tokens: 1536, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } }],
      ['openai-responses (ResponseUsage)', { input_tokens: 1830, input_tokens_details: { cached_tokens: 1536 }, output_tokens: 41, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1871 }],
      ['anthropic (Usage)', { input_tokens: 294, output_tokens: 41, cache_creation_input_tokens: null, cache_read_input_tokens: 1536, service_tier: 'standard', server_tool_use: null }],
      ['ai-sdk (LanguageModelUsage)', { inputTokens: 1830, inputTokenDetails: { noCacheTokens: 294, cacheReadTokens: 1536 }, outputTokens: 41, outputTokenDetails: { textTokens: 41 }, totalTokens: 1871 }],
    ];

    it.each(PROVIDER_USAGE)('%s is stored in the service fields and measures the context as the same call in them would', async (name, usage) => {
      // given a session with one user turn and the assistant's answer
      const id = `provider-usage-${name.split(' ')[0]}`;
      await createSession(id, 'gpt-4.1', WHOLE_OUTPUTS);
      const { headSeq } = await append(id, [userMessage('What does build.log say?'), assistantText('No errors.')]);
      // when the step is appended with the SDK's usage object as it came
      await append(id, [stepFinished(usage as any, 'stop', headSeq)]);
      // then the log holds the service's fields, the same whichever SDK wrote them
      const [step] = await eventsOfType(id, 'step.finished');
      expect(step.data).toEqual({ usage: SAME_CALL, finishReason: 'stop', contextSeq: headSeq });
      // and the context is measured by it: the prompt's 1,830 tokens and the answer's 41 (nothing came after the step)
      expect((await context(id)).tokens).toMatchObject({ basis: 'usage+estimate', estimated: 1871 });
    });

    it('a usage matching no shape is refused with the field its fields point at', async () => {
      // given a session
      await createSession('provider-usage-bad', 'gpt-4.1', WHOLE_OUTPUTS);
      // when a Chat usage lacks completion_tokens, and an AI SDK usage lacks its input figure
      const chat = await client.append(key, 'provider-usage-bad', { events: [stepFinished({ prompt_tokens: 10 } as any)] });
      const aiSdk = await client.append(key, 'provider-usage-bad', { events: [stepFinished({ inputTokenDetails: {}, outputTokens: 1 } as any)] });
      // then each is a 400 naming the field, and nothing is written
      expect([chat.status, chat.body.code, chat.body.path]).toEqual([400, 'invalid_field', '$.events[0].data.usage.completion_tokens']);
      expect([aiSdk.status, aiSdk.body.code, aiSdk.body.path]).toEqual([400, 'usage_incomplete', '$.events[0].data.usage.inputTokens']);
      expect(await eventsOfType('provider-usage-bad', 'step.finished')).toEqual([]);
    });
  });
});
