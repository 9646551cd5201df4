/**
 * Prompt-cache benchmark (docs/compaction.md, "Measured: bench/cache"): a
 * script, not a test.
 *
 * Scripted agent sessions against a running service (BENCH_URL: the API,
 * with its worker), each step: read the context (`format=anthropic`), send
 * it to a provider stub that prices the prompt cache as Anthropic does,
 * append the assistant's call with the stub's usage (`contextSeq` the read's
 * head) and the tool's result, wait for a compaction the append opened
 * (the agent's next read comes after it lands), and run the prune job
 * (`POST …/prune {wait: true}`, the job the step schedules, landing before
 * the next read). Three times per session the agent is idle for longer
 * than the cache lives, then the user writes again before the next read.
 *
 * The stub: a request is its blocks (system, then every content block of
 * every message, with its role) at ceil(chars / 4) tokens each. It reads
 * from the cache the longest block prefix it shares with a request of the
 * last BENCH_CACHE_LIFETIME_S seconds (a hit keeps that entry alive), and
 * writes the rest (a breakpoint at the last block, as the service's
 * `cache.breakpoints` places it). Prices per uncached input token: reads
 * 0.1, writes 1.25. The service's `cache.lifetimeSeconds` is the same.
 *
 * Per preset, two policies: `service` (the defaults: rewrites that pay for
 * themselves, compaction early on a cold cache) and `seed` (`cache.rewrites:
 * always`, `cache.timing: threshold`: every prune, archive and trim the
 * seed's own rule allows, so the prefix changes at every prune), and for
 * spec-000 (view-time trim) `service` with `toolOutput.trimStep` 0.25.
 * Windows of 100,000 tokens (output 16,000), and 200,000 (output 32,000)
 * for opencode, whose prune needs room before the compaction.
 *
 * Reported per session: input cost (uncached-token units), hit ratio (cache
 * reads over prompt tokens), rewrites per 100 steps (compactions, prunes,
 * archives in the log; prefix breaks: reads whose prefix was not the last
 * request's), the share of reads whose prefix was byte-stable, the hit
 * ratio of steps between rewrites (stable prefix, warm cache), the most
 * prunes and archives between two compactions, and how far GET
 * …/compactions' invalidatedTokens is from what the stub's next bill
 * shows the rewrite invalidated (the cached prefix before it less what the
 * next request read), as a share of the cached prefix.
 *
 * Targets: between rewrites ≥ 90% of prompt tokens are cache reads; at most
 * one prune or archive per compaction interval where the preset prunes or
 * archives; each rewrite's report within 10% of the stub's bill.
 *
 *   npm run build
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/sst_bench_cache PORT=3590 WORKER_PORT=3591 QUEUE_PREFIX=benchcache \
 *     PRUNE_JOB_DELAY_MS=3600000 node dist/apps/cli/src/start-all.js &
 *   BENCH_URL=http://127.0.0.1:3590 DATABASE_URL=postgres://postgres@127.0.0.1:5432/sst_bench_cache npm run bench:cache
 *
 * PRUNE_JOB_DELAY_MS keeps the worker's own prune job from racing the
 * bench's (same use case, same rule). Bounded: fixed steps; the run
 * deletes its scratch tenant.
 */
import os from 'node:os';
import { Client } from 'pg';
import {
  BASE_URL,
  benchClient,
  createScratchTenant,
  deleteScratchTenant,
  expectStatus,
  IDLE_SOCKET_TIMEOUT_MS,
  logText,
  OWNER_URL,
  printTable,
  requireLoopback,
  runBench,
  seededRandom,
} from './support';

const STEPS = Number(process.env.BENCH_CACHE_STEPS ?? 120);
const LIFETIME_S = Number(process.env.BENCH_CACHE_LIFETIME_S ?? 2);
/** Steps after which the agent is idle for longer than the cache lives. */
const IDLE_AFTER = new Set([Math.floor(STEPS / 4), Math.floor(STEPS / 2), Math.floor((3 * STEPS) / 4)]);
const MODEL = 'bench-cache-model';
const LIMITS = { context: 100_000, output: 16_000 };
const PRICES = { read: 0.1, write: 1.25 };
const TARGETS = { betweenHitRatio: 0.9, perInterval: 1, reportError: 0.1 };

requireLoopback('BENCH_URL', BASE_URL);
const client = benchClient(BASE_URL, { timeout: IDLE_SOCKET_TIMEOUT_MS });
const { call } = client;

interface Variant {
  name: string;
  preset: string;
  config: Record<string, unknown>;
  limits: { context: number; output: number };
}

