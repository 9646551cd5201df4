/**
 * What a tool output says, read whole: its error, exception, failure
 * (failing tests by name) and exit-code lines wherever they are, each with
 * the nearest file:line, the files its diff headers name, its rare lines
 * that state a fact (a commit hash, an id, a setting), and its first and
 * last lines. One pass, line
 * by line, bounded work per line: linear in the output, and streamable, so
 * the worker can feed a multi-megabyte output from the tool-output store
 * chunk by chunk instead of holding it (ToolOutputScanner), or hand over the
 * whole text (digestToolOutput).
 */
import { clipText, diffHeaderPath, isPath } from './extract';

export interface OutputError {
  /** The line, trimmed and clipped. */
  text: string;
  /** The nearest `file:line` (same line, else within a few lines around), or null. */
  location: string | null;
  /** 1-based line number in the output. */
  line: number;
}

export interface ToolOutputDigest {
  lines: number;
  /** First non-blank lines. */
  head: string[];
  /** Last non-blank lines. */
  tail: string[];
  /** The first and the last distinct error lines (distinct once digits are ignored). */
  errors: OutputError[];
  /** Error lines seen in all, distinct or not. */
  errorCount: number;
  /** The last exit code the output reports, or null. */
  exitCode: number | null;
  /** Files named by diff headers (git, unified, apply_patch). */
  patched: string[];
  /** Warning and deprecation lines (the first and last distinct ones): not errors, but what stands out of a log. */
  notable: string[];
  /**
   * Rare lines that state a fact: a commit hash, a UUID or prefixed id, a `key: value` or `KEY=value` setting.
   * At most SALIENT_LINES, the rarest shapes first, distinct keys preferred, in output order.
   */
  salient: string[];
}

const HEAD_LINES = 3;
const TAIL_LINES = 4;
const FIRST_ERRORS = 6;
const LAST_ERRORS = 6;
/** How far from an error line its location may be. */
const LOCATION_REACH = 6;
/** Each line is tested on at most this many characters. */
const LINE_PROBE = 2_000;
const ERROR_TEXT = 400;
const DEDUPE_LIMIT = 20_000;

