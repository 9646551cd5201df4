/**
 * Line-by-line search of a stored output with a linear-time engine (re2js:
 * RE2 syntax, so no backreferences or lookaround, and no catastrophic
 * backtracking). `GrepScanner` is fed the output in pieces (chunk texts or
 * bytes) so the adapter can stream chunks from the database in a worker
 * thread, and stops at a match, byte or time cap with a partial-result flag.
 */
import { RE2JS, RE2JSException } from 're2js';

import { invalid } from '../errors';
import { DEFAULT_MAX_LINE_LENGTH, cutLongLine } from './line-format';
import { codePointCount, toDisplayText, utf8ByteLength, utf8Decoder, utf8PrefixEnd } from './utf8';

export const DEFAULT_MAX_PATTERN_LENGTH = 512;

export interface GrepPatternOptions {
  ignoreCase?: boolean;
  maxPatternLength?: number;
}

export interface CompiledGrepPattern {
  readonly source: string;
  readonly ignoreCase: boolean;
  /** Whether the pattern matches anywhere in `line` (unanchored, like grep). */
  test(line: string): boolean;
  /**
   * Whether it matches in a window of a longer line: `^`/`\A` only hold if the
   * window starts the line, `$`/`\z` only if it ends it.
   */
  testWindow(window: string, startsLine: boolean, endsLine: boolean): boolean;
}

/** A character class with nothing in it: stands for an anchor that cannot hold. */
const NEVER = '[^\\x00-\\x{10FFFF}]';
const ASCII_CLASS = /\[:\^?[a-z]+:\]/y;

/**
 * `pattern` with its begin and/or end anchors made impossible, found by a
 * scan of RE2 syntax that skips escapes, `\Q…\E` and character classes.
 */
function withoutAnchors(pattern: string, begin: boolean, end: boolean): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    const next = pattern[i + 1] ?? '';
    let skip = 1;
    if (char === '\\' && next === 'Q') {
      const close = pattern.indexOf('\\E', i + 2);
      skip = (close === -1 ? pattern.length : close + 2) - i;
    } else if (char === '\\') {
      if (!inClass && ((begin && next === 'A') || (end && next === 'z'))) {
        out += NEVER;
        i++;
        continue;
      }
      skip = 2;
    } else if (inClass && char === '[' && next === ':') {
      ASCII_CLASS.lastIndex = i;
      skip = ASCII_CLASS.test(pattern) ? ASCII_CLASS.lastIndex - i : 1;
    } else if (inClass) {
      inClass = char !== ']';
    } else if (char === '[') {
      inClass = true;
      // A ']' first in the class (after an optional '^') is a literal.
      skip = next === '^' ? 2 : 1;
      if (pattern[i + skip] === ']') skip++;
    } else if ((begin && char === '^') || (end && char === '$')) {
      out += NEVER;
      continue;
    }
    out += pattern.slice(i, i + skip);
    i += skip - 1;
  }
  return out;
}

const RE2_METACHARACTERS = /[\\.+*?()|[\]{}^$]/;
const ASCII = /^[\x00-\x7f]*$/;

/**
 * A faster exact test for a pattern that is a plain string, since most greps
 * are: `includes` (V8's string search, linear in practice), and for an ASCII
 * string matched case-insensitively, `toLowerCase` then `includes`. The latter
 * equals RE2's case folding except on lines holding U+0130 (which lowercases
 * to two units, so the length changes) or, when the string has an `s`, U+017F
 * (which RE2 folds to `s`): those lines go to the regex. Null: use the regex.
 */
function literalTest(pattern: string, ignoreCase: boolean, regex: RE2JS): ((line: string) => boolean) | null {
  if (RE2_METACHARACTERS.test(pattern)) return null;
  if (!ignoreCase) return (line) => line.includes(pattern);
  if (!ASCII.test(pattern)) return null;
  const lower = pattern.toLowerCase();
  const longS = lower.includes('s');
  return (line) => {
    const folded = line.toLowerCase();
    if (folded.length !== line.length || (longS && line.includes('\u017f'))) return regex.test(line);
    return folded.includes(lower);
  };
}

function compileRe2(pattern: string, ignoreCase: boolean): RE2JS {
  try {
    return RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    throw invalid(
      'invalid_pattern',
      `invalid regular expression (RE2 syntax; backreferences and lookaround are not supported): ${error.message}`,
      { pattern },
    );
  }
}

