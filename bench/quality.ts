/**
 * Compaction quality benchmark: a script,
 * not a test. Pure and in-process: no database, no Redis, no network.
 *
 * Scripted agent sessions, each planting critical facts (file paths,
 * commands, exact error strings, user constraints, decisions, open todo
 * items, identifiers, numbers) among ordinary work, are replayed message by
 * message through the production pipeline for each preset:
 *
 *   a model step reads the context (the view composed right before each
 *   assistant message) → append (tool outputs kept whole in a cache, the
 *   message carries the preset's in-context view; with `overhead`, a
 *   step.finished whose usage is the view it read plus tokens the store never
 *   sees, e.g. tool definitions) → the append path's trigger after every
 *   batch (its bound of the view, the loop guard, one pending marker) →
 *   marker → planCompaction on the events up to the marker → SummaryChain
 *   with the built-in heuristic summarizer (record carried forward, full
 *   outputs from the cache, retention check) → decideCompletion, at once or,
 *   with `inFlightTurns`, that many turns later while the session goes on →
 *   the next view. The prune / archive job runs after each turn.
 *
 * After each compaction the next view (system, prefix, window) is searched
 * for every fact planted so far and still current (an item the user later
 * finished or revoked is no longer required), spacing aside; the view is
 * rendered for Anthropic, Chat Completions and Responses and checked by the
 * providers' rules. At the end of the session the last view is searched too.
 *
 * Sessions are grouped by kind: the first ten (long, logs, constraints,
 * Chinese / Russian / Arabic, code, ops, dense facts); "many pivots" (16–24k
 * windows, 20+ compactions, facts said once at the start); "big outputs"
 * (each fact once inside a 50–200 KB jest / go test / pytest run, git log,
 * config or env dump, pod log: Filler's noise generators); "non-English"
 * (German, Japanese, Spanish: non-ASCII identifiers and paths, constraints
 * and decisions); "tool definitions" (the provider counts 15,000 tokens more
 * than the view); "compaction in flight" (committed 3 turns after its
 * marker while big outputs arrive).
 *
 * Printed per session and preset, then per kind and preset (the worst
 * session of the kind): compactions, the share of planted facts kept after
 * each compaction (minimum, mean) and at the end, tokens after compaction as
 * a share of the trigger (maximum), the largest view a model step read
 * (what GET …/context hands it, fitted to the usable window when over it:
 * its messages' estimates plus the overhead the provider counts) over the
 * usable window, the retention figure the service records, markers with nothing to
 * compact, and rule violations.
 *
 * Targets: ≥ 95% kept after every compaction, the largest view read before a
 * model step ≤ the usable window, no provider-rule violation, tokens after
 * ≤ 50% of the trigger; the many-pivots sessions must reach 20 compactions.
 *
 *   npm run build && npm run bench:quality
 *   node dist/bench/quality.js --verbose     # also lists the facts missed
 *   QUALITY_DEBUG=deep-logs/opencode node dist/bench/quality.js   # prints the summaries that missed some
 */
