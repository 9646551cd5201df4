/**
 * Compaction quality benchmark (issue 12, "Tests and benchmark"): a script,
 * not a test. Pure and in-process: no database, no Redis, no network.
 *
 * Scripted agent sessions, each planting critical facts (file paths,
 * commands, exact error strings, user constraints, decisions, open todo
 * items, identifiers, numbers) among ordinary work, are replayed event by
 * event through the production pipeline for each preset:
 *
 *   append (tool outputs kept whole in a cache, the message carries the
 *   preset's in-context view) → prune / archive job (presets that run it) →
 *   overflow check on the view → marker → planCompaction → SummaryChain with
 *   the built-in heuristic summarizer (record carried forward, full outputs
 *   from the cache, retention check) → decideCompletion → the next view.
 *
 * After each compaction the next view (system, prefix, window) is searched
 * for every fact planted so far and still current (an item the user later
 * finished or revoked is no longer required), spacing aside; the view is
 * rendered for Anthropic, Chat Completions and Responses and checked by the
 * providers' rules. Printed per session and preset: the number of
 * compactions, the share of planted facts kept after each compaction
 * (minimum and mean), tokens after compaction as a share of the trigger
 * (maximum), the retention figure the service records, and rule violations.
 *
 * Targets: ≥ 95% kept after every compaction, tokens after ≤ 50% of the
 * trigger, no provider-rule violation.
 *
 *   npm run build && npm run bench:quality
 *   node dist/bench/quality.js --verbose     # also lists the facts missed
 *   QUALITY_DEBUG=deep-logs/opencode node dist/bench/quality.js   # prints the summaries that missed some
 */
import {
  archivedEvent,
  composeSessionView,
  decideCompletion,
  eventTokens,
  heuristicDigest,
  Message,
  NewEvent,
  Part,
  planCompaction,
  PRESET_NAMES,
  PresetName,
  prunedEvent,
  renderAnthropic,
  renderOpenAIChat,
  renderOpenAIResponses,
  SessionFacts,
  selectMaintenance,
  StoredEvent,
  validateAnthropicRequest,
  validateOpenAIChatMessages,
  validateOpenAIResponsesInput,
} from '@app/domain';
import { buildInContextView, viewConfigOfSettings } from '@app/domain/tool-output';
// The chain and the built-in summarizer only: the package index would load the Nest module and the LLM SDKs.
import { HeuristicSummarizer } from '../libs/summarizer/src/heuristic.summarizer';
import { SummaryChain } from '../libs/summarizer/src/summary-chain';
import { printTable, runBench } from './support';

const VERBOSE = process.argv.includes('--verbose');
const MODEL = 'bench-agent-model';
const SYSTEM = 'You are a careful coding agent. Use the tools to inspect before you change anything.';
const TARGET_KEPT = 0.95;
const TARGET_TOKENS = 0.5;

// ---------------------------------------------------------------- deterministic filler

function rng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NOUNS = ['ledger', 'invoice', 'widget', 'cursor', 'bucket', 'channel', 'report', 'profile', 'session', 'batch', 'record', 'cache', 'queue', 'token', 'entry'];
const VERBS = ['load', 'save', 'format', 'merge', 'split', 'check', 'build', 'parse', 'render', 'sync', 'apply', 'scan'];

class Filler {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = rng(seed);
  }
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)];
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  /** A source file of about `lines` lines. */
  code(lines: number): string {
    const out: string[] = [];
    for (let i = 0; i < lines; i++) {
      const noun = this.pick(NOUNS);
      const verb = this.pick(VERBS);
      out.push(
        i % 6 === 0
          ? `export function ${verb}${noun[0].toUpperCase()}${noun.slice(1)}${i}(input: string, limit = ${this.int(90) + 10}) {`
          : i % 6 === 5
            ? '}'
            : `  const ${noun}${i} = input.slice(0, limit).split(',').map((part) => part.trim()); // ${verb} the ${noun}`,
      );
    }
    return out.join('\n');
  }
  /** A passing test run. */
  passingTests(files: number): string {
    const lines = Array.from({ length: files }, (_, i) => `PASS src/${this.pick(NOUNS)}/${this.pick(VERBS)}-${i}.spec.ts (${this.int(900) + 20} ms)`);
    return [...lines, `Tests: ${files * 4} passed, ${files * 4} total`, 'Done in 9.84s.'].join('\n');
  }
  /** A long, uneventful log. */
  log(lines: number, tag = 'worker'): string {
    return Array.from(
      { length: lines },
      (_, i) => `2026-03-0${1 + (i % 9)}T12:${String(i % 60).padStart(2, '0')}:00Z INFO [${tag}] processed ${this.pick(NOUNS)} batch ${i} in ${this.int(300) + 5}ms`,
    ).join('\n');
  }
  /** A paragraph of the assistant thinking aloud about ordinary code. */
  sentence(): string {
    const count = 2 + this.int(4);
    return Array.from({ length: count }, () => {
      const [noun, other] = [this.pick(NOUNS), this.pick(NOUNS)];
      return this.pick([
        `Checked the ${noun} ${this.pick(VERBS)} path; it behaves as expected for empty and oversized input.`,
        `The ${noun} helper only forwards to the ${other} module, so nothing to change there.`,
        `Looking at how the ${noun} is passed to ${this.pick(VERBS)}${other[0].toUpperCase()}${other.slice(1)} before touching anything.`,
        `This part of the ${noun} code is covered by the existing tests and reads cleanly.`,
        `I will keep the ${noun} signature as it is and only adjust the call sites.`,
      ]);
    }).join(' ');
  }
}

