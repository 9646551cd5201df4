import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { CompactionConfig, CompactionPlan, planCompaction, PRESETS, SummarizerKind } from '@app/domain';
import { eventLog } from '@app/domain/compaction/testing/event-log';
import { HeuristicSummarizer } from './heuristic.summarizer';
import { classifyProviderError, Summarizer, SummarizerError, SummarizerLookup, SummaryRequest } from './summarizer';
import { SummaryChain } from './summary-chain';

/** An LLM summarizer answering from a script, recording what it was asked. */
class ScriptedSummarizer implements Summarizer {
  readonly name = 'scripted';
  readonly calls: Array<{ request: SummaryRequest; model: string }> = [];
  constructor(private readonly reply: (request: SummaryRequest, call: number, signal: AbortSignal) => Promise<string>) {}
  summarize(request: SummaryRequest, { model, signal }: { model: string; signal: AbortSignal }): Promise<string> {
    this.calls.push({ request, model });
    return this.reply(request, this.calls.length, signal);
  }
}

const lookup = (llm: Summarizer | null): SummarizerLookup => ({
  heuristic: new HeuristicSummarizer(),
  get: (kind: SummarizerKind) => (kind === 'heuristic' ? new HeuristicSummarizer() : llm),
});

const config = (patch: Partial<CompactionConfig> = {}): CompactionConfig => ({
  ...PRESETS['spec-000'].compaction,
  summarizer: 'openai',
  model: 'summary-model',
  ...patch,
});

function planned(compaction: CompactionConfig): CompactionPlan {
  const log = eventLog();
  for (let turn = 1; turn <= 6; turn++) {
    log.user(`Turn ${turn}: fix src/module${turn}.ts`);
    log.tool('bash', { input: { command: `npm test ${turn}` }, output: `FAIL ${turn}\n${'x'.repeat(400)}` });
    log.assistant(`Fixed src/module${turn}.ts.`);
  }
  const markerSeq = log.marker();
  const plan = planCompaction({ events: log.events, pivot: null, markerSeq, config: compaction, usable: 16_000 });
  if (plan.kind !== 'plan') throw new Error(plan.reason);
  return plan;
}

async function run(llm: Summarizer | null, compaction = config(), options: { signal?: AbortSignal; usable?: number; timeoutMs?: number } = {}) {
  const chain = new SummaryChain(lookup(llm), { timeoutMs: options.timeoutMs ?? 60_000, retryBackoffMs: 5 });
  const plan = planned(compaction);
  return chain.run({
    plan,
    marker: { seq: plan.markerSeq, auto: true, reason: 'threshold' },
    config: compaction,
    session: { model: 'session-model', system: 'system' },
    tokensBefore: 15_000,
    usable: options.usable ?? 16_000,
    signal: options.signal,
  });
}

const fallbacks = (result: Awaited<ReturnType<typeof run>>) => result.failures.map((event) => [event.data.attempt, event.data.fallback]);