const SEED_TIMING = { cache: { rewrites: 'always', timing: 'threshold' } };
/**
 * OpenCode's prune protects 40,000 tokens and clears at least 20,000, so it
 * only acts in the window before compaction on a larger window: its preset
 * runs on 200,000 tokens too (Claude's window).
 */
const SESSIONS: Array<{ preset: string; limits: Variant['limits'] }> = [
  { preset: 'opencode', limits: LIMITS },
  { preset: 'opencode', limits: { context: 200_000, output: 32_000 } },
  ...['codex', 'spec-000', 'spec-001', 'spec-003'].map((preset) => ({ preset, limits: LIMITS })),
];
const VARIANTS: Variant[] = SESSIONS.flatMap(({ preset, limits }) => [
  { name: 'seed', preset, config: SEED_TIMING, limits },
  { name: 'service', preset, config: {}, limits },
  ...(preset === 'spec-000' ? [{ name: 'service, trimStep 0.25', preset, config: { toolOutput: { trimStep: 0.25 } }, limits }] : []),
]);

// ---------------------------------------------------------------- the provider stub

interface Block {
  text: string;
  tokens: number;
}

interface Bill {
  read: number;
  write: number;
  /** The previous request is a prefix of this one. */
  stable: boolean;
  /** No cache entry was alive: the agent was idle longer than the lifetime. */
  cold: boolean;
}

/** Anthropic's prompt cache as a block-prefix cache with a lifetime (see the header). */
class CacheStub {
  private entries: Array<{ blocks: string[]; usedAt: number }> = [];
  private previous: string[] = [];

  bill(blocks: Block[], now: number): Bill {
    const texts = blocks.map((block) => block.text);
    const alive = this.entries.filter((entry) => now - entry.usedAt <= LIFETIME_S * 1000);
    let best = 0;
    let hit: (typeof alive)[number] | undefined;
    for (const entry of alive) {
      let n = 0;
      while (n < entry.blocks.length && n < texts.length && entry.blocks[n] === texts[n]) n++;
      if (n > best) [best, hit] = [n, entry];
    }
    if (hit) hit.usedAt = now;
    const read = blocks.slice(0, best).reduce((sum, block) => sum + block.tokens, 0);
    const write = blocks.slice(best).reduce((sum, block) => sum + block.tokens, 0);
    const stable = this.previous.length > 0 && this.previous.every((text, i) => texts[i] === text);
    const cold = alive.length === 0 && this.previous.length > 0;
    this.entries = [...alive.slice(-7), { blocks: texts, usedAt: now }];
    this.previous = texts;
    return { read, write, stable, cold };
  }
}

const tokensOf = (text: string) => Math.ceil(text.length / 4);

/** The Anthropic request as blocks: the system prompt, then each message's content blocks with their role. */
function blocksOf(context: { system?: unknown; messages: Array<{ role: string; content: unknown }> }): Block[] {
  const blocks: Block[] = [];
  const push = (text: string) => blocks.push({ text, tokens: tokensOf(text) });
  if (context.system) push(JSON.stringify(context.system));
  for (const message of context.messages) {
    const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content as unknown[]);
    for (const block of content) push(JSON.stringify({ role: message.role, block }));
  }
  return blocks;
}

// ---------------------------------------------------------------- the agent

/** The output of step `i`: mostly 500–2,500 tokens of log text, a quarter up to 6,000, one in twenty 10,000–15,000. */
function outputTokens(random: () => number): number {
  const r = random();
  if (r < 0.05) return 10_000 + Math.floor(random() * 5_000);
  if (r < 0.3) return 2_500 + Math.floor(random() * 3_500);
  return 500 + Math.floor(random() * 2_000);
}

const SYSTEM = `You are a coding agent working in a large TypeScript monorepo. ${'Follow the repository conventions, run the tests, keep changes small. '.repeat(80)}`;

interface StepRecord {
  bill: Bill;
  /** Rewrites the log shows between this read and the previous one. */
  seq: number;
}

interface SessionResult {
  variant: Variant;
  steps: StepRecord[];
  cost: number;
  prompt: number;
  read: number;
  compactions: number;
  prunes: number;
  archives: number;
  maxPerInterval: number;
  reportErrors: number[];
  elapsedS: number;
}

/** Every policy replays the same session: the script's random draws are the same for every variant. */
const SCRIPT_SEED = 1_001;