// ---------------------------------------------------------------- scripts

interface Turn {
  messages: Message[];
  planted: string[];
  /** Facts no longer required from this turn on (a todo finished, a constraint revoked). */
  retired: string[];
}

/**
 * Builds a session's turns. `fact(x)` plants x and returns it, so it can be
 * written inline; it counts from the turn of the next message added (the
 * one that carries it).
 */
class Script {
  readonly turns: Turn[] = [];
  private current: Turn | null = null;
  private pending: string[] = [];
  private ids = 0;
  constructor(readonly filler: Filler) {}

  private turn(): Turn {
    if (!this.current) {
      this.current = { messages: [], planted: [], retired: [] };
      this.turns.push(this.current);
    }
    this.current.planted.push(...this.pending);
    this.pending = [];
    return this.current;
  }
  private id(prefix: string) {
    return `${prefix}${++this.ids}`;
  }
  fact<T extends string>(text: T): T {
    this.pending.push(text);
    return text;
  }
  retire(...texts: string[]): void {
    this.turn().retired.push(...texts);
  }
  /** A user message starts a new turn. */
  user(text: string): this {
    this.current = null;
    this.turn().messages.push({ id: this.id('u'), role: 'user', parts: [{ type: 'text', text }] });
    return this;
  }
  say(text: string): this {
    this.turn().messages.push({ id: this.id('a'), role: 'assistant', parts: [{ type: 'text', text }] });
    return this;
  }
  tool(name: string, input: unknown, output: string, options: { text?: string; isError?: boolean } = {}): this {
    const callId = this.id('call_');
    const parts: Part[] = options.text ? [{ type: 'text', text: options.text }] : [];
    parts.push({ type: 'tool_call', callId, name, input });
    const turn = this.turn();
    turn.messages.push({ id: this.id('a'), role: 'assistant', parts });
    turn.messages.push({ id: this.id('t'), role: 'tool', parts: [{ type: 'tool_result', callId, name, output, isError: options.isError }] });
    return this;
  }
  /** Ordinary work: reads, test runs, greps, a remark. */
  work(steps: number): this {
    const f = this.filler;
    for (let i = 0; i < steps; i++) {
      const kind = f.int(4);
      const path = `src/${f.pick(NOUNS)}/${f.pick(VERBS)}-${f.int(400)}.ts`;
      if (kind === 0) this.tool('read', { path }, f.code(60 + f.int(120)), { text: `Reading ${path}. ${f.sentence()}` });
      else if (kind === 1) this.tool('bash', { command: `npx jest src/${f.pick(NOUNS)}` }, f.passingTests(8 + f.int(20)), { text: f.sentence() });
      else if (kind === 2) this.tool('grep', { pattern: f.pick(VERBS), path: 'src' }, Array.from({ length: 40 }, (_, j) => `src/${f.pick(NOUNS)}/${f.pick(VERBS)}-${j}.ts:${f.int(300)}:  ${f.pick(VERBS)}(${f.pick(NOUNS)})`).join('\n'));
      else this.say(f.sentence());
    }
    return this;
  }
  /** A filler turn: the user only says go on, the agent works. */
  keepGoing(step: number, work = 6): this {
    return this.user(`Keep going with step ${step}`).work(work);
  }
}

interface SessionSpec {
  name: string;
  kind: string;
  limits: { context: number; output: number };
  build: (script: Script) => void;
}

const K128 = { context: 64_000, output: 8_000 };