describe('SummaryChain', () => {
  it("commits the LLM's summary with the compaction model, the session's when none is set", async () => {
    const llm = new ScriptedSummarizer(async () => 'thinking…<summary>The summary.</summary>');
    const result = await run(llm);
    expect(result.failures).toEqual([]);
    expect(result.completion).toMatchObject({ model: 'summary-model', strategy: 'retain-summary', tokensBefore: 15_000 });
    // The retention check carries forward what the LLM's summary left out.
    expect(result.completion.summary.startsWith('The summary.\n\n## Carried Forward\n- Goal: Turn 1: fix src/module1.ts')).toBe(true);
    expect(llm.calls[0].request.prompt.messages.at(-1)!.content).toContain('continuation summary');

    const sessionModel = new ScriptedSummarizer(async () => '<summary>S</summary>');
    expect((await run(sessionModel, config({ model: null }))).completion.model).toBe('session-model');
  });

  it('gives the LLM the previous record in the template sections and the pins, and stores the pins at the cut on the completion', async () => {
    const compaction = config();
    const log = eventLog();
    log.user('Port the billing service; never change the public API.');
    log.append('pin.added', { pinId: 'p1', text: 'Staging is db-staging:5432.' });
    log.assistant('Porting.').user('Continue.').assistant('Ported.');
    const chain = new SummaryChain(lookup(null), { timeoutMs: 60_000, retryBackoffMs: 5 });
    const first = planCompaction({ events: log.events, pivot: null, markerSeq: log.marker(), config: compaction, usable: 16_000 });
    if (first.kind !== 'plan') throw new Error(first.reason);
    const marker = { seq: first.markerSeq, auto: true, reason: 'threshold' as const };
    const session = { model: 'session-model', system: 'system' };
    const { completion } = await chain.run({ plan: first, marker, config: { ...compaction, summarizer: 'heuristic' }, session, tokensBefore: 9_000, usable: 16_000 });
    expect(completion.pins).toEqual([{ pinId: 'p1', text: 'Staging is db-staging:5432.', seq: 2 }]);
    log.append('compaction.completed', completion);

    log.user('Now run the tests.').assistant('Running.');
    const pivot = log.events.find((event) => event.type === 'compaction.completed')!.data as typeof completion;
    const second = planCompaction({ events: log.events, pivot, markerSeq: log.marker(), config: compaction, usable: 16_000 });
    if (second.kind !== 'plan') throw new Error(second.reason);
    const llm = new ScriptedSummarizer(async () => '<summary>S</summary>');
    await new SummaryChain(lookup(llm), { timeoutMs: 60_000, retryBackoffMs: 5 }).run({
      plan: second,
      marker: { ...marker, seq: second.markerSeq },
      config: compaction,
      session,
      tokensBefore: 9_000,
      usable: 16_000,
    });
    const instruction = llm.calls[0].request.prompt.messages.at(-1)!.content;
    expect(instruction).toMatch(/<previous-summary>\n## 1\. Task Overview\n\n### Goal\n- Port the billing service/);
    expect(instruction).toContain('### Constraints\n- never change the public API.');
    expect(instruction).toContain('<pinned>\nStaging is db-staging:5432.\n</pinned>');
    expect(instruction).toContain('leave out a section with nothing to say:\n## 1. Task Overview');
  });

  it('retries errors up to maxAttempts with backoff, then falls back to the heuristic summary', async () => {
    const llm = new ScriptedSummarizer(async () => {
      throw new SummarizerError('error', 'HTTP 503: overloaded', true);
    });
    const result = await run(llm, config({ maxAttempts: 3 }));
    expect(llm.calls).toHaveLength(3);
    expect(fallbacks(result)).toEqual([
      [1, 'retry'],
      [2, 'retry'],
      [3, 'heuristic'],
    ]);
    expect(result.failures.map((event) => event.id)).toEqual(['cmp-25-failed-1', 'cmp-25-failed-2', 'cmp-25-failed-3']);
    expect(result.completion).toMatchObject({ model: 'heuristic', strategy: 'retain-summary' });
    expect(result.completion.summary).toContain('## Goal');
  });

  it('moves on at once from an error that cannot heal, or a provider this server has no settings for', async () => {
    const refused = new ScriptedSummarizer(async () => {
      throw new SummarizerError('error', 'HTTP 401: bad key', false);
    });
    expect(fallbacks(await run(refused))).toEqual([[1, 'heuristic']]);
    const unconfigured = await run(null);
    expect(unconfigured.failures[0].data.error).toBe('error: the openai summarizer is not configured on this server');
    expect(unconfigured.completion.model).toBe('heuristic');
  });

  it('aborts a call that outlives its timeout, even one that ignores its signal', async () => {
    const llm = new ScriptedSummarizer(() => new Promise<string>(() => undefined));
    const result = await run(llm, config({ maxAttempts: 1 }), { timeoutMs: 30 });
    expect(result.failures[0].data).toMatchObject({ error: 'timeout: no answer within 30 ms', fallback: 'heuristic' });
  });

  it('refuses an empty or oversized answer without retrying it', async () => {
    const empty = await run(new ScriptedSummarizer(async () => '<summary> </summary>'));
    expect(empty.failures.map((event) => event.data.error)).toEqual(['empty: the summarizer returned no summary']);
    const oversized = await run(new ScriptedSummarizer(async () => 'word '.repeat(2_000)), config({ summaryMaxTokens: 100 }));
    expect(oversized.failures[0].data.error).toMatch(/^oversized: /);
    expect(oversized.completion.model).toBe('heuristic');
  });

  it('drops the oldest head items with their pairs while its own input overflows, doubling the cut', async () => {
    const llm = new ScriptedSummarizer(async (request) => {
      if (request.head.length > 10) throw new SummarizerError('input_overflow', 'context_length_exceeded', false);
      return '<summary>fits</summary>';
    });
    const result = await run(llm);
    const heads = llm.calls.map((call) => call.request.head.length);
    expect(heads[0]).toBeGreaterThan(10);
    expect(heads.at(-1)).toBeLessThanOrEqual(10);
    expect(heads).toEqual([...heads].sort((a, b) => b - a));
    expect(result.failures.every((event) => event.data.fallback === 'trim')).toBe(true);
    // Every call's head starts with a whole exchange: no result without its call.
    for (const { request } of llm.calls) {
      const calls = new Set(request.head.flatMap((m) => m.parts.flatMap((p) => (p.type === 'tool_call' ? [p.callId] : []))));
      const results = request.head.flatMap((m) => m.parts.flatMap((p) => (p.type === 'tool_result' ? [p.callId] : [])));
      expect(results.every((id) => calls.has(id))).toBe(true);
    }
    // The pivot still covers the whole head.
    expect(result.completion).toMatchObject({ messagesCompacted: heads[0] });
    expect(result.completion.summary.startsWith('fits\n\n## Carried Forward\n')).toBe(true);
  });

  it('records the summary record and the retention figure, and carries forward the facts an LLM summary misses', async () => {
    // given an LLM that summarizes in one vague sentence
    const llm = new ScriptedSummarizer(async () => '<summary>Worked on the modules.</summary>');
    // when
    const { completion } = await run(llm);
    // then the critical facts of the head are carried forward within the budget, and the figures say so
    expect(completion.retention).toMatchObject({ summarizerRatio: 0, ratio: 1, carried: completion.retention!.critical, missing: [] });
    expect(completion.summary).toContain('- Command: `npm test 5` → reported errors: FAIL 5');
    // The last turn stays verbatim after the pivot (spec-000 keeps 1): the head, and so the record, ends at turn 5.
    expect(completion.record).toMatchObject({ v: 1, compactions: 1, goal: [{ text: 'Turn 1: fix src/module1.ts' }] });
    expect(completion.record!.commands.map((c) => c.text)).toEqual(['npm test 1', 'npm test 2', 'npm test 3', 'npm test 4', 'npm test 5']);
  });

  it('keeps 100% with the heuristic summarizer, whose record holds every fact', async () => {
    const { completion } = await run(null, config({ summarizer: 'heuristic' }));
    expect(completion.model).toBe('heuristic');
    expect(completion.retention).toMatchObject({ ratio: 1, summarizerRatio: 1, carried: 0 });
    expect(completion.summary).not.toContain('## Carried Forward');
  });

  it('falls back to keep-last-turns when no summary fits the target (seed 003)', async () => {
    const compaction = config({ ...PRESETS['spec-003'].compaction, summarizer: 'heuristic', targetRatio: 0.5 });
    const result = await run(null, compaction, { usable: 100 });
    expect(fallbacks(result)).toEqual([[1, 'keep-last-turns']]);
    expect(result.failures[0].data.error).toMatch(/^over_target: /);
    expect(result.completion).toMatchObject({ strategy: 'keep-last-turns', model: 'none', prefix: [] });
  });

  it("rethrows when the chain's own signal fires (worker shutdown), instead of falling back", async () => {
    const controller = new AbortController();
    const llm = new ScriptedSummarizer(() => {
      controller.abort(new Error('shutdown'));
      return new Promise<string>(() => undefined);
    });
    await expect(run(llm, config(), { signal: controller.signal })).rejects.toThrow();
  });
});

describe('classifyProviderError', () => {
  const signal = new AbortController().signal;
  const openai = (status: number, error: object) => OpenAI.APIError.generate(status, { error }, undefined, new Headers());
  const anthropic = (status: number, error: object) => Anthropic.APIError.generate(status, { type: 'error', error }, undefined, new Headers());

  it("recognizes the providers' context-length errors", () => {
    expect(classifyProviderError(openai(400, { code: 'context_length_exceeded', message: 'too long' }), signal).kind).toBe('input_overflow');
    expect(classifyProviderError(openai(400, { message: "This model's maximum context length is 8192 tokens" }), signal).kind).toBe('input_overflow');
    const prompt = anthropic(400, { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' });
    expect(classifyProviderError(prompt, signal).kind).toBe('input_overflow');
  });

  it('marks 5xx, 429 and connection errors retryable, other 4xx not', () => {
    expect(classifyProviderError(openai(500, { message: 'boom' }), signal)).toMatchObject({ kind: 'error', retryable: true });
    expect(classifyProviderError(anthropic(429, { type: 'rate_limit_error', message: 'slow down' }), signal)).toMatchObject({ retryable: true });
    expect(classifyProviderError(new OpenAI.APIConnectionError({ message: 'ECONNREFUSED' }), signal)).toMatchObject({ retryable: true });
    expect(classifyProviderError(openai(401, { message: 'bad key' }), signal)).toMatchObject({ kind: 'error', retryable: false });
  });

  it('reports an aborted call as aborted', () => {
    const controller = new AbortController();
    controller.abort();
    expect(classifyProviderError(new Error('aborted'), controller.signal).kind).toBe('aborted');
  });
});