async function runSession(key: string, variant: Variant, index: number): Promise<SessionResult> {
  const id = `cache-${index}-${variant.preset}-${variant.limits.context}-${variant.name.replace(/[^a-z0-9]+/g, '-')}`;
  const path = `/v1/sessions/${encodeURIComponent(id)}`;
  const config = { preset: variant.preset, limits: variant.limits, ...merge(variant.config) };
  expectStatus(await call('POST', '/v1/sessions', key, { id, model: MODEL, system: SYSTEM, config }), 201, 'create session');
  const random = seededRandom(SCRIPT_SEED);
  const stub = new CacheStub();
  const steps: StepRecord[] = [];
  const started = Date.now();
  const prunes = variant.preset === 'opencode' || variant.preset === 'spec-001';
  let cost = 0;
  let prompt = 0;
  let read = 0;
  await append(key, path, [{ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: 'Find why the CI suite fails and fix it.' }] } } }]);
  for (let i = 0; i < STEPS; i++) {
    const context = expectStatus(await call('GET', `${path}/context?format=anthropic`, key), 200, 'context');
    const bill = stub.bill(blocksOf(context), Date.now());
    cost += bill.read * PRICES.read + bill.write * PRICES.write;
    prompt += bill.read + bill.write;
    read += bill.read;
    steps.push({ bill, seq: context.headSeq });
    const callId = `call_${i}`;
    const usage = { input_tokens: 0, cache_read_tokens: bill.read, cache_creation_tokens: bill.write, output_tokens: 200 };
    const events: unknown[] = [
      { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId, name: 'bash', input: { command: `npm test -- shard ${i}` } }] } } },
      { type: 'step.finished', data: { usage, finishReason: 'tool_use', contextSeq: context.headSeq } },
      { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name: 'bash', output: logText(random, outputTokens(random) * 4) }] } } },
    ];
    if (i % 6 === 5) events.push({ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: `Step ${i}: good, now check the next failing shard and keep the fix minimal.` }] } } });
    const appended = await append(key, path, events);
    if (appended.compaction) expectStatus(await call('POST', `${path}/compactions`, key, { wait: true }), 200, 'compaction');
    if (prunes) expectStatus(await call('POST', `${path}/prune`, key, { wait: true }), 200, 'prune');
    if (IDLE_AFTER.has(i)) {
      // Idle for longer than the cache lives; then the user writes again, before the agent's next read.
      await new Promise((resolve) => setTimeout(resolve, LIFETIME_S * 1000 + 500));
      const back = await append(key, path, [{ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: `Back after a break: continue with step ${i + 1}.` }] } } }]);
      if (back.compaction) expectStatus(await call('POST', `${path}/compactions`, key, { wait: true }), 200, 'compaction');
    }
  }
  const log = await allEvents(key, path);
  const kinds = log.map((event) => event.type);
  const count = (type: string) => kinds.filter((kind) => kind === type).length;
  // Prunes and archives per compaction interval (before the first, between two, after the last).
  let inInterval = 0;
  let maxPerInterval = 0;
  for (const kind of kinds) {
    if (kind === 'compaction.completed') inInterval = 0;
    else if (kind === 'tool_outputs.pruned' || kind === 'tool_results.archived') maxPerInterval = Math.max(maxPerInterval, ++inInterval);
  }
  return {
    variant,
    steps,
    cost,
    prompt,
    read,
    compactions: count('compaction.completed'),
    prunes: count('tool_outputs.pruned'),
    archives: count('tool_results.archived'),
    maxPerInterval,
    reportErrors: await reportErrors(key, path, steps),
    elapsedS: (Date.now() - started) / 1000,
  };
}

/** The variant's config patch with the bench's cache lifetime added to its `cache`. */
function merge(patch: Record<string, unknown>): Record<string, unknown> {
  const cache = { lifetimeSeconds: LIFETIME_S, ...((patch.cache as object) ?? {}) };
  return { ...patch, cache };
}

async function append(key: string, path: string, events: unknown[]): Promise<any> {
  return expectStatus(await call('POST', `${path}/events`, key, { events }), 201, 'append');
}

async function allEvents(key: string, path: string): Promise<Array<{ seq: number; type: string }>> {
  const events: Array<{ seq: number; type: string }> = [];
  for (let after = 0; ; ) {
    const page = expectStatus(await call('GET', `${path}/events?afterSeq=${after}&limit=1000`, key), 200, 'events');
    events.push(...page.events.map((event: any) => ({ seq: event.seq, type: event.type })));
    if (page.nextAfterSeq === null) return events;
    after = page.nextAfterSeq;
  }
}

/**
 * Each rewrite's invalidatedTokens (GET …/compactions) against the stub's
 * bill: the cached prefix of the step before it less what the first request
 * after it read, as a share of that prefix. Rewrites whose next request
 * found the cache cold (an idle gap) are skipped: the bill cannot tell.
 */