/** Throws a DomainError `pattern_too_long` or `invalid_pattern` (the HTTP layer's 400). */
export function compileGrepPattern(pattern: string, options: GrepPatternOptions = {}): CompiledGrepPattern {
  const maxLength = options.maxPatternLength ?? DEFAULT_MAX_PATTERN_LENGTH;
  const ignoreCase = options.ignoreCase ?? false;
  if (typeof pattern !== 'string' || pattern.length === 0) {
    throw invalid('invalid_pattern', 'pattern must be a non-empty string');
  }
  if (pattern.length > maxLength) {
    throw invalid('pattern_too_long', `pattern is ${pattern.length} characters; the limit is ${maxLength}`, {
      length: pattern.length,
      maxLength,
    });
  }
  const regex = compileRe2(pattern, ignoreCase);
  const test = literalTest(pattern, ignoreCase, regex) ?? ((line: string) => regex.test(line));
  // Window variants are compiled on first use: only lines longer than a window need them.
  const variants = new Map<string, RE2JS>([[pattern, regex]]);
  const variant = (startsLine: boolean, endsLine: boolean) => {
    const source = withoutAnchors(pattern, !startsLine, !endsLine);
    if (!variants.has(source)) variants.set(source, compileRe2(source, ignoreCase));
    return variants.get(source)!;
  };
  return {
    source: pattern,
    ignoreCase,
    test,
    testWindow: (window, startsLine, endsLine) => variant(startsLine, endsLine).test(window),
  };
}

export interface GrepLine {
  line: number;
  text: string;
}

export interface GrepMatch extends GrepLine {
  before: GrepLine[];
  after: GrepLine[];
}

export type GrepStopReason = 'time' | 'bytes' | 'matches';

export interface GrepResult {
  matches: GrepMatch[];
  /** More matches may exist than are returned (same as `partial !== null`). */
  truncated: boolean;
  partial: { reason: GrepStopReason } | null;
  scannedBytes: number;
  scannedLines: number;
  /** Lines longer than one search window, searched window by window (see `GrepOptions.windowChars`). */
  longLines: number;
}

export interface GrepOptions {
  /** Lines of context before and after each match (grep -C). */
  context?: number;
  /** Matches to return; finding one more stops the scan with reason `matches`. */
  limit?: number;
  maxScanBytes?: number;
  /** Time cap, measured with `now` from the scanner's creation. */
  timeLimitMs: number;
  now: () => number;
  /** Returned lines are cut after this many characters. */
  maxLineLength?: number;
  /**
   * A line longer than this (UTF-16 units) is searched in windows of this size
   * overlapping by 1024, so one regex call stays short enough for the time
   * cap. A match there must fit in a window (one of up to 1024 characters
   * always does); `^`/`$` still only hold at the line's ends, but `\b`/`\B`
   * can misjudge a window's first and last character.
   */
  windowChars?: number;
}

export const DEFAULT_GREP_LIMIT = 100;
export const DEFAULT_MAX_SCAN_BYTES = 256 * 1024 * 1024;
export const DEFAULT_WINDOW_CHARS = 64 * 1024;
const WINDOW_OVERLAP = 1024;
/** The clock is read at least this often (in UTF-16 units scanned), so a stop is never late by much. */
const CLOCK_EVERY_CHARS = 16 * 1024;

/** A line as kept for display: its start, and its length in code points when the start is not all of it. */
interface HeldLine {
  line: number;
  text: string;
  chars?: number;
}

export class GrepScanner {
  private readonly context: number;
  private readonly limit: number;
  private readonly maxScanBytes: number;
  private readonly maxLineLength: number;
  private readonly windowChars: number;
  private readonly deadline: number;
  private readonly decoder = utf8Decoder();

  private readonly matches: GrepMatch[] = [];
  private readonly before: HeldLine[] = [];
  private afterLeft = 0;
  private stop: GrepStopReason | null = null;
  private scannedBytes = 0;
  private nextLine = 1;
  private longLines = 0;
  private sinceClock = 0;

  // The line being assembled across pieces; long lines are consumed window by window.
  private current = '';
  private currentMatched = false;
  private currentHead: string | null = null;
  private currentChars = 0;

  constructor(
    private readonly pattern: CompiledGrepPattern,
    private readonly options: GrepOptions,
  ) {
    this.context = options.context ?? 0;
    this.limit = options.limit ?? DEFAULT_GREP_LIMIT;
    this.maxScanBytes = options.maxScanBytes ?? DEFAULT_MAX_SCAN_BYTES;
    this.maxLineLength = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
    this.windowChars = options.windowChars ?? DEFAULT_WINDOW_CHARS;
    if (this.windowChars <= WINDOW_OVERLAP * 2) throw new RangeError(`windowChars must exceed ${WINDOW_OVERLAP * 2}`);
    if (!(this.limit >= 1) || !(this.context >= 0)) throw new RangeError('limit must be >= 1 and context >= 0');
    this.deadline = options.now() + options.timeLimitMs;
  }