const SESSIONS: SessionSpec[] = [
  {
    name: 'long-refactor',
    kind: 'long session, compacted many times (summary of summaries)',
    limits: K128,
    build: (s) => {
      s.user(`Migrate the payments service from Express to Fastify. ${s.fact('Never change the public route paths under /v1/payments.')} ${s.fact('Keep Node 20 compatibility.')}`);
      s.tool('read', { path: s.fact('services/payments/src/server.ts') }, s.filler.code(200));
      s.say(s.fact("We'll use fastify-plugin instead of decorators because the hooks must stay encapsulated."));
      s.tool('bash', { command: s.fact('pnpm --filter payments test -- --runInBand') }, `${s.filler.passingTests(30)}\n${s.fact("TypeError: reply.code is not a function")}\n    at handler (services/payments/src/routes/refund.ts:48:11)\nexit code: 1`, { isError: true });
      for (let step = 1; step <= 150; step++) {
        s.keepGoing(step, 8);
        if (step === 6) s.user(`Also rename ${s.fact('PAYMENT_TIMEOUT_MS')} to ${s.fact('PAYMENTS_HTTP_TIMEOUT_MS')} everywhere.`).work(4);
        if (step === 14) s.user(`${s.fact('The p99 latency of POST /v1/payments/refunds must stay under 250 ms.')}`).work(4);
        if (step === 22) s.tool('bash', { command: s.fact('k6 run load/refunds.js --vus 50') }, `${s.filler.log(300, 'k6')}\nhttp_req_duration p(99)=${s.fact('231.4ms')}`);
        if (step === 30) s.say(s.fact('The root cause of the flaky refund test was a shared nock scope, so each test now creates its own scope.'));
        if (step === 38) s.tool('edit', { path: s.fact('services/payments/src/plugins/idempotency.ts'), old: 'a', new: 'b' }, 'edited 1 file');
        if (step === 46) s.user(`Use the header ${s.fact('Idempotency-Key')} exactly as spelled; ${s.fact('do not accept lowercase variants in the validator.')}`).work(3);
        if (step === 55) s.tool('todowrite', { todos: [{ content: 'port the webhook routes', status: 'completed' }, { content: s.fact('port the settlement cron to fastify-cron'), status: 'pending' }, { content: s.fact('delete the express adapter in services/payments/src/legacy'), status: 'pending' }] }, 'ok');
        if (step === 63) s.tool('bash', { command: 'pnpm --filter payments build' }, `src/legacy/adapter.ts(12,5): ${s.fact('error TS2307: Cannot find module \'express-serve-static-core\'')}`, { isError: true });
      }
    },
  },
  {
    name: 'deep-logs',
    kind: 'facts deep inside large tool outputs',
    limits: K128,
    build: (s) => {
      s.user(`The nightly ETL job fails; find out why. ${s.fact('Do not rerun the job against the production warehouse.')}`);
      s.work(4);
      // An error in the last lines of a 60 KB log.
      s.tool('bash', { command: s.fact('kubectl logs job/etl-nightly-28411 -n data') }, `${s.filler.log(600, 'loader')}\n${s.fact('ERROR [loader] duplicate key value violates unique constraint "fact_orders_pkey"')}\nProcess exited with code 3`);
      s.keepGoing(1, 6);
      // An exception in the middle of a 250 KB output.
      s.tool('bash', { command: 'cat /var/log/etl/batcher.log' }, `${s.filler.log(1_200, 'batcher')}\nException in thread "main" ${s.fact('java.lang.OutOfMemoryError: Java heap space')}\n\tat com.acme.etl.Batcher.flush(${s.fact('Batcher.java:217')})\n\tat com.acme.etl.Main.run(Main.java:88)\n${s.filler.log(1_200, 'batcher')}`);
      s.keepGoing(2, 6);
      s.tool('bash', { command: s.fact('pytest tests/test_dedupe.py -q') }, `${s.filler.log(200, 'pytest')}\n${s.fact('FAILED tests/test_dedupe.py::test_merge_window - AssertionError: expected 3 rows, got 5')}\n1 failed, 212 passed in 41.02s`, { isError: true });
      s.say(s.fact('The duplicate rows come from the merge window overlapping by one day, because the watermark is read before the lock is taken.'));
      for (let step = 3; step <= 70; step++) {
        s.keepGoing(step, 7);
        if (step === 8) s.tool('bash', { command: 'psql -c "select count(*) from fact_orders"' }, `${s.filler.log(900, 'psql')}\n${s.fact('psql: error: connection to server at "10.4.7.21", port 5433 failed: FATAL:  too many connections for role "etl_loader"')}`, { isError: true });
        if (step === 14) s.tool('bash', { command: 'tail -n 5000 /var/log/etl/scheduler.log' }, `${s.filler.log(2_500, 'scheduler')}\n${s.fact('WARN lock etl_nightly held by pid 48213 for 3h12m')}\n${s.filler.log(2_400, 'scheduler')}`);
      }
    },
  },
  {
    name: 'constraints-todos',
    kind: 'user constraints and an evolving todo list',
    limits: K128,
    build: (s) => {
      s.user(`Add per-tenant rate limits to the API gateway. ${s.fact('All new endpoints need rate limiting at 100 req/s per tenant.')} ${s.fact('Prefer pnpm over npm.')}`);
      s.tool('todowrite', { todos: [{ content: s.fact('design the limiter interface'), status: 'in_progress' }, { content: s.fact('add redis token bucket'), status: 'pending' }, { content: s.fact('expose RateLimit headers'), status: 'pending' }] }, 'ok');
      s.work(5);
      s.user(`${s.fact('Never commit directly to main; open a PR.')} ${s.fact('Use tabs, not spaces, in Makefiles.')}`).work(4);
      for (let step = 1; step <= 80; step++) {
        s.keepGoing(step, 7);
        if (step === 5) {
          s.tool('todowrite', { todos: [{ content: 'design the limiter interface', status: 'completed' }, { content: 'add redis token bucket', status: 'in_progress' }, { content: 'expose RateLimit headers', status: 'pending' }, { content: s.fact('document the 429 problem body'), status: 'pending' }] }, 'ok');
          s.retire('design the limiter interface');
        }
        if (step === 12) s.user(`${s.fact('The burst size must be 40 requests, not 50.')}`).work(3);
        if (step === 18) {
          s.tool('todowrite', { todos: [{ content: 'add redis token bucket', status: 'completed' }, { content: 'expose RateLimit headers', status: 'in_progress' }, { content: 'document the 429 problem body', status: 'pending' }, { content: s.fact('load-test with 2,000 tenants'), status: 'pending' }] }, 'ok');
          s.retire('add redis token bucket');
        }
        if (step === 24) {
          s.user(`${s.fact('You can now commit docs-only changes directly to main.')}`).work(2);
        }
        if (step === 30) s.user(`Only touch files under ${s.fact('apps/gateway/src/limits/')}; ${s.fact('avoid new dependencies.')}`).work(3);
        if (step === 34) {
          s.tool('todowrite', { todos: [{ content: 'expose RateLimit headers', status: 'completed' }, { content: 'document the 429 problem body', status: 'in_progress' }, { content: 'load-test with 2,000 tenants', status: 'pending' }] }, 'ok');
          s.retire('expose RateLimit headers');
        }
      }
    },
  },
  {
    name: 'chinese',
    kind: 'non-English (Chinese)',
    limits: K128,
    build: (s) => {
      s.user(`把订单服务从 MySQL 迁移到 PostgreSQL。${s.fact('请不要修改对外的 REST 接口。')}${s.fact('迁移期间必须保持只读副本可用。')}`);
      s.tool('read', { path: s.fact('services/orders/db/schema.sql') }, s.filler.code(150));
      s.say(s.fact('我们决定使用 pgloader 而不是手写脚本，因为它能处理类型转换。'));
      for (let step = 1; step <= 75; step++) {
        s.user(`继续第${step}步`).work(7);
        if (step === 4) s.tool('bash', { command: s.fact('pgloader mysql://orders@10.0.3.5/orders pgsql://orders@10.0.3.9/orders') }, `${s.filler.log(400, 'pgloader')}\n${s.fact('ERROR Database error 42804: column "created_at" is of type timestamp with time zone but expression is of type bigint')}`, { isError: true });
        if (step === 9) s.user(`${s.fact('连接池大小设为 32，超时时间 15 秒。')}`).work(3);
        if (step === 15) s.say(s.fact('问题的根本原因是 created_at 存的是毫秒时间戳，所以需要先用 to_timestamp 转换。'));
        if (step === 21) s.tool('edit', { path: s.fact('services/orders/migrations/0007_created_at.sql') }, '已修改 1 个文件');
        if (step === 26) s.user(`${s.fact('别忘了更新 docs/迁移指南.md 里的回滚步骤。')}`).work(3);
      }
    },
  },
  {
    name: 'russian',
    kind: 'non-English (Russian)',
    limits: K128,
    build: (s) => {
      s.user(`Нужно перевести сборку фронтенда с webpack на Vite. ${s.fact('Никогда не меняй публичные URL ассетов.')} ${s.fact('Поддержка Safari 15 обязательна.')}`);
      s.tool('read', { path: s.fact('web/webpack.config.js') }, s.filler.code(160));
      s.say(s.fact('Решил использовать vite-plugin-legacy, потому что нужен Safari 15.'));
      for (let step = 1; step <= 75; step++) {
        s.user(`продолжай`).work(7);
        if (step === 5) s.tool('bash', { command: s.fact('pnpm vite build --mode staging') }, `${s.filler.log(300, 'vite')}\n${s.fact('[vite]: Rollup failed to resolve import "@/legacy/polyfills" from "src/main.ts".')}`, { isError: true });
        if (step === 11) s.user(`${s.fact('Размер основного бандла должен быть меньше 350 КБ.')}`).work(3);
        if (step === 17) s.say(s.fact('Причина в том, что алиас @ не объявлен в vite.config.ts, поэтому я добавил resolve.alias.'));
        if (step === 23) s.tool('edit', { path: s.fact('web/vite.config.ts') }, 'изменён 1 файл');
        if (step === 27) s.user(`${s.fact('Не удаляй старый конфиг до релиза 4.2.0.')}`).work(3);
      }
    },
  },
  {
    name: 'arabic',
    kind: 'non-English (Arabic)',
    limits: K128,
    build: (s) => {
      s.user(`نريد إضافة دعم اللغة العربية إلى تطبيق الحجوزات. ${s.fact('لا تغير مفاتيح الترجمة الموجودة.')} ${s.fact('يجب أن يعمل الاتجاه من اليمين إلى اليسار في كل الشاشات.')}`);
      s.tool('read', { path: s.fact('app/src/i18n/index.ts') }, s.filler.code(140));
      s.say(s.fact('قررنا استخدام ICU MessageFormat بدلاً من i18next لأن صيغ الجمع العربية معقدة.'));
      for (let step = 1; step <= 75; step++) {
        s.user('تابع').work(7);
        if (step === 6) s.tool('bash', { command: s.fact('npm run test:i18n -- --locale ar') }, `${s.filler.passingTests(20)}\n${s.fact('Error: Missing plural category "few" for key booking.nights in locale ar')}`, { isError: true });
        if (step === 12) s.user(`${s.fact('استخدم الخط Noto Naskh Arabic بحجم 16 بكسل.')}`).work(3);
        if (step === 18) s.tool('edit', { path: s.fact('app/src/i18n/locales/ar.json') }, 'تم تعديل ملف واحد');
        if (step === 25) s.user(`${s.fact('لا تدمج الفرع قبل مراجعة فريق التصميم.')}`).work(3);
      }
    },
  },
  {
    name: 'code-heavy',
    kind: 'code-heavy (code blocks, diffs, stack traces)',
    limits: K128,
    build: (s) => {
      s.user(
        `Implement quota resolution. Start from this:\n\`\`\`ts\n${s.fact('export const DEFAULT_BURST = 40;')}\n${s.fact('export function resolveTenantQuota(tenantId: string, plan: Plan): Quota {')}\n  return PLAN_QUOTAS[plan] ?? PLAN_QUOTAS.free;\n}\n\`\`\``,
      );
      s.tool('read', { path: s.fact('libs/domain/src/quotas/resolve.ts') }, s.filler.code(180));
      for (let step = 1; step <= 75; step++) {
        s.keepGoing(step, 7);
        if (step === 4) s.tool('apply_patch', { input: `*** Begin Patch\n*** Update File: ${s.fact('libs/domain/src/quotas/plans.ts')}\n@@\n-export const PLAN_QUOTAS = {}\n+export const PLAN_QUOTAS: Record<Plan, Quota> = { free: { rps: 5 } }\n*** End Patch` }, 'Done!');
        if (step === 8)
          s.tool('bash', { command: s.fact('npx jest libs/domain/src/quotas') }, `${s.filler.passingTests(12)}\n● resolveTenantQuota › falls back to free\n\n    ${s.fact("TypeError: Cannot read properties of undefined (reading 'rps')")}\n\n      at resolveTenantQuota (${s.fact('libs/domain/src/quotas/resolve.ts:27:31')})\n      at Object.<anonymous> (libs/domain/src/quotas/resolve.spec.ts:14:12)`, { isError: true });
        if (step === 12)
          s.say(`The fallback read \`PLAN_QUOTAS[plan].rps\` before the null check; ${s.fact('the fix is to resolve the plan first and default to `free` because unknown plans come from old tenants')}.\n\`\`\`ts\n${s.fact('const quota = PLAN_QUOTAS[plan] ?? PLAN_QUOTAS.free;')}\n\`\`\``);
        if (step === 18) s.tool('bash', { command: 'git diff --stat' }, `diff --git a/${s.fact('libs/domain/src/quotas/cache.ts')} b/libs/domain/src/quotas/cache.ts\n+++ b/libs/domain/src/quotas/cache.ts\n@@ -1,3 +1,9 @@`);
        if (step === 24) s.user(`Rename \`${s.fact('QuotaCache.invalidateAll')}\` to \`${s.fact('QuotaCache.clear')}\` and keep the old name as a deprecated alias.`).work(3);
      }
    },
  },
  {
    name: 'ops-incident',
    kind: 'ops incident: URLs, hosts, ids, numbers with units; plan tool',
    limits: K128,
    build: (s) => {
      s.user(`Incident ${s.fact('OPS-4821')}: checkout latency spiked after deploy ${s.fact('9f3c2a1b')}. Dashboard: ${s.fact('https://grafana.acme.internal/d/checkout/latency?orgId=1')}. ${s.fact('Do not restart the primary database.')}`);
      s.tool('update_plan', { plan: [{ step: s.fact('confirm the regression window'), status: 'in_progress' }, { step: s.fact('roll back to 8e1d77c0 if p99 > 2 s'), status: 'pending' }, { step: s.fact('write the postmortem in docs/incidents/OPS-4821.md'), status: 'pending' }] }, 'Plan updated');
      for (let step = 1; step <= 75; step++) {
        s.keepGoing(step, 7);
        if (step === 3) s.tool('bash', { command: s.fact('curl -s http://checkout.internal:8443/healthz') }, `{"status":"degraded","db_pool_in_use":${s.fact('198/200')}}`);
        if (step === 7) s.say(s.fact('The pool saturation is caused by the new retry middleware, which retries 3 times with no jitter.'));
        if (step === 11) {
          s.tool('update_plan', { plan: [{ step: 'confirm the regression window', status: 'completed' }, { step: 'roll back to 8e1d77c0 if p99 > 2 s', status: 'in_progress' }, { step: 'write the postmortem in docs/incidents/OPS-4821.md', status: 'pending' }] }, 'Plan updated');
          s.retire('confirm the regression window');
        }
        if (step === 15) s.user(`${s.fact('Keep the error budget burn under 2.5% for the day.')}`).work(3);
        if (step === 20) s.tool('bash', { command: s.fact('kubectl rollout undo deploy/checkout -n prod --to-revision=41') }, `${s.filler.log(120, 'kubectl')}\ndeployment.apps/checkout rolled back`);
      }
    },
  },
  {
    name: 'mixed-long',
    kind: 'long session mixing languages and tools, summary of summaries',
    limits: { context: 32_000, output: 4_000 },
    build: (s) => {
      s.user(`Upgrade the search service to OpenSearch 2.13. ${s.fact('Index names must keep the search-v3- prefix.')}`);
      s.tool('read', { path: s.fact('infra/opensearch/values.yaml') }, s.filler.code(120));
      for (let step = 1; step <= 110; step++) {
        s.keepGoing(step, 7);
        if (step === 3) s.user(`${s.fact('Не трогай кластер логов, только поисковый.')}`).work(2);
        if (step === 9) s.tool('bash', { command: s.fact('helm upgrade search infra/opensearch -f infra/opensearch/values.yaml') }, `${s.filler.log(250, 'helm')}\n${s.fact('Error: UPGRADE FAILED: cannot patch "search-master" with kind StatefulSet')}`, { isError: true });
        if (step === 16) s.say(s.fact('StatefulSet fields are immutable, so we recreate the master set with --cascade=orphan instead of patching it.'));
        if (step === 24) s.user(`${s.fact('副本数保持 3 个，堆内存 8 GB。')}`).work(2);
        if (step === 33) s.tool('bash', { command: s.fact('curl -s localhost:9200/_cat/indices/search-v3-*') }, `green open ${s.fact('search-v3-products-2026.03')} 5 1 ${s.fact('1832211')} 0 2.1gb`);
        if (step === 41) s.user(`${s.fact('لا تحذف الفهارس القديمة قبل يوم الجمعة.')}`).work(2);
      }
    },
  },
  {
    name: 'many-facts-32k',
    kind: '48 facts of every kind in a 32k window (the summary budget under pressure)',
    limits: { context: 32_000, output: 4_000 },
    build: (s) => {
      s.user(`Harden the upload service. ${s.fact('Never log file contents.')} ${s.fact('Keep uploads under 25 MB.')}`);
      const services = ['avatars', 'invoices', 'exports', 'imports', 'thumbnails', 'archives', 'reports', 'backups'];
      services.forEach((service, i) => {
        s.keepGoing(i * 3 + 1, 6);
        s.tool('read', { path: s.fact(`services/upload/src/${service}/handler.ts`) }, s.filler.code(90));
        s.tool('bash', { command: s.fact(`pnpm --filter upload test -- ${service}.spec.ts`) }, `${s.filler.passingTests(10)}
${s.fact(`Error: ${service} upload rejected: checksum ${(0xabc123 + i).toString(16)} mismatch`)}`, { isError: true });
        s.keepGoing(i * 3 + 2, 6);
        s.say(s.fact(`For ${service} we switch to streaming multipart parsing because buffering ${service} files exhausted memory.`));
        s.user(`${s.fact(`Set ${service.toUpperCase()}_MAX_PARTS=${10 + i}`)} and ${s.fact(`do not retry ${service} uploads more than ${2 + (i % 3)} times.`)}`).work(4);
        s.keepGoing(i * 3 + 3, 6);
      });
    },
  },
];