async function reportErrors(key: string, path: string, steps: StepRecord[]): Promise<number[]> {
  const costs: Array<{ seq: number; cachedPrefixTokens: number | null; invalidatedTokens: number | null }> = [];
  for (let after = 0; ; ) {
    const page = expectStatus(await call('GET', `${path}/compactions?afterSeq=${after}&limit=100`, key), 200, 'compactions');
    costs.push(...page.compactions.flatMap((entry: any) => (entry.cache ? [entry.cache] : [])), ...page.cache.rewrites);
    if (page.nextAfterSeq === null) break;
    after = page.nextAfterSeq;
  }
  const errors: number[] = [];
  for (const cost of costs) {
    if (cost.cachedPrefixTokens === null || cost.invalidatedTokens === null || cost.cachedPrefixTokens === 0) continue;
    const next = steps.findIndex((step) => step.seq >= cost.seq);
    if (next <= 0 || steps[next].bill.cold) continue;
    const before = steps[next - 1].bill;
    const billed = Math.max(0, before.read + before.write - steps[next].bill.read);
    errors.push(Math.abs(cost.invalidatedTokens - billed) / cost.cachedPrefixTokens);
  }
  return errors;
}

// ---------------------------------------------------------------- report

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const fixed = (x: number, digits = 1) => x.toFixed(digits);

function row(result: SessionResult): string[] {
  const { steps } = result;
  const per100 = (n: number) => fixed((100 * n) / steps.length);
  const stable = steps.filter((step) => step.bill.stable).length;
  const breaks = steps.length - 1 - stable;
  // Steps between rewrites: the prefix is the previous request's and the cache is warm.
  const between = steps.filter((step) => step.bill.stable && !step.bill.cold);
  const betweenRead = between.reduce((sum, step) => sum + step.bill.read, 0);
  const betweenPrompt = between.reduce((sum, step) => sum + step.bill.read + step.bill.write, 0);
  const worstReport = result.reportErrors.length > 0 ? Math.max(...result.reportErrors) : 0;
  return [
    `${result.variant.preset} (${result.variant.limits.context / 1000}k)`,
    result.variant.name,
    String(steps.length),
    Math.round(result.cost).toLocaleString('en-US'),
    pct(result.read / result.prompt),
    per100(result.compactions),
    per100(result.prunes + result.archives),
    per100(breaks),
    pct(stable / (steps.length - 1)),
    pct(betweenPrompt > 0 ? betweenRead / betweenPrompt : 1),
    String(result.maxPerInterval),
    `${pct(worstReport)} (${result.reportErrors.length})`,
  ];
}

function meetsTargets(result: SessionResult): string[] {
  const failures: string[] = [];
  const between = result.steps.filter((step) => step.bill.stable && !step.bill.cold);
  const ratio = between.reduce((sum, step) => sum + step.bill.read, 0) / Math.max(1, between.reduce((sum, step) => sum + step.bill.read + step.bill.write, 0));
  if (ratio < TARGETS.betweenHitRatio) failures.push(`between-rewrites hit ratio ${pct(ratio)}`);
  if (result.maxPerInterval > TARGETS.perInterval) failures.push(`${result.maxPerInterval} prunes/archives in one compaction interval`);
  if (result.reportErrors.some((error) => error > TARGETS.reportError)) failures.push(`a report ${pct(Math.max(...result.reportErrors))} off the bill`);
  return failures;
}

runBench(async () => {
  const owner = new Client({ connectionString: OWNER_URL });
  await owner.connect();
  const { tenantId, key } = await createScratchTenant(client, 'bench-cache');
  try {
    console.log(`bench/cache: ${STEPS} steps per session, cache lifetime ${LIFETIME_S} s, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), node ${process.version}`);
    const results: SessionResult[] = [];
    for (const [i, variant] of VARIANTS.entries()) {
      const result = await runSession(key, variant, i);
      results.push(result);
      console.log(`  ${variant.preset} (${variant.limits.context / 1000}k) / ${variant.name}: ${fixed(result.elapsedS)} s`);
    }
    printTable([
      ['preset', 'policy', 'steps', 'input cost', 'hit ratio', 'compactions/100', 'prunes+archives/100', 'prefix breaks/100', 'stable reads', 'hit between rewrites', 'max per interval', 'report error (n)'],
      ...results.map(row),
    ]);
    const failed = results
      .filter((result) => result.variant.name !== 'seed')
      .flatMap((result) => meetsTargets(result).map((failure) => `${result.variant.preset} (${result.variant.limits.context / 1000}k) / ${result.variant.name}: ${failure}`));
    console.log(failed.length === 0 ? 'targets met by every service policy' : `targets missed:\n  ${failed.join('\n  ')}`);
  } finally {
    await deleteScratchTenant(owner, tenantId);
    await owner.end();
  }
});