  /** Feeds the next piece of the output; false once the scan has stopped and wants no more. */
  push(piece: string | Uint8Array): boolean {
    if (this.stop !== null || this.timeIsUp()) return false;
    const pieceBytes = typeof piece === 'string' ? utf8ByteLength(piece) : piece.byteLength;
    const allowed = this.maxScanBytes - this.scannedBytes;
    const capped = pieceBytes > allowed;
    const text =
      typeof piece === 'string'
        ? piece.slice(0, capped ? utf8PrefixEnd(piece, allowed) : piece.length)
        : this.decoder.decode(capped ? piece.subarray(0, allowed) : piece, { stream: true });
    const scanned = this.scan(text);
    // A stop mid-piece counts only the part scanned (measured on the decoded text).
    this.scannedBytes +=
      scanned === text.length ? Math.min(pieceBytes, allowed) : utf8ByteLength(text.slice(0, scanned));
    if (capped) this.stop ??= 'bytes';
    return this.stop === null;
  }

  /** Ends the scan (the last line needs no newline) and returns what was found. */
  finish(): GrepResult {
    if (this.stop === null) {
      this.scan(this.decoder.decode());
      if (this.stop === null && (this.current !== '' || this.currentHead !== null)) this.endLine();
    }
    const partial = this.stop === null ? null : { reason: this.stop };
    return {
      matches: this.matches,
      truncated: partial !== null,
      partial,
      scannedBytes: this.scannedBytes,
      scannedLines: this.nextLine - 1,
      longLines: this.longLines,
    };
  }

  private timeIsUp(): boolean {
    if (this.options.now() < this.deadline) return false;
    this.stop = 'time';
    return true;
  }

  /** Scans `text` line by line; returns how much of it was scanned before a stop. */
  private scan(text: string): number {
    let start = 0;
    while (this.stop === null && start < text.length) {
      const newline = text.indexOf('\n', start);
      const end = newline === -1 ? text.length : newline;
      if (newline !== -1 && this.current === '' && this.currentHead === null && end - start <= this.windowChars) {
        // The common case, kept lean: a whole line inside this piece.
        const line = text.slice(start, end);
        this.lineDone({ line: this.nextLine, text: line }, this.pattern.test(line));
        this.tick(end - start + 1);
      } else {
        this.appendToLine(text.slice(start, end));
        if (newline === -1) return text.length;
        this.endLine();
      }
      start = end + 1;
    }
    return start;
  }

  private appendToLine(segment: string): void {
    this.current += segment;
    while (this.current.length > this.windowChars && this.stop === null) {
      let end = this.windowChars - WINDOW_OVERLAP;
      if (this.current.charCodeAt(end - 1) >= 0xd800 && this.current.charCodeAt(end - 1) <= 0xdbff) end--;
      const window = this.current.slice(0, this.windowChars);
      if (!this.currentMatched) this.currentMatched = this.pattern.testWindow(window, this.currentHead === null, false);
      this.currentHead ??= window;
      this.currentChars += codePointCount(this.current, 0, end);
      this.current = this.current.slice(end);
      this.tick(window.length);
    }
  }

  /** Ends the line assembled by `appendToLine`. */
  private endLine(): void {
    const long = this.currentHead !== null;
    const matched = long
      ? this.currentMatched || this.pattern.testWindow(this.current, false, true)
      : this.pattern.test(this.current);
    const held: HeldLine = long
      ? { line: this.nextLine, text: this.currentHead!, chars: this.currentChars + codePointCount(this.current) }
      : { line: this.nextLine, text: this.current };
    if (long) this.longLines++;
    const scanned = this.current.length + 1;
    this.current = '';
    this.currentMatched = false;
    this.currentHead = null;
    this.currentChars = 0;
    this.lineDone(held, matched);
    this.tick(scanned);
  }

  /** Every line ends here: it is numbered, and kept if it matched or may be context. */
  private lineDone(held: HeldLine, matched: boolean): void {
    this.nextLine++;
    if (matched) {
      if (this.matches.length === this.limit) {
        this.stop = 'matches';
        return;
      }
      const before = this.before.splice(0).map((line) => this.shown(line));
      this.matches.push({ ...this.shown(held), before, after: [] });
      this.afterLeft = this.context;
    } else if (this.afterLeft > 0) {
      this.matches[this.matches.length - 1].after.push(this.shown(held));
      this.afterLeft--;
    } else if (this.context > 0 && this.matches.length < this.limit) {
      this.before.push(held);
      if (this.before.length > this.context) this.before.shift();
    }
  }

  private shown(held: HeldLine): GrepLine {
    return { line: held.line, text: toDisplayText(cutLongLine(held.text, this.maxLineLength, held.chars)) };
  }

  private tick(chars: number): void {
    this.sinceClock += chars;
    if (this.sinceClock < CLOCK_EVERY_CHARS) return;
    this.sinceClock = 0;
    this.timeIsUp();
  }
}

/** Greps a whole string (tests and small outputs); the service streams chunks through `GrepScanner`. */
export function grepText(text: string, pattern: CompiledGrepPattern, options: GrepOptions): GrepResult {
  const scanner = new GrepScanner(pattern, options);
  scanner.push(text);
  return scanner.finish();
}