// ---------------------------------------------------------------- the pipeline

interface CompactionSample {
  recordBytes: number;
  summaryTokens: number;
  evicted: number;
  kept: number;
  planted: number;
  tokenShare: number;
  retention: number | null;
  violations: number;
  missing: string[];
}

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();

function viewText(system: string, messages: readonly Message[]): string {
  const parts = messages.flatMap((message) =>
    message.parts.map((part) => {
      switch (part.type) {
        case 'text':
        case 'reasoning':
          return part.text;
        case 'tool_call':
          return `${part.name} ${JSON.stringify(part.input)}`;
        case 'tool_result':
          return part.output;
        default:
          return '';
      }
    }),
  );
  return normalize([system, ...parts].join('\n'));
}

async function replay(spec: SessionSpec, preset: PresetName, turns: readonly Turn[]): Promise<CompactionSample[]> {
  const facts: SessionFacts = { model: MODEL, system: SYSTEM, systemTokens: Math.ceil(SYSTEM.length / 4), config: { preset, limits: spec.limits }, tenantConfig: null };
  const events: StoredEvent[] = [];
  const outputs = new Map<string, string>();
  const state: { pivot: StoredEvent<'compaction.completed'> | null } = { pivot: null };
  const chain = new SummaryChain({ heuristic: new HeuristicSummarizer(), get: () => null }, { timeoutMs: 60_000, retryBackoffMs: 0 });
  const samples: CompactionSample[] = [];
  const live = new Set<string>();
  let refs = 0;

  const append = (event: NewEvent) => {
    const seq = events.length + 1;
    events.push({ ...event, seq, createdAt: new Date(Date.UTC(2026, 2, 1, 0, 0, 0, seq)), tokens: eventTokens(event, MODEL) } as StoredEvent);
    if (event.type === 'compaction.completed') state.pivot = events[events.length - 1] as StoredEvent<'compaction.completed'>;
  };
  const windowEvents = () => events.filter((event) => event.seq > (state.pivot?.data.coveredThroughSeq ?? 0));
  const compose = () => composeSessionView(facts, { pivot: state.pivot, events: windowEvents() });

  for (const turn of turns) {
    const { config } = compose();
    const viewConfig = viewConfigOfSettings(config.toolOutput);
    for (const message of turn.messages) {
      // The API keeps every output whole in the cache and gives the message its in-context view.
      const parts = message.parts.map((part): Part => {
        if (part.type !== 'tool_result') return part;
        const refId = `ref-${++refs}`;
        outputs.set(part.callId, part.output);
        const view = buildInContextView(part.output, refId, viewConfig);
        const lines = part.output.split('\n').length;
        return { ...part, output: view.view, truncated: view.truncated, outputRef: { id: refId, byte_size: Buffer.byteLength(part.output), line_count: lines } };
      });
      append({ id: message.id, type: 'message.added', data: { message: { ...message, parts } } });
    }
    for (const fact of turn.planted) live.add(fact);
    for (const fact of turn.retired) live.delete(fact);

    // The prune / archive job, as the worker runs it after appends.
    const maintenance = selectMaintenance(windowEvents(), config);
    if (maintenance.archive) {
      const digest = heuristicDigest(maintenance.archive.pairs, config.archive);
      append(archivedEvent(events.length + 1, maintenance.archive.callIds, digest, { strategy: config.archive.strategy, digestBy: 'heuristic' }));
    }
    const prune = maintenance.archive ? selectMaintenance(windowEvents(), config).prune : maintenance.prune;
    if (prune) append(prunedEvent(events.length + 1, prune));

    const before = compose();
    if (!before.overflow.overflow) continue;
    append({ id: `marker-${events.length + 1}`, type: 'compaction.requested', data: { auto: true, reason: 'threshold' } });
    const markerSeq = events.length;
    const compaction = before.config.compaction;
    const plan = planCompaction({ events: windowEvents(), pivot: state.pivot?.data ?? null, markerSeq, config: compaction, usable: before.overflow.usable });
    if (plan.kind === 'nothing') throw new Error(`${spec.name}/${preset}: nothing to compact (${plan.reason})`);
    const { completion, failures } = await chain.run({
      plan,
      marker: { seq: markerSeq, auto: true, reason: 'threshold' },
      config: compaction,
      session: { model: MODEL, system: SYSTEM },
      tokensBefore: before.view.tokens.estimated,
      usable: before.overflow.usable,
      outputs,
    });
    for (const failure of failures) append(failure);
    for (const event of decideCompletion({ latestCompletedMarkerSeq: state.pivot?.data.markerSeq ?? null }, completion, compaction)) append(event);

    const after = compose();
    const text = viewText(SYSTEM, after.view.messages);
    const missing = [...live].filter((fact) => !text.includes(normalize(fact)));
    if (process.env.QUALITY_DEBUG && missing.length > 0 && `${spec.name}/${preset}` === process.env.QUALITY_DEBUG) {
      console.log(`--- ${spec.name}/${preset} compaction ${samples.length + 1}: missing ${JSON.stringify(missing)}`);
      console.log(completion.summary);
      console.log(JSON.stringify(completion.retention));
    }
    const anthropic = renderAnthropic(after.view);
    const violations =
      validateAnthropicRequest(anthropic).length +
      validateOpenAIChatMessages(renderOpenAIChat(after.view)).length +
      validateOpenAIResponsesInput(renderOpenAIResponses(after.view)).length;
    samples.push({
      recordBytes: Buffer.byteLength(JSON.stringify(completion.record ?? null)),
      summaryTokens: Math.ceil(completion.summary.length / 4),
      evicted: completion.record?.evicted ?? 0,
      kept: live.size - missing.length,
      planted: live.size,
      tokenShare: after.view.tokens.estimated / before.overflow.threshold!,
      retention: completion.retention?.ratio ?? null,
      violations,
      missing,
    });
  }
  return samples;
}