import {
  archivedEvent,
  CompactionCompletion,
  compactionFactsOf,
  composeSessionView,
  decideCompletion,
  decideTrigger,
  deriveCompactionState,
  eventTokens,
  growsViewOnly,
  growthThreshold,
  growthThresholdAfterCheck,
  heuristicDigest,
  markerEvent,
  mayOverflow,
  Message,
  NewEvent,
  nothingToCompactEvent,
  Part,
  planCompaction,
  ModelView,
  PRESET_NAMES,
  PresetName,
  prunedEvent,
  readableView,
  renderAnthropic,
  renderOpenAIChat,
  renderOpenAIResponses,
  SessionFacts,
  selectMaintenance,
  SessionView,
  StoredEvent,
  validateAnthropicRequest,
  validateOpenAIChatMessages,
  validateOpenAIResponsesInput,
  viewTokenBound,
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
const TARGET_READ = 1;

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
const TEST_VERBS = ['handles', 'accepts', 'returns', 'keeps', 'drops', 'merges', 'formats', 'loads', 'saves', 'skips'];
const ADJECTIVES = ['empty', 'duplicate', 'negative', 'rounded', 'unicode', 'stale', 'missing', 'partial', 'large', 'nested'];

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
  hex(length: number): string {
    return Array.from({ length }, () => '0123456789abcdef'[this.int(16)]).join('');
  }
  private title(): string {
    const noun = this.pick(NOUNS);
    return `${noun[0].toUpperCase()}${noun.slice(1)}${this.pick(['Service', 'Store', 'Mapper', 'Client', 'Policy'])}`;
  }
  private testName(): string {
    return `${this.pick(TEST_VERBS)} ${this.pick(ADJECTIVES)} ${this.pick(NOUNS)}s`;
  }
  /** `jest --ci --verbose` over `suites` suites; a failing test, if given, in the middle suite and in the failure details. */
  jestRun(suites: number, failure?: { file: string; describe: string; test: string; ms: number; error: string[] }): string {
    const lines = ['$ jest --ci --verbose', ''];
    const failAt = failure ? Math.floor(suites / 2) : -1;
    const passing = (count: number) => Array.from({ length: count }, () => `    ✓ ${this.testName()} (${this.int(40) + 1} ms)`);
    let tests = 0;
    for (let i = 0; i < suites; i++) {
      if (i === failAt && failure) {
        lines.push(`FAIL ${failure.file} (${(this.int(4000) + 300) / 1000} s)`, `  ${failure.describe}`, ...passing(3), `    ✕ ${failure.test} (${failure.ms} ms)`, ...passing(2), '');
        tests += 5;
        continue;
      }
      const count = 5 + this.int(6);
      tests += count;
      lines.push(`PASS src/${this.pick(NOUNS)}/${this.pick(VERBS)}-${i}.spec.ts (${(this.int(4000) + 300) / 1000} s)`, `  ${this.title()}`, ...passing(count), '');
    }
    if (failure) lines.push(`  ● ${failure.describe} › ${failure.test}`, '', ...failure.error.map((line) => `    ${line}`), '');
    const failed = failure ? 1 : 0;
    lines.push(
      `Test Suites: ${failed ? '1 failed, ' : ''}${suites - failed} passed, ${suites} total`,
      `Tests:       ${failed ? '1 failed, ' : ''}${tests} passed, ${tests + failed} total`,
      'Snapshots:   0 total',
      `Time:        ${(this.int(90_000) + 20_000) / 1000} s`,
      'Ran all test suites.',
    );
    return lines.join('\n');
  }
  /** `pytest -v` over `tests` tests; a failure, if given, about two thirds in, with its traceback and the short summary. */
  pytestRun(tests: number, failure?: { id: string; error: string[] }): string {
    const lines = ['============================= test session starts ==============================', 'platform linux -- Python 3.11.8, pytest-8.1.1, pluggy-1.4.0', `collected ${tests} items`, ''];
    const failAt = failure ? Math.floor((tests * 2) / 3) : -1;
    for (let i = 0; i < tests; i++) {
      const percent = `[${String(Math.floor(((i + 1) * 100) / tests)).padStart(3)}%]`;
      if (i === failAt && failure) lines.push(`${failure.id} FAILED ${percent}`);
      else lines.push(`tests/test_${this.pick(NOUNS)}.py::test_${this.pick(VERBS)}_${this.pick(ADJECTIVES)}_${this.pick(NOUNS)}_${i} PASSED ${percent}`);
    }
    if (failure) {
      const name = failure.id.split('::').pop();
      lines.push('', '=================================== FAILURES ===================================', `_______________________________ ${name} _______________________________`, '', ...failure.error, '');
      lines.push('=========================== short test summary info ============================', `FAILED ${failure.id} - ${failure.error[failure.error.length - 1].replace(/^E\s+/, '')}`);
    }
    lines.push(`======================= ${failure ? '1 failed, ' : ''}${tests - (failure ? 1 : 0)} passed in ${(this.int(90_000) + 10_000) / 1000}s =======================`);
    return lines.join('\n');
  }
  /** `go test ./... -v` over `packages` packages; a failing test, if given, in the middle package. */
  goTest(packages: number, failure?: { pkg: string; test: string; file: string; message: string }): string {
    const lines: string[] = [];
    const failAt = failure ? Math.floor(packages / 2) : -1;
    const run = (name: string) => lines.push(`=== RUN   ${name}`, `--- PASS: ${name} (0.${String(this.int(100)).padStart(2, '0')}s)`);
    for (let i = 0; i < packages; i++) {
      const pkg = i === failAt && failure ? failure.pkg : `github.com/acme/ledger/internal/${this.pick(NOUNS)}${i}`;
      const count = 6 + this.int(10);
      for (let j = 0; j < count; j++) run(`Test${this.title()}_${this.pick(VERBS)}${j}`);
      if (i === failAt && failure) {
        lines.push(`=== RUN   ${failure.test}`, `    ${failure.file}: ${failure.message}`, `--- FAIL: ${failure.test} (0.${this.int(90) + 10}s)`, 'FAIL', `FAIL\t${pkg}\t0.${this.int(900) + 100}s`);
      } else {
        lines.push('PASS', `ok  \t${pkg}\t0.${this.int(900) + 100}s`);
      }
    }
    if (failure) lines.push('FAIL');
    return lines.join('\n');
  }
  /** `git log` (full, or `--oneline`) of `commits` commits. */
  gitLog(commits: number, oneline = false): string {
    const authors = ['Dana Kim <dana@acme.dev>', 'Luis Ortega <luis@acme.dev>', 'Priya Nair <priya@acme.dev>', 'Tom Weber <tom@acme.dev>'];
    return Array.from({ length: commits }, (_, i) => {
      const subject = `${this.pick(['fix', 'feat', 'chore', 'refactor', 'test'])}(${this.pick(NOUNS)}): ${this.pick(VERBS)} the ${this.pick(NOUNS)} ${this.pick(ADJECTIVES)} path`;
      if (oneline) return `${this.hex(7)} ${subject}`;
      return `commit ${this.hex(40)}\nAuthor: ${this.pick(authors)}\nDate:   Mon Mar ${1 + (i % 28)} 1${i % 10}:${String(i % 60).padStart(2, '0')}:11 2026 +0100\n\n    ${subject}\n`;
    }).join('\n');
  }
  /** A postgresql.conf-style dump of `settings` settings (about half commented out); `planted` lines spread through it. */
  configDump(settings: number, planted: string[] = []): string {
    const prefixes = ['autovacuum', 'wal', 'log', 'checkpoint', 'shared', 'effective', 'work', 'maintenance', 'random', 'seq', 'vacuum', 'bgwriter', 'archive', 'track', 'statement', 'jit'];
    const suffixes = ['timeout', 'size', 'limit', 'delay', 'cost', 'level', 'workers', 'threshold', 'target', 'mem', 'naptime', 'scale_factor'];
    const lines: string[] = [];
    for (let i = 0; i < settings; i++) {
      if (i % 25 === 0) lines.push('', '#------------------------------------------------------------------------------', `# ${this.pick(prefixes).toUpperCase()} ${this.pick(suffixes).toUpperCase()}`, '#------------------------------------------------------------------------------', '');
      const value = this.pick([`${this.int(1000)}`, `${this.int(512)}MB`, `${this.int(60)}s`, 'on', 'off', `'${this.pick(NOUNS)}'`, `0.${this.int(100)}`]);
      const line = `${this.pick(prefixes)}_${this.pick(suffixes)} = ${value}`;
      lines.push(`${this.int(2) === 0 ? '#' : ''}${line.padEnd(40)}# ${this.pick(['change requires restart', 'in milliseconds, 0 disables', 'range 1-1000', 'measured in pages', 'or -1 for default'])}`);
    }
    planted.forEach((line, i) => lines.splice(Math.floor(((i + 1) * lines.length) / (planted.length + 1)), 0, `${line.padEnd(40)}# (change requires restart)`));
    return lines.join('\n');
  }
  /** `env` of one container: `vars` variables; `planted` ones among them. */
  envDump(vars: number, planted: string[] = []): string {
    const areas = ['API', 'DB', 'CACHE', 'QUEUE', 'AUTH', 'S3', 'SMTP', 'METRICS', 'TRACE', 'FEATURE', 'GRPC', 'SENTRY'];
    const keys = ['HOST', 'PORT', 'URL', 'TIMEOUT_S', 'RETRIES', 'ENABLED', 'REGION', 'BUCKET', 'LEVEL', 'SIZE', 'NAME', 'SECRET_REF'];
    const lines = Array.from({ length: vars }, () => `${this.pick(areas)}_${this.pick(keys)}=${this.pick([String(this.int(10_000)), 'true', 'false', `${this.pick(NOUNS)}-${this.hex(6)}`, `https://${this.pick(NOUNS)}.acme.internal`])}`);
    planted.forEach((line) => lines.splice(this.int(lines.length), 0, line));
    return lines.join('\n');
  }
  /** `kubectl logs` of a service: mostly INFO and DEBUG, some WARN; `planted` lines spread through it. */
  podLog(lines: number, service: string, planted: string[] = []): string {
    const out = Array.from({ length: lines }, (_, i) => {
      const at = `2026-03-04T${String(8 + Math.floor(i / 3600) % 12).padStart(2, '0')}:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}.${String(this.int(1000)).padStart(3, '0')}Z`;
      const noun = this.pick(NOUNS);
      return this.pick([
        `${at} INFO ${service}: ${this.pick(VERBS)} ${noun} id=${this.hex(12)} took ${this.int(400) + 3}ms`,
        `${at} DEBUG ${service}: cache ${this.pick(['hit', 'miss'])} for ${noun}:${this.int(99_999)}`,
        `${at} INFO ${service}: {"msg":"request done","route":"/v1/${noun}s","status":200,"duration_ms":${this.int(90) + 2},"request_id":"${this.hex(16)}"}`,
        `${at} DEBUG ${service}: pool stats in_use=${this.int(40)} idle=${this.int(20)} waiting=0`,
        `${at} WARN ${service}: slow ${noun} ${this.pick(VERBS)} ${this.int(2000) + 800}ms (threshold 750ms)`,
      ]);
    });
    planted.forEach((line, i) => out.splice(Math.floor(((i + 1) * out.length) / (planted.length + 1)), 0, `2026-03-04T13:07:${String(10 + i).padStart(2, '0')}.481Z ${line}`));
    return out.join('\n');
  }
}

// ---------------------------------------------------------------- scripts

/** A message and the facts it plants or retires: they count from right after it is appended. */
interface Entry {
  message: Message;
  planted: string[];
  /** Facts no longer required from this message on (a todo finished, a constraint revoked). */
  retired: string[];
}

/** A user message and what the agent does until the next one. */
interface Turn {
  entries: Entry[];
}

/**
 * Builds a session's turns. `fact(x)` plants x and returns it, so it can be
 * written inline; it counts from the last message the call that carries it
 * adds (a tool call's result included), since compaction is checked after
 * every message.
 */
class Script {
  readonly turns: Turn[] = [];
  private current: Turn | null = null;
  private last: Entry | null = null;
  private pending: string[] = [];
  private ids = 0;
  constructor(readonly filler: Filler) {}

  private add(...messages: Message[]): this {
    if (!this.current) {
      this.current = { entries: [] };
      this.turns.push(this.current);
    }
    for (const message of messages) {
      this.last = { message, planted: [], retired: [] };
      this.current.entries.push(this.last);
    }
    this.last!.planted.push(...this.pending);
    this.pending = [];
    return this;
  }
  private id(prefix: string) {
    return `${prefix}${++this.ids}`;
  }
  fact<T extends string>(text: T): T {
    this.pending.push(text);
    return text;
  }
  /** Facts no longer required from the message just added on. */
  retire(...texts: string[]): void {
    this.last!.retired.push(...texts);
  }
  /** A user message starts a new turn. */
  user(text: string): this {
    this.current = null;
    return this.add({ id: this.id('u'), role: 'user', parts: [{ type: 'text', text }] });
  }
  say(text: string): this {
    return this.add({ id: this.id('a'), role: 'assistant', parts: [{ type: 'text', text }] });
  }
  tool(name: string, input: unknown, output: string, options: { text?: string; isError?: boolean } = {}): this {
    const callId = this.id('call_');
    const parts: Part[] = options.text ? [{ type: 'text', text: options.text }] : [];
    parts.push({ type: 'tool_call', callId, name, input });
    return this.add(
      { id: this.id('a'), role: 'assistant', parts },
      { id: this.id('t'), role: 'tool', parts: [{ type: 'tool_result', callId, name, output, isError: options.isError }] },
    );
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
  /** The group the summary table reports it under. */
  kind: string;
  /** What it exercises. */
  about: string;
  limits: { context: number; input?: number; output: number };
  /**
   * Tokens the provider counts that the store never sees (tool definitions):
   * each step then posts step.finished with usage = the view it read + this.
   */
  overhead?: number;
  /** The compaction completes this many turns after its marker (planned at the marker), not at once. */
  inFlightTurns?: number;
  build: (script: Script) => void;
}

const K128 = { context: 64_000, output: 8_000 };
const MANY_PIVOTS = 'many pivots';
/** What the many-pivots sessions must reach (checked and printed). */
const MIN_PIVOTS = 20;

const SESSIONS: SessionSpec[] = [
  {
    name: 'long-refactor',
    kind: 'summary of summaries',
    about: 'long session, compacted many times (summary of summaries)',
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
    kind: 'large outputs (first set)',
    about: 'facts deep inside large tool outputs',
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
    kind: 'constraints & todos',
    about: 'user constraints and an evolving todo list',
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
    kind: 'non-English (first set)',
    about: 'non-English (Chinese)',
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
    kind: 'non-English (first set)',
    about: 'non-English (Russian)',
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
    kind: 'non-English (first set)',
    about: 'non-English (Arabic)',
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
    kind: 'code & ops',
    about: 'code-heavy (code blocks, diffs, stack traces)',
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
    kind: 'code & ops',
    about: 'ops incident: URLs, hosts, ids, numbers with units; plan tool',
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
    kind: 'summary of summaries',
    about: 'long session mixing languages and tools, summary of summaries',
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
    kind: 'dense facts',
    about: '48 facts of every kind in a 32k window (the summary budget under pressure)',
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
  // ---- many pivots: a small window, 20+ compactions, facts said once at the start and never again.
  {
    name: 'pivots-billing',
    kind: MANY_PIVOTS,
    about: '16k window; URL, rate limit, constraint, env var and the edited file said once at the start',
    // An input limit below the window, as many models have: spec-001 would otherwise reserve more (16,384) than the window holds.
    limits: { context: 16_000, input: 14_000, output: 2_000 },
    build: (s) => {
      s.user(
        `Add retry with backoff to the charge client; it posts to ${s.fact('http://billing.internal:8080/v2/charges')}. Throttle it to ${s.fact('max 20 requests per second')}, the billing team's limit. ${s.fact('Do not add new npm dependencies.')} The API token comes from ${s.fact('BILLING_API_TOKEN')}.`,
      );
      s.tool('read', { path: 'src/billing/charge-client.ts' }, s.filler.code(70));
      s.tool('edit', { path: s.fact('src/billing/charge-client.ts'), old: 'await post(url, body)', new: 'await withRetry(() => post(url, body), { retries: 3 })' }, 'edited 1 file');
      for (let step = 1; step <= 80; step++) s.keepGoing(step, 6);
    },
  },
  {
    name: 'pivots-etl',
    kind: MANY_PIVOTS,
    about: '24k window; Python loader, the same kinds of facts said once',
    limits: { context: 24_000, output: 3_000 },
    build: (s) => {
      s.user(
        `The order loader must push batches to ${s.fact('http://warehouse.internal:9000/api/v1/batches')} instead of writing files. ${s.fact('Send at most 5 batches per minute')}, the warehouse team asked for it. ${s.fact('Do not touch the staging schema.')} Credentials are in ${s.fact('WAREHOUSE_DSN')}.`,
      );
      s.tool('edit', { path: s.fact('pipelines/etl/load_orders.py'), old: 'write_parquet(batch, path)', new: 'client.post_batch(batch)' }, 'edited 1 file');
      for (let step = 1; step <= 90; step++) s.keepGoing(step, 7);
    },
  },
  {
    name: 'pivots-ledger',
    kind: MANY_PIVOTS,
    about: '20k window; Go service, the same kinds of facts said once',
    limits: { context: 20_000, output: 2_500 },
    build: (s) => {
      s.user(
        `Make the ledger replay idempotent. Snapshots come from ${s.fact('http://ledger-snapshots.internal:7070/v1/snapshots')}; ${s.fact('keep it under 50 requests per second')} per node. ${s.fact('Never change the exported API of package ledger.')} The snapshot directory is ${s.fact('LEDGER_SNAPSHOT_DIR')}.`,
      );
      s.tool('edit', { path: s.fact('internal/ledger/replay.go'), old: 'apply(entry)', new: 'if !seen[entry.ID] { apply(entry) }' }, 'edited 1 file');
      for (let step = 1; step <= 80; step++) s.keepGoing(step, 6);
    },
  },
  // ---- big outputs: each fact once, inside a 50–200 KB tool output.
  {
    name: 'big-jest-git',
    kind: 'big outputs',
    about: 'a failing jest test among ~2,000 passing ones; a commit hash in a git log + reset + build output',
    limits: K128,
    build: (s) => {
      const f = s.filler;
      s.user(`Checkout rejects no coupons since yesterday's release. Find the failing test and the commit to go back to. ${s.fact('Do not modify the coupon fixtures.')}`);
      s.work(3);
      s.fact('rejects expired coupons');
      s.tool(
        'bash',
        { command: 'npx jest --ci --verbose' },
        f.jestRun(300, {
          file: 'src/coupons/apply-coupon.spec.ts',
          describe: 'CouponService › apply',
          test: 'rejects expired coupons',
          ms: 12,
          error: ['expect(received).rejects.toThrow()', '', 'Received promise resolved instead of rejected', 'Resolved to value: {"discount": 500, "code": "SPRING24"}', '', '  at Object.<anonymous> (src/coupons/apply-coupon.spec.ts:88:5)'],
        }),
        { isError: true },
      );
      s.keepGoing(1, 5);
      s.fact('7c41e9a');
      s.tool('bash', { command: 'git log -n 300 && git reset --hard HEAD~7 && npm run build' }, `${f.gitLog(300)}\nHEAD is now at 7c41e9a fix(coupons): compare expiry dates in UTC\n${f.log(400, 'tsc')}`);
      for (let step = 2; step <= 60; step++) s.keepGoing(step, 7);
    },
  },
  {
    name: 'big-go-config',
    kind: 'big outputs',
    about: 'a failing Go test in a -v run of 180 packages; a setting in a 900-line postgresql.conf; an env var in the env of 40 pods',
    limits: K128,
    build: (s) => {
      const f = s.filler;
      s.user(`Ledger replays diverge in staging and the database refuses connections under load. ${s.fact('Do not restart the staging database.')}`);
      s.work(3);
      s.fact('TestLedgerReplay');
      s.tool('bash', { command: 'go test ./... -v' }, f.goTest(180, { pkg: 'github.com/acme/ledger/internal/replay', test: 'TestLedgerReplay', file: 'replay_test.go:88', message: 'balance mismatch for account acc_7731: got 1040, want 1000' }), { isError: true });
      s.keepGoing(1, 6);
      s.fact('max_connections = 200');
      s.tool('bash', { command: 'cat /etc/postgresql/16/main/postgresql.conf' }, f.configDump(900, ['max_connections = 200']));
      s.keepGoing(2, 6);
      const pods = Array.from({ length: 40 }, (_, i) => {
        const name = i === 23 ? 'payment-worker' : f.pick(['ledger-api', 'ledger-cron', 'replayer', 'exporter']);
        return `== pod/${name}-${f.hex(9)}-${f.hex(5)}\n${f.envDump(70, i === 23 ? ['POOL_TIMEOUT_MS=4500'] : [])}`;
      });
      s.fact('POOL_TIMEOUT_MS=4500');
      s.tool('bash', { command: 'for p in $(kubectl get pods -n ledger -o name); do echo "== $p"; kubectl exec -n ledger $p -- env; done' }, pods.join('\n'));
      for (let step = 3; step <= 60; step++) s.keepGoing(step, 7);
    },
  },
  {
    name: 'big-pytest-logs',
    kind: 'big outputs',
    about: 'a failing pytest test among 1,400 then lint output; an error line in the middle of 180 KB of pod logs',
    limits: K128,
    build: (s) => {
      const f = s.filler;
      s.user(`The tax report job is red and payments time out at night. ${s.fact('Do not change the rounding mode of the Decimal context.')}`);
      s.work(3);
      s.fact('tests/test_tax.py::test_vat_rounding');
      const failure = { id: 'tests/test_tax.py::test_vat_rounding', error: ['    def test_vat_rounding():', '>       assert vat(Decimal("190.05")) == Decimal("19.00")', "E       AssertionError: assert Decimal('19.01') == Decimal('19.00')"] };
      const lint = Array.from({ length: 300 }, (_, i) => `src/tax/${f.pick(NOUNS)}_${i}.py: ok`).join('\n');
      s.tool('bash', { command: 'make check' }, `$ pytest -v\n${f.pytestRun(1400, failure)}\n$ mypy src\n${lint}\nSuccess: no issues found in 412 source files\n$ ruff check .\nAll checks passed!\nmake: *** [Makefile:12: check] Error 1`, { isError: true });
      s.keepGoing(1, 6);
      s.fact('ERROR payment-worker: upstream 10.2.3.4:5432 reset by peer');
      s.tool('bash', { command: 'kubectl logs deploy/payment-worker -n payments --since=12h' }, f.podLog(1800, 'payment-worker', ['ERROR payment-worker: upstream 10.2.3.4:5432 reset by peer (attempt 1/3)']));
      for (let step = 2; step <= 60; step++) s.keepGoing(step, 7);
    },
  },
  // ---- non-English: constraints, decisions and identifiers in German, Japanese and Spanish.
  {
    name: 'german',
    kind: 'non-English',
    about: 'German constraints and decisions; identifiers berechneGebühr, größeÄndern',
    limits: K128,
    build: (s) => {
      s.user(`Wir müssen die Gebührenberechnung auf Cent-Beträge umstellen. ${s.fact('Ändere niemals die Signatur von berechneGebühr.')} ${s.fact('Beträge werden immer in Cent als ganze Zahl gespeichert, nie als Fließkommazahl.')}`);
      s.tool('read', { path: s.fact('src/gebühren/berechneGebühr.ts') }, `export function berechneGebühr(betrag: number, tarif: Tarif): number {\n  // Gebühr in Cent, kaufmännisch gerundet\n  return Math.round(betrag * TARIFE[tarif]);\n}\n${s.filler.code(120)}`);
      s.say(s.fact('Wir verwenden decimal.js statt nativer Zahlen, weil Rundungsfehler bei Gebühren nicht akzeptabel sind.'));
      for (let step = 1; step <= 70; step++) {
        s.user('Weiter').work(7);
        if (step === 5)
          s.tool(
            'bash',
            { command: s.fact('npm test -- gebühren') },
            `${s.filler.passingTests(15)}\n● ${s.fact('berechneGebühr › Standardtarif')}\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 300\n    Received: 299.85\n\n      at Object.<anonymous> (src/gebühren/berechneGebühr.spec.ts:14:37)`,
            { isError: true },
          );
        if (step === 11) s.user(s.fact('Der Tarif „Standardtarif“ bleibt bei 15 Prozent, der Tarif „Premium“ sinkt auf 9 Prozent.')).work(3);
        if (step === 17) s.tool('edit', { path: s.fact('src/gebühren/tarife.ts') }, '1 Datei geändert');
        if (step === 23) s.user(s.fact('Füge keine neuen Abhängigkeiten außer decimal.js hinzu.')).work(3);
        if (step === 29) s.say(`${s.fact('Die Funktion größeÄndern bleibt unverändert, weil sie nur die Vorschau skaliert.')}`);
        if (step === 35) s.user(s.fact('Führe die Migration nicht vor Montag, dem 16. März, aus.')).work(3);
      }
    },
  },
  {
    name: 'japanese',
    kind: 'non-English',
    about: 'Japanese constraints, decisions, code comments; file src/料金/計算.ts',
    limits: K128,
    build: (s) => {
      s.user(`料金計算を税込み表示に対応させてください。${s.fact('既存の関数名は変更しないでください。')}${s.fact('消費税率は10%、軽減税率は8%を使ってください。')}`);
      s.tool(
        'read',
        { path: s.fact('src/料金/計算.ts') },
        `// 税込み価格を計算する\nexport function 税込み価格(金額: number, 軽減: boolean): number {\n  // 軽減税率の対象かどうかで税率を切り替える\n  const 税率 = 軽減 ? 0.08 : 0.1;\n  return Math.floor(金額 * (1 + 税率)); // 端数は切り捨て\n}\n${s.filler.code(120)}`,
      );
      s.say(s.fact('端数処理は切り捨てにします。国税庁のガイドラインに合わせるためです。'));
      for (let step = 1; step <= 70; step++) {
        s.user('続けてください').work(7);
        if (step === 6) s.tool('bash', { command: s.fact('npx tsc --noEmit') }, `${s.fact("src/料金/計算.ts(12,7): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.")}\nFound 1 error in src/料金/計算.ts:12`, { isError: true });
        if (step === 12) s.user(s.fact('「軽減税率」の対象は食品のみです。酒類は含めないでください。')).work(3);
        if (step === 18) s.tool('edit', { path: s.fact('src/料金/税率.ts') }, '1 ファイルを変更しました');
        if (step === 25) s.user(s.fact('リリースは3月20日以降にしてください。')).work(3);
        if (step === 31) s.say(s.fact('関数「税込み価格」の引数は2つのままにします。呼び出し元が42か所あるためです。'));
      }
    },
  },
  {
    name: 'spanish',
    kind: 'non-English',
    about: 'Spanish constraints and decisions; identifiers calcularDescuentoAño, añoFiscal',
    limits: K128,
    build: (s) => {
      s.user(`Hay que añadir el descuento anual a la facturación. ${s.fact('No cambies la firma de calcularDescuentoAño.')} ${s.fact('El descuento máximo es del 15 %.')}`);
      s.tool('read', { path: s.fact('src/facturación/descuentos.ts') }, `export function calcularDescuentoAño(cliente: Cliente, año: number): number {\n  // tramos según la antigüedad del cliente\n  return tramoDe(cliente.antigüedad, año);\n}\n${s.filler.code(120)}`);
      s.say(s.fact('Usaremos una tabla de tramos en lugar de fórmulas, porque el equipo de finanzas quiere revisar cada tramo.'));
      for (let step = 1; step <= 70; step++) {
        s.user('Sigue').work(7);
        if (step === 5) s.tool('bash', { command: s.fact('npm test -- descuentos') }, `${s.filler.passingTests(15)}\n${s.fact('Error: calcularDescuentoAño devolvió 0.18 para el cliente "Ñandú S.A."')}`, { isError: true });
        if (step === 11) s.user(s.fact('Nunca apliques el descuento a clientes con facturas vencidas.')).work(3);
        if (step === 17) s.tool('edit', { path: s.fact('src/facturación/tramos.ts') }, '1 archivo modificado');
        if (step === 24) s.user(s.fact('Llama al nuevo parámetro «añoFiscal», no «ejercicio».')).work(3);
        if (step === 30) s.say(s.fact('Decidimos redondear a dos decimales con el modo HALF_EVEN porque así lo exige contabilidad.'));
      }
    },
  },
  // ---- the provider counts ~15,000 tokens of tool definitions the store never sees.
  {
    name: 'tool-definitions',
    kind: 'tool definitions',
    about: 'each step posts step.finished with usage = the view it read + 15,000 tokens of tool definitions',
    limits: K128,
    overhead: 15_000,
    build: (s) => {
      s.user(`Add pagination to the orders API. ${s.fact('Keep the default page size at 50.')} ${s.fact('Cursor tokens must be opaque base64url strings.')}`);
      s.tool('read', { path: s.fact('src/orders/orders.controller.ts') }, s.filler.code(160));
      s.say(s.fact('We use keyset pagination on (created_at, id) because offset pagination is too slow past page 200.'));
      for (let step = 1; step <= 70; step++) {
        s.keepGoing(step, 7);
        if (step === 6) s.tool('bash', { command: s.fact('npx jest src/orders') }, `${s.filler.passingTests(20)}\n${s.fact("TypeError: Cannot read properties of undefined (reading 'createdAt')")}`, { isError: true });
        if (step === 12) s.user(s.fact('Do not expose internal order ids in the cursor.')).work(3);
        if (step === 18) s.tool('edit', { path: s.fact('src/orders/cursor.ts') }, 'edited 1 file');
        if (step === 24) s.tool('todowrite', { todos: [{ content: 'encode the cursor', status: 'completed' }, { content: s.fact('add an index on orders(created_at, id)'), status: 'pending' }] }, 'ok');
      }
    },
  },
  // ---- the compaction completes three turns after its marker, big outputs arriving meanwhile.
  {
    name: 'in-flight',
    kind: 'compaction in flight',
    about: 'planned at the marker, committed 3 turns later while 50–90 KB pod logs keep arriving',
    limits: K128,
    inFlightTurns: 3,
    build: (s) => {
      const f = s.filler;
      s.user(`Find why the nightly export is slow. ${s.fact('Do not run the export against the primary replica.')}`);
      s.tool('read', { path: s.fact('jobs/export/run.ts') }, f.code(140));
      for (let step = 1; step <= 60; step++) {
        s.keepGoing(step, 5);
        if (step % 2 === 0) s.tool('bash', { command: `kubectl logs job/export-${step} -n data` }, f.podLog(200 + f.int(800), 'export'), { text: f.sentence() });
        if (step === 4)
          s.tool('bash', { command: s.fact('psql -c "explain analyze select * from orders where exported_at is null"') }, `Seq Scan on orders  (cost=0.00..412331.00 rows=9123311 width=211) (actual time=0.021..8123.551 rows=9123311 loops=1)\n  Filter: (exported_at IS NULL)\n${s.fact('Execution Time: 8127.902 ms')}`);
        if (step === 9) s.say(s.fact('The export scans orders sequentially because the partial index on exported_at was dropped in migration 0142.'));
        if (step === 14) s.user(s.fact('Create the index CONCURRENTLY; never lock the orders table.')).work(3);
        if (step === 20) s.tool('edit', { path: s.fact('migrations/0157_orders_exported_at_idx.sql') }, 'edited 1 file');
      }
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

interface ReplayResult {
  samples: CompactionSample[];
  /** The largest view a model step read (its estimate plus the session's overhead) over the usable window. */
  peakRead: number;
  /** Reads fitted to the usable window, and the provider rules their views broke. */
  fittedReads: number;
  fittedViolations: number;
  /** Facts still current at the end of the session and found in its last view. */
  keptAtEnd: number;
  liveAtEnd: number;
  /** Markers the plan found nothing to compact for. */
  nothing: number;
}

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();

/** The providers' rules broken by a view rendered for Anthropic, Chat Completions and Responses. */
const ruleViolations = (view: ModelView) =>
  validateAnthropicRequest(renderAnthropic(view)).length +
  validateOpenAIChatMessages(renderOpenAIChat(view)).length +
  validateOpenAIResponsesInput(renderOpenAIResponses(view)).length;

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
  // A tool input is JSON wherever the model sees it (a call, an archive digest): a quote in it reads as \" there.
  return normalize([system, ...parts].join('\n').replaceAll('\\"', '"'));
}

/** A compaction planned at its marker, summarized, not yet committed. */
interface CompactionJob {
  before: SessionView;
  completion: CompactionCompletion;
  failures: NewEvent[];
  /** The turn before whose first message it commits (in-flight sessions). */
  dueTurn: number;
}

async function replay(spec: SessionSpec, preset: PresetName, turns: readonly Turn[]): Promise<ReplayResult> {
  const facts: SessionFacts = { model: MODEL, system: SYSTEM, systemTokens: Math.ceil(SYSTEM.length / 4), config: { preset, limits: spec.limits }, tenantConfig: null };
  const events: StoredEvent[] = [];
  const outputs = new Map<string, string>();
  const state: { pivot: StoredEvent<'compaction.completed'> | null } = { pivot: null };
  const chain = new SummaryChain({ heuristic: new HeuristicSummarizer(), get: () => null }, { timeoutMs: 60_000, retryBackoffMs: 0 });
  const samples: CompactionSample[] = [];
  const live = new Set<string>();
  const overhead = spec.overhead ?? 0;
  let refs = 0;
  let peakRead = 0;
  let fittedReads = 0;
  let fittedViolations = 0;
  let nothing = 0;
  // Assigned in afterAppend: a holder, so the loop does not narrow it to null.
  const inFlight: { job: CompactionJob | null } = { job: null };

  const append = (event: NewEvent): StoredEvent => {
    const seq = events.length + 1;
    events.push({ ...event, seq, createdAt: new Date(Date.UTC(2026, 2, 1, 0, 0, 0, seq)), tokens: eventTokens(event, MODEL) } as StoredEvent);
    if (event.type === 'compaction.completed') state.pivot = events[events.length - 1] as StoredEvent<'compaction.completed'>;
    return events[events.length - 1];
  };
  // Both depend on the log alone: kept until the next append.
  const memo: { seq: number; window: StoredEvent[]; view: SessionView | null } = { seq: -1, window: [], view: null };
  const windowEvents = () => {
    if (memo.seq !== events.length) {
      const base = state.pivot?.data.coveredThroughSeq ?? 0;
      Object.assign(memo, { seq: events.length, window: events.slice(base), view: null });
    }
    return memo.window;
  };
  const compose = () => {
    const window = windowEvents();
    memo.view ??= composeSessionView(facts, { pivot: state.pivot, events: window });
    return memo.view;
  };
  // The append path's bound of the view (viewTokenBound plus the stored tokens appended since) and the figure growth must reach.
  let bound: { seq: number; tokens: number; threshold: number | null } | null = null;

  // The worker's commit: the failures on the way, then the completion unless stale.
  const commit = ({ before, completion, failures }: CompactionJob) => {
    const compaction = before.config.compaction;
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
    const violations = ruleViolations(after.view);
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
  };

  // The append path's trigger after a batch, then the worker: plan at the marker, summarize; commit now or `inFlightTurns` later.
  const afterAppend = async (batch: StoredEvent[], turn: number) => {
    // A batch that only grows the view stays below the figure: no window read (staysBelow).
    if (bound && bound.seq === batch[0].seq - 1 && growsViewOnly(batch)) {
      const tokens = bound.tokens + batch.reduce((sum, event) => sum + event.tokens, 0);
      if (!mayOverflow(tokens, bound.threshold)) {
        bound = { ...bound, seq: batch[batch.length - 1].seq, tokens };
        return;
      }
    }
    const before = compose();
    const window = { pivot: state.pivot, events: windowEvents() };
    const compaction = before.config.compaction;
    const compactionFacts = compactionFactsOf(window);
    const current = deriveCompactionState(compactionFacts, {
      runningMarkerSeq: null,
      loopGuardRatio: compaction.loopGuardRatio,
      view: { tokens: before.view.tokens.estimated, usable: before.overflow.usable },
    });
    const decision = decideTrigger({ batch, evaluation: before.overflow, state: current });
    bound = {
      seq: events.length,
      tokens: viewTokenBound(before.view.tokens),
      threshold: growthThresholdAfterCheck({
        threshold: growthThreshold(before.limits, compaction),
        facts: compactionFacts,
        state: current,
        loopGuardRatio: compaction.loopGuardRatio,
        usable: before.overflow.usable,
      }),
    };
    if (decision.action !== 'request') return;
    const marker = append(markerEvent(events.length + 1, decision.reason)) as StoredEvent<'compaction.requested'>;
    const plan = planCompaction({ events: windowEvents(), pivot: state.pivot?.data ?? null, markerSeq: marker.seq, config: compaction, usable: before.overflow.usable });
    if (plan.kind === 'nothing') {
      nothing++;
      append(nothingToCompactEvent(plan));
      return;
    }
    const { completion, failures } = await chain.run({
      plan,
      marker: { seq: marker.seq, auto: true, reason: decision.reason },
      config: compaction,
      session: { model: MODEL, system: SYSTEM },
      tokensBefore: before.view.tokens.estimated,
      overhead: before.view.tokens.overhead,
      usable: before.overflow.usable,
      outputs,
    });
    const job = { before, completion, failures, dueTurn: turn + 1 + (spec.inFlightTurns ?? 0) };
    if (spec.inFlightTurns) inFlight.job = job;
    else commit(job);
  };

  for (const [index, turn] of turns.entries()) {
    if (inFlight.job && index >= inFlight.job.dueTurn) {
      commit(inFlight.job);
      inFlight.job = null;
    }
    const { config } = compose();
    const viewConfig = viewConfigOfSettings(config.toolOutput);
    for (const { message, planted, retired } of turn.entries) {
      // A model step reads the context right before its assistant message.
      let read: { seq: number; tokens: number } | null = null;
      if (message.role === 'assistant') {
        // What GET …/context hands the model: fitted to the usable window when over it. The provider counts its messages and the tool definitions.
        const { view, overflow, fitted } = readableView(compose());
        if (fitted) {
          fittedReads++;
          fittedViolations += ruleViolations(view);
        }
        read = { seq: events.length, tokens: facts.systemTokens + view.sources.reduce((sum, source) => sum + source.tokens, 0) };
        peakRead = Math.max(peakRead, (read.tokens + overhead) / (overflow.usable ?? Number.POSITIVE_INFINITY));
      }
      // The API keeps every output whole in the cache and gives the message its in-context view.
      const parts = message.parts.map((part): Part => {
        if (part.type !== 'tool_result') return part;
        const refId = `ref-${++refs}`;
        outputs.set(part.callId, part.output);
        const view = buildInContextView(part.output, refId, viewConfig);
        const lines = part.output.split('\n').length;
        return { ...part, output: view.view, truncated: view.truncated, outputRef: { id: refId, byte_size: Buffer.byteLength(part.output), line_count: lines } };
      });
      const batch = [append({ id: message.id, type: 'message.added', data: { message: { ...message, parts } } })];
      if (read && overhead > 0) {
        // The provider counted the view it read plus the tool definitions; the step's output is its message.
        const usage = { input_tokens: read.tokens + overhead, output_tokens: batch[0].tokens };
        batch.push(append({ id: `step-${message.id}`, type: 'step.finished', data: { usage, finishReason: 'stop', contextSeq: read.seq } }));
      }
      for (const fact of planted) live.add(fact);
      for (const fact of retired) live.delete(fact);
      await afterAppend(batch, index);
    }

    // The prune / archive job, as the worker runs it after appends.
    const maintenance = selectMaintenance(windowEvents(), config);
    if (maintenance.archive) {
      const digest = heuristicDigest(maintenance.archive.pairs, config.archive);
      append(archivedEvent(events.length + 1, maintenance.archive.callIds, digest, { strategy: config.archive.strategy, digestBy: 'heuristic' }));
    }
    const prune = maintenance.archive ? selectMaintenance(windowEvents(), config).prune : maintenance.prune;
    if (prune) append(prunedEvent(events.length + 1, prune));
  }

  const end = viewText(SYSTEM, compose().view.messages);
  const keptAtEnd = [...live].filter((fact) => end.includes(normalize(fact))).length;
  return { samples, peakRead, fittedReads, fittedViolations, keptAtEnd, liveAtEnd: live.size, nothing };
}

// ---------------------------------------------------------------- report

const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '∞');
const ratio = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '∞');
const min = (xs: number[]) => xs.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
const max = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);

/** One session × preset, reduced to the figures the tables print. */
interface Outcome {
  spec: SessionSpec;
  preset: PresetName;
  result: ReplayResult;
  compactions: number;
  /** Kept share after each compaction: minimum and mean (1 without a compaction). */
  minKept: number;
  meanKept: number;
  endKept: number;
  maxTokens: number;
  violations: number;
}

function outcomeOf(spec: SessionSpec, preset: PresetName, result: ReplayResult): Outcome {
  const { samples } = result;
  const shares = samples.map((s) => (s.planted === 0 ? 1 : s.kept / s.planted));
  return {
    spec,
    preset,
    result,
    compactions: samples.length,
    minKept: shares.length > 0 ? min(shares) : 1,
    meanKept: shares.length > 0 ? shares.reduce((a, b) => a + b, 0) / shares.length : 1,
    endKept: result.liveAtEnd === 0 ? 1 : result.keptAtEnd / result.liveAtEnd,
    maxTokens: samples.length > 0 ? max(samples.map((s) => s.tokenShare)) : 0,
    violations: samples.reduce((sum, s) => sum + s.violations, 0) + result.fittedViolations,
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  console.log(`bench/quality: ${SESSIONS.length} sessions × ${PRESET_NAMES.length} presets, heuristic summarizer, node ${process.version}`);
  const outcomes: Outcome[] = [];
  const verbose: string[] = [];
  for (const spec of SESSIONS) {
    const script = new Script(new Filler(spec.name.length * 7919));
    spec.build(script);
    for (const preset of PRESET_NAMES) {
      const outcome = outcomeOf(spec, preset, await replay(spec, preset, script.turns));
      outcomes.push(outcome);
      if (VERBOSE) {
        outcome.result.samples.forEach((s, i) => {
          if (s.missing.length > 0) verbose.push(`${spec.name}/${preset} #${i + 1} (${s.kept}/${s.planted}): ${s.missing.map((m) => JSON.stringify(m)).join(', ')}`);
        });
      }
    }
  }

  const rows: string[][] = [
    ['session', 'kind', 'preset', 'compactions', 'facts', 'kept after each (min)', 'kept (mean)', 'kept at end', 'tokens after / trigger (max)', 'largest view before a step / usable', 'summary tokens (max)', 'evicted', 'retention recorded (min)', 'nothing to compact', 'rule violations'],
  ];
  for (const o of outcomes) {
    const { samples } = o.result;
    const last = samples[samples.length - 1];
    const retention = samples.map((s) => s.retention).filter((r): r is number => r !== null);
    rows.push([
      o.spec.name,
      o.spec.kind,
      o.preset,
      String(o.compactions),
      last ? String(last.planted) : '-',
      last ? pct(o.minKept) : '-',
      last ? pct(o.meanKept) : '-',
      `${o.result.keptAtEnd}/${o.result.liveAtEnd}`,
      last ? pct(o.maxTokens) : '-',
      ratio(o.result.peakRead),
      last ? String(max(samples.map((s) => s.summaryTokens))) : '-',
      last ? String(last.evicted) : '-',
      retention.length > 0 ? pct(min(retention)) : '-',
      String(o.result.nothing),
      String(o.violations),
    ]);
  }
  console.log('');
  printTable(rows);

  // Per kind × preset: the worst session of the kind.
  const kinds = [...new Set(SESSIONS.map((s) => s.kind))];
  const summary: string[][] = [
    ['kind', 'preset', 'sessions', 'compactions (min–max)', 'kept after each (min)', 'kept at end (min)', 'tokens after / trigger (max)', 'largest view before a step / usable (max)', 'rule violations'],
  ];
  for (const kind of kinds) {
    for (const preset of PRESET_NAMES) {
      const group = outcomes.filter((o) => o.spec.kind === kind && o.preset === preset);
      const counts = group.map((o) => o.compactions);
      const compacted = group.filter((o) => o.compactions > 0);
      summary.push([
        kind,
        preset,
        String(group.length),
        min(counts) === max(counts) ? String(min(counts)) : `${min(counts)}–${max(counts)}`,
        compacted.length > 0 ? pct(min(compacted.map((o) => o.minKept))) : '-',
        pct(min(group.map((o) => o.endKept))),
        compacted.length > 0 ? pct(max(compacted.map((o) => o.maxTokens))) : '-',
        ratio(max(group.map((o) => o.result.peakRead))),
        String(group.reduce((sum, o) => sum + o.violations, 0)),
      ]);
    }
  }
  console.log('');
  printTable(summary);
  if (verbose.length > 0) console.log(`\nmissed facts:\n${verbose.join('\n')}`);

  const compacted = outcomes.filter((o) => o.compactions > 0);
  const totalViolations = outcomes.reduce((sum, o) => sum + o.violations, 0);
  const compactions = outcomes.reduce((sum, o) => sum + o.compactions, 0);
  const recordBytes = max(outcomes.flatMap((o) => o.result.samples.map((s) => s.recordBytes)));
  const pivots = outcomes.filter((o) => o.spec.kind === MANY_PIVOTS);
  const short = pivots.filter((o) => o.compactions < MIN_PIVOTS);
  /** A target over the pairs it applies to: how many meet it, and the worst pair (`worst`: which extreme is worse). */
  const verdict = (label: string, pairs: Outcome[], figure: (o: Outcome) => number, meets: (x: number) => boolean, worst: 'min' | 'max', show: (x: number) => string, target: string) => {
    const bad = pairs.reduce((a, b) => ((worst === 'min' ? figure(b) < figure(a) : figure(b) > figure(a)) ? b : a));
    const met = pairs.filter((o) => meets(figure(o))).length;
    const note = Number.isFinite(figure(bad)) ? '' : ': its usable window is 0 tokens, the preset reserves more than the context';
    const where = met === pairs.length ? '' : `; worst ${show(figure(bad))} (${bad.spec.name}/${bad.preset}${note})`;
    console.log(`${label} (target ${target}): ${met === pairs.length ? 'met' : 'MISSED'}, met in ${met} of ${pairs.length} session/preset pairs${where}`);
  };
  console.log('');
  console.log(`sessions: ${SESSIONS.map((s) => `${s.name} [${s.kind}] (${s.about})`).join('; ')}`);
  console.log(
    `${MANY_PIVOTS}: compactions per session (${PRESET_NAMES.join(' / ')}): ${[...new Set(pivots.map((o) => o.spec.name))]
      .map((name) => `${name} ${pivots.filter((o) => o.spec.name === name).map((o) => o.compactions).join('/')}`)
      .join('; ')}; ≥ ${MIN_PIVOTS} in ${pivots.length - short.length} of ${pivots.length} session/preset pairs${short.length > 0 ? ` (below: ${short.map((o) => `${o.spec.name}/${o.preset}`).join(', ')})` : ''}`,
  );
  verdict('kept after every compaction', compacted, (o) => o.minKept, (x) => x >= TARGET_KEPT, 'min', pct, `≥ ${pct(TARGET_KEPT)}`);
  verdict('largest view read before a model step / usable window', outcomes, (o) => o.result.peakRead, (x) => x <= TARGET_READ, 'max', ratio, `≤ ${ratio(TARGET_READ)}`);
  verdict('provider-rule violations', outcomes, (o) => o.violations, (x) => x === 0, 'max', String, `0; ${totalViolations} in all`);
  verdict('tokens after compaction / trigger', compacted, (o) => o.maxTokens, (x) => x <= TARGET_TOKENS, 'max', pct, `≤ ${pct(TARGET_TOKENS)}`);
  console.log(`session/preset pairs without a compaction: ${outcomes.length - compacted.length}; markers with nothing to compact: ${outcomes.reduce((sum, o) => sum + o.result.nothing, 0)}`);
  console.log(`reads fitted to the usable window (a compaction pending or running): ${outcomes.reduce((sum, o) => sum + o.result.fittedReads, 0)}, their provider-rule violations: ${outcomes.reduce((sum, o) => sum + o.result.fittedViolations, 0)}`);
  console.log(`${compactions} compactions; largest summary record stored: ${(recordBytes / 1024).toFixed(1)} KB of JSON`);
  console.log(`ran in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

runBench(main);