// Words inside identifiers (`seq_timeout`, `MAX_ERRORS`, `on_failure`) are names, not errors: `_` and digits bound a word too.
const ERROR_WORDS =
  /(?:^|[^\p{L}\p{N}_])(?:error|errors|err!|exception|fatal|panic|panicked|traceback|failed|failure|fail|segmentation fault|cannot|could not|couldn't|unable to|not found|no such file|denied|refused|timed out|timeout|undefined reference|unhandled|uncaught|assertion|abort(?:ed)?|ошибка|ошибки|исключение|не удалось|خطأ|فشل|استثناء)(?![\p{L}\p{N}_])|错误|失败|異常|异常|エラー/iu;
const ERROR_CLASS =
  /[A-Za-z]+(?:Error|Exception|Panic|Failure)\b|\bE(?:NOENT|ACCES|CONNREFUSED|CONNRESET|ADDRINUSE|PERM|EXIST|NOTDIR|ISDIR|TIMEDOUT|PIPE|AGAIN|NOTFOUND|MFILE|NOSPC|NOMEM)\b|^E\s{2,}|^FAIL\b|✗|✘|✕|❌/;
/**
 * A failing test named by its runner: jest's `● Suite › test` and `✕ test`, rspec's `rspec ./spec/x_spec.rb:12 # …`
 * (pytest's `FAILED x.py::test`, go's `--- FAIL: TestX` and mocha's `AssertionError` lines are error lines already).
 */
const TEST_FAILURE = /^\s*●\s+\S.*›|^rspec\s+\.?\/?\S+:\d+\s+#/;
/** Mocha lists its failures as `1) suite test` after `N failing`. */
const MOCHA_FAILING = /^\s*\d+ failing\b/;
const MOCHA_FAILURE = /^\s*\d+\)\s+\S/;
const NOT_AN_ERROR = /\b(?:0|no|zero)\s+(?:errors?|failures?|failed|problems?)\b|\berrors?:\s*0\b|\bfailed:\s*0\b|\b0 failed\b|without errors/i;
const EXIT_CODE =
  /\bexit[ _-]?(?:code|status)\b["']?\s*[:=]?\s*(-?\d{1,3})\b|\bexited with (?:code|status) (-?\d{1,3})\b|\breturned non-zero exit status (\d{1,3})\b|\[exit (-?\d{1,3})\]|\brc=(-?\d{1,3})\b/i;
const WARNING = /(?:^|[^\p{L}])(?:warn|warning|deprecated|deprecation)(?![\p{L}])|предупреждение|警告|تحذير/iu;
const NOTABLE_FIRST = 3;
const NOTABLE_LAST = 3;
/** Salient lines: at most this many per output, of shapes seen at most RARE_REPEATS times, among the first SHAPES_TRACKED shapes. */
const SALIENT_LINES = 12;
const RARE_REPEATS = 3;
const SHAPES_TRACKED = 4_096;
const SALIENT_TEXT = 300;
const SHAPE_KEY_CHARS = 240;
/** A commit hash (7 to 40 lowercase hex digits, at least one digit and one letter), a UUID, or a prefixed id (`cus_8f3Kd92x`). */
const IDENTITY =
  /(?<![\p{L}\p{N}_])(?:(?=[0-9a-f]{0,39}[0-9])(?=[0-9a-f]{0,39}[a-f])[0-9a-f]{7,40}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[a-z]{2,8}_(?=[A-Za-z0-9]{0,39}[0-9])[A-Za-z0-9]{8,40})(?![\p{L}\p{N}_])/u;
/** One setting per line: `key: value`, `key = value`, `KEY=value`, `export KEY=value`, `"key": value,` with a one-token value, a trailing comment allowed. */
const SETTING =
  /^\s*(?:export\s+|[-*]\s+)?["']?([A-Za-z_][\w.-]{1,60})["']?\s*(?::=|[:=])\s*("[^"\n]{0,80}"|'[^'\n]{0,80}'|[^\s"'=][^\s=]{0,79}?),?\s*(?:(?:#|\/\/|;)\s.*)?$/;
/** Keys that are a log's prefix, not a setting. */
const NOT_SETTINGS = new Set(['info', 'debug', 'trace', 'note', 'notice', 'hint', 'log', 'http', 'https', 'at']);
const PY_FRAME = /File "([^"]{1,300})", line (\d+)/;
const TOKEN_SPLIT = /[\s()'"<>[\]{},]+/;
const LOCATION_TOKEN = /^(.+?\.[A-Za-z0-9]{1,10}):(\d+)(?::(\d+))?:?$/;

/** The first `file:line[:column]` a line names: a stack frame, a compiler diagnostic, a Python frame. */
export function locationIn(line: string): string | null {
  if (!line.includes(':') && !line.includes('line ')) return null;
  const python = PY_FRAME.exec(line);
  if (python) return `${python[1]}:${python[2]}`;
  for (const raw of line.split(TOKEN_SPLIT)) {
    if (raw.length < 5 || !raw.includes(':')) continue;
    const token = raw.replace(/^(?:file:\/\/|at\s)/, '').replace(/[.,;)]+$/, '');
    const match = LOCATION_TOKEN.exec(token);
    if (match && isPath(match[1])) return match[3] === undefined ? `${match[1]}:${match[2]}` : `${match[1]}:${match[2]}:${match[3]}`;
  }
  return null;
}

function isErrorLine(line: string): boolean {
  if (!ERROR_WORDS.test(line) && !ERROR_CLASS.test(line)) return false;
  return !NOT_AN_ERROR.test(line);
}

/** An error's identity for deduplication: digits and hex runs ignored, so "line 10" and "line 12" repeat. */
const signature = (text: string) => text.toLowerCase().replace(/0x[0-9a-f]+|\d+/g, '#');
/** A line's shape: every token holding a digit (an id, a time, a count, a hash) is the same, so log noise repeats. */
const shapeOf = (text: string) =>
  text
    .toLowerCase()
    .split(/\s+/)
    .map((token) => (/\p{N}/u.test(token) ? '#' : token))
    .join(' ')
    // A bounded key: thousands of tracked shapes of 2,000-character lines would hold megabytes per output.
    .slice(0, SHAPE_KEY_CHARS);

interface SalientCandidate {
  text: string;
  line: number;
  /** The first words of its shape: a log's timestamp, level and logger, what a templated log's lines share. */
  prefix: string;
  /** The setting's key (distinct keys are preferred), or null for an identity line. */
  key: string | null;
  /** Lines of this shape so far. */
  count: number;
}

/** How many words of a line's shape say which template printed it (`# info export:`). */
const PREFIX_WORDS = 3;
const prefixOf = (shape: string) => shape.split(' ', PREFIX_WORDS).join(' ');

/** The line's fact, if it states one (an identity, else a setting), with the shape its repeats share. */
function salientOf(line: string): { key: string | null; shape: string } | null {
  if (IDENTITY.test(line)) return { key: null, shape: shapeOf(line) };
  const setting = SETTING.exec(line);
  if (!setting) return null;
  const key = setting[1].toLowerCase();
  // `KEY=32` is one token: the key is kept in the shape, so each setting is a shape of its own.
  return NOT_SETTINGS.has(key) ? null : { key, shape: `${key}=${shapeOf(setting[2])}` };
}

/** The words of a setting's key (`max_connections`, `POOL_TIMEOUT_MS`, `maxConnections` → max, connections …). */
const keyWords = (key: string) => key.split(/[^a-z0-9]+/).filter((word) => word.length > 0);

/**
 * How often each setting key, each word of a key and each identity line's
 * prefix was seen: a key dumped for every pod, a word every key shares, or an
 * id in every line a logger prints, is noise.
 */
export interface KeyCounts {
  keys: ReadonlyMap<string, number>;
  words: ReadonlyMap<string, number>;
  prefixes: ReadonlyMap<string, number>;
}

/** The rarest word of a candidate's key: a setting named by words seen nowhere else in the output stands out of a dump. */
const rarestWord = (candidate: SalientCandidate, counts: KeyCounts) =>
  candidate.key === null ? 0 : Math.min(...keyWords(candidate.key).map((word) => counts.words.get(word) ?? 0));

/**
 * The rarest candidates, up to SALIENT_LINES: shapes (and, for settings,
 * keys; for identities, their prefix) seen more than RARE_REPEATS times are noise; then the fewest repeats,
 * identities before settings, settings by the rarity of their key's words;
 * one line per key while other keys remain; back in output order.
 */
function pickSalient(candidates: Iterable<SalientCandidate>, counts: KeyCounts): string[] {
  const rare = [...candidates]
    .filter(
      (candidate) =>
        candidate.count <= RARE_REPEATS &&
        (candidate.key === null ? (counts.prefixes.get(candidate.prefix) ?? 0) : (counts.keys.get(candidate.key) ?? 0)) <= RARE_REPEATS,
    )
    .sort(
      (a, b) =>
        a.count - b.count || Number(a.key !== null) - Number(b.key !== null) || rarestWord(a, counts) - rarestWord(b, counts) || a.line - b.line,
    );
  const keys = new Set<string>();
  const picked = rare.filter((candidate) => {
    if (candidate.key === null) return true;
    if (keys.has(candidate.key)) return false;
    keys.add(candidate.key);
    return true;
  });
  const chosen = new Set(picked.slice(0, SALIENT_LINES));
  for (const candidate of rare) if (chosen.size < SALIENT_LINES) chosen.add(candidate);
  return [...chosen].sort((a, b) => a.line - b.line).map((candidate) => candidate.text);
}

/** Reads an output chunk by chunk; `end()` gives the digest. */
export class ToolOutputScanner {
  private partial = '';
  private lineNo = 0;
  private readonly head: string[] = [];
  private tail: string[] = [];
  private readonly first: OutputError[] = [];
  private last: OutputError[] = [];
  private readonly seen = new Set<string>();
  private errorCount = 0;
  private exitCode: number | null = null;
  private readonly patched = new Set<string>();
  private readonly notableFirst: string[] = [];
  private notableLast: string[] = [];
  private readonly notableSeen = new Set<string>();
  /** Errors still looking for a location in the lines after them. */
  private waiting: OutputError[] = [];
  private lastLocation: { at: number; location: string } | null = null;
  private mochaFailing = false;
  /** Salient candidates by shape. */
  private readonly shapes = new Map<string, SalientCandidate>();
  private readonly keyCounts = { keys: new Map<string, number>(), words: new Map<string, number>(), prefixes: new Map<string, number>() };

  push(chunk: string): void {
    let start = 0;
    const text = this.partial + chunk;
    for (let at = text.indexOf('\n', start); at !== -1; at = text.indexOf('\n', start)) {
      this.line(text.slice(start, at));
      start = at + 1;
    }
    this.partial = text.slice(start);
    // A line without a break for megabytes is still bounded: it is tested on its start only.
    if (this.partial.length > 4 * LINE_PROBE) {
      this.line(this.partial.slice(0, LINE_PROBE));
      this.partial = '';
    }
  }

  end(): ToolOutputDigest {
    if (this.partial !== '') this.line(this.partial);
    this.partial = '';
    const errors = [...this.first, ...this.last.filter((error) => !this.first.includes(error))];
    return {
      lines: this.lineNo,
      head: [...this.head],
      tail: [...this.tail],
      errors: errors.map((error) => ({ ...error })),
      errorCount: this.errorCount,
      exitCode: this.exitCode,
      patched: [...this.patched],
      notable: [...this.notableFirst, ...this.notableLast],
      salient: pickSalient(this.shapes.values(), this.keyCounts),
    };
  }

  private line(raw: string): void {
    this.lineNo++;
    const line = (raw.length > LINE_PROBE ? raw.slice(0, LINE_PROBE) : raw).replace(/\r$/, '');
    const trimmed = line.trim();
    if (trimmed === '') return;
    if (this.head.length < HEAD_LINES) this.head.push(clipText(trimmed, 300));
    this.tail.push(clipText(trimmed, 300));
    if (this.tail.length > TAIL_LINES) this.tail.shift();

    const location = locationIn(line);
    if (location) {
      this.lastLocation = { at: this.lineNo, location };
      for (const error of this.waiting) error.location ??= location;
      this.waiting = [];
    }
    this.waiting = this.waiting.filter((error) => this.lineNo - error.line < LOCATION_REACH);

    const exit = EXIT_CODE.exec(line);
    if (exit) this.exitCode = Number(exit.slice(1).find((group) => group !== undefined));
    const patched = diffHeaderPath(line);
    if (patched) this.patched.add(patched);

    if (MOCHA_FAILING.test(line)) this.mochaFailing = true;
    if (isErrorLine(line) || TEST_FAILURE.test(line) || (this.mochaFailing && MOCHA_FAILURE.test(line))) this.error(trimmed, location);
    else if (WARNING.test(line)) this.notable(trimmed);
    else this.salient(trimmed);
  }

  private salient(text: string): void {
    const fact = salientOf(text);
    if (!fact) return;
    const prefix = prefixOf(fact.shape);
    if (fact.key !== null) this.countKey(fact.key);
    else this.count(this.keyCounts.prefixes, prefix);
    const known = this.shapes.get(fact.shape);
    if (known) known.count++;
    else if (this.shapes.size < SHAPES_TRACKED) this.shapes.set(fact.shape, { text: clipText(text, SALIENT_TEXT), line: this.lineNo, prefix, key: fact.key, count: 1 });
  }

  private countKey(key: string): void {
    this.count(this.keyCounts.keys, key);
    for (const word of keyWords(key)) this.count(this.keyCounts.words, word);
  }

  private count(counts: Map<string, number>, key: string): void {
    if (counts.size < SHAPES_TRACKED || counts.has(key)) counts.set(key, (counts.get(key) ?? 0) + 1);
  }

  private notable(text: string): void {
    const key = signature(text);
    if (this.notableSeen.has(key)) return;
    if (this.notableSeen.size < DEDUPE_LIMIT) this.notableSeen.add(key);
    const clipped = clipText(text, ERROR_TEXT);
    if (this.notableFirst.length < NOTABLE_FIRST) this.notableFirst.push(clipped);
    else {
      this.notableLast.push(clipped);
      if (this.notableLast.length > NOTABLE_LAST) this.notableLast.shift();
    }
  }

  private error(text: string, location: string | null): void {
    this.errorCount++;
    const key = signature(text);
    if (this.seen.has(key)) return;
    if (this.seen.size < DEDUPE_LIMIT) this.seen.add(key);
    const near = this.lastLocation && this.lineNo - this.lastLocation.at <= LOCATION_REACH ? this.lastLocation.location : null;
    const error: OutputError = { text: clipText(text, ERROR_TEXT), location: location ?? near, line: this.lineNo };
    if (error.location === null) this.waiting.push(error);
    if (this.first.length < FIRST_ERRORS) {
      this.first.push(error);
      return;
    }
    this.last.push(error);
    if (this.last.length > LAST_ERRORS) this.last.shift();
  }
}

/** The digest of a whole output text (one pass). */
export function digestToolOutput(text: string): ToolOutputDigest {
  const scanner = new ToolOutputScanner();
  scanner.push(text);
  return scanner.end();
}

/** Whether `value` is a digest (the worker may pass digests it streamed instead of texts). */
export function isToolOutputDigest(value: unknown): value is ToolOutputDigest {
  return typeof value === 'object' && value !== null && Array.isArray((value as ToolOutputDigest).errors) && Array.isArray((value as ToolOutputDigest).tail);
}