// ---------------------------------------------------------------- report

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

async function main(): Promise<void> {
  const started = performance.now();
  console.log(`bench/quality: ${SESSIONS.length} sessions × ${PRESET_NAMES.length} presets, heuristic summarizer, node ${process.version}`);
  const rows: string[][] = [
    ['session', 'preset', 'compactions', 'facts', 'kept after each (min)', 'kept (mean)', 'tokens after / trigger (max)', 'summary tokens (max)', 'evicted', 'retention recorded (min)', 'rule violations'],
  ];
  let worstKept = 1;
  let worstTokens = 0;
  let totalViolations = 0;
  let noCompaction = 0;
  let compactions = 0;
  let recordBytes = 0;
  const verbose: string[] = [];
  for (const spec of SESSIONS) {
    const script = new Script(new Filler(spec.name.length * 7919));
    spec.build(script);
    for (const preset of PRESET_NAMES) {
      const samples = await replay(spec, preset, script.turns);
      if (samples.length === 0) {
        noCompaction++;
        rows.push([spec.name, preset, '0', '-', '-', '-', '-', '-', '-', '-', '0']);
        continue;
      }
      compactions += samples.length;
      recordBytes = Math.max(recordBytes, ...samples.map((s) => s.recordBytes));
      const shares = samples.map((s) => (s.planted === 0 ? 1 : s.kept / s.planted));
      const minKept = Math.min(...shares);
      const maxTokens = Math.max(...samples.map((s) => s.tokenShare));
      const retention = samples.map((s) => s.retention).filter((r): r is number => r !== null);
      const violations = samples.reduce((sum, s) => sum + s.violations, 0);
      worstKept = Math.min(worstKept, minKept);
      worstTokens = Math.max(worstTokens, maxTokens);
      totalViolations += violations;
      rows.push([
        spec.name,
        preset,
        String(samples.length),
        String(samples[samples.length - 1].planted),
        pct(minKept),
        pct(shares.reduce((a, b) => a + b, 0) / shares.length),
        pct(maxTokens),
        String(Math.max(...samples.map((s) => s.summaryTokens))),
        String(samples[samples.length - 1].evicted),
        retention.length > 0 ? pct(Math.min(...retention)) : '-',
        String(violations),
      ]);
      if (VERBOSE) {
        samples.forEach((s, i) => {
          if (s.missing.length > 0) verbose.push(`${spec.name}/${preset} #${i + 1} (${s.kept}/${s.planted}): ${s.missing.map((m) => JSON.stringify(m)).join(', ')}`);
        });
      }
    }
  }
  console.log('');
  printTable(rows);
  if (verbose.length > 0) console.log(`\nmissed facts:\n${verbose.join('\n')}`);
  console.log('');
  console.log(`sessions: ${SESSIONS.map((s) => `${s.name} (${s.kind})`).join('; ')}`);
  console.log(`worst kept after a compaction: ${pct(worstKept)} (target ≥ ${pct(TARGET_KEPT)}): ${worstKept >= TARGET_KEPT ? 'met' : 'MISSED'}`);
  console.log(`worst tokens after compaction: ${pct(worstTokens)} of the trigger (target ≤ ${pct(TARGET_TOKENS)}): ${worstTokens <= TARGET_TOKENS ? 'met' : 'MISSED'}`);
  console.log(`provider-rule violations: ${totalViolations}; session/preset pairs without a compaction: ${noCompaction}`);
  console.log(`${compactions} compactions; largest summary record stored: ${(recordBytes / 1024).toFixed(1)} KB of JSON`);
  console.log(`ran in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

runBench(main);
