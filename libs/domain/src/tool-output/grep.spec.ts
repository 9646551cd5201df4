import fc from 'fast-check';
import { RE2JS } from 're2js';

import { DomainError } from '../errors';
import { GrepOptions, GrepScanner, compileGrepPattern, grepText } from './grep';

const clock = { timeLimitMs: Infinity, now: () => 0 };
const numbered = (count: number, mark: (n: number) => boolean) =>
  Array.from({ length: count }, (_, i) => (mark(i + 1) ? `hit ${i + 1}` : `row ${i + 1}`)).join('\n') + '\n';

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof DomainError ? error.code : 'not a DomainError';
  }
  return undefined;
}

describe('compileGrepPattern', () => {
  it.each([
    ['[', 'invalid_pattern'],
    ['(a)\\1', 'invalid_pattern'],
    ['(?=a)b', 'invalid_pattern'],
    ['(?<=a)b', 'invalid_pattern'],
    ['(?!a)b', 'invalid_pattern'],
    ['a**', 'invalid_pattern'],
    ['', 'invalid_pattern'],
    ['x'.repeat(513), 'pattern_too_long'],
  ])('rejects %j with %s', (pattern, code) => {
    expect(codeOf(() => compileGrepPattern(pattern))).toBe(code);
  });

  it('accepts RE2 syntax and matches case-insensitively on request', () => {
    expect(compileGrepPattern('err(or)?\\s+\\d+').test('an error  42 here')).toBe(true);
    expect(compileGrepPattern('ERROR').test('error')).toBe(false);
    expect(compileGrepPattern('ERROR', { ignoreCase: true }).test('error')).toBe(true);
    expect(compileGrepPattern('^start$').test('start')).toBe(true);
    expect(codeOf(() => compileGrepPattern('x'.repeat(20), { maxPatternLength: 10 }))).toBe('pattern_too_long');
  });

  it('lets anchors hold in a window only at the ends of the line', () => {
    const cases: Array<[string, string, boolean, boolean, boolean]> = [
      ['b$', 'ab', false, false, false],
      ['b$', 'ab', false, true, true],
      ['^a', 'ab', false, true, false],
      ['\\Aa', 'ab', true, false, true],
      ['a\\$', 'a$', false, false, true], // escaped: a literal dollar
      ['\\Qa$\\E', 'a$', false, false, true],
      ['[$^]', '^', false, false, true], // in a class: literals
      ['[]$]', '$', false, false, true],
      ['[[:alpha:]$]$', 'x', false, false, false],
      ['[[:alpha:]$]$', 'x', false, true, true],
    ];
    for (const [source, window, startsLine, endsLine, expected] of cases) {
      expect([source, compileGrepPattern(source).testWindow(window, startsLine, endsLine)]).toEqual([source, expected]);
    }
  });

  it('answers plain strings like RE2 does, case folding included', () => {
    const unit = fc.constantFrom('s', 'S', 'k', 'K', 'i', 'I', '\u017f', '\u212a', '\u0130', '\u0131', 'é', '-', ' ');
    fc.assert(
      fc.property(fc.string({ unit, minLength: 1, maxLength: 4 }), fc.string({ unit, maxLength: 20 }), fc.boolean(), (literal, line, ignoreCase) => {
        fc.pre(/^[\x00-\x7f]+$/.test(literal));
        const re2 = RE2JS.compile(RE2JS.quote(literal), ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
        expect(compileGrepPattern(literal, { ignoreCase }).test(line)).toBe(re2.test(line));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('GrepScanner', () => {
  it('reports matches with grep -C context, each line once', () => {
    const text = numbered(20, (n) => [5, 7, 15].includes(n));
    const { matches, truncated, partial, scannedLines } = grepText(text, compileGrepPattern('^hit'), { ...clock, context: 2 });
    const lines = (list: { line: number }[]) => list.map((entry) => entry.line);
    expect(matches.map((m) => [lines(m.before), m.line, m.text, lines(m.after)])).toEqual([
      [[3, 4], 5, 'hit 5', [6]],
      [[], 7, 'hit 7', [8, 9]],
      [[13, 14], 15, 'hit 15', [16, 17]],
    ]);
    expect([truncated, partial, scannedLines]).toEqual([false, null, 20]);
  });

  it('stops at the match limit only when another match exists', () => {
    const text = numbered(10, (n) => n % 3 === 0);
    const capped = grepText(text, compileGrepPattern('hit'), { ...clock, limit: 2 });
    expect(capped.matches.map((m) => m.line)).toEqual([3, 6]);
    expect(capped.partial).toEqual({ reason: 'matches' });
    const exact = grepText(text, compileGrepPattern('hit'), { ...clock, limit: 3 });
    expect([exact.matches.length, exact.truncated]).toEqual([3, false]);
  });

  it('stops at the byte cap and says how far it got', () => {
    const text = numbered(100, (n) => n === 90);
    const result = grepText(text, compileGrepPattern('hit'), { ...clock, maxScanBytes: 100 });
    expect(result.matches).toEqual([]);
    expect(result.partial).toEqual({ reason: 'bytes' });
    expect(result.scannedBytes).toBe(100);
  });

  it('stops at its deadline with what it found so far', () => {
    let time = 0;
    const scanner = new GrepScanner(compileGrepPattern('hit'), { timeLimitMs: 10, now: () => time });
    expect(scanner.push(numbered(5, (n) => n === 2))).toBe(true);
    time = 10;
    expect(scanner.push('hit 6\n')).toBe(false);
    const result = scanner.finish();
    expect(result.matches.map((m) => m.line)).toEqual([2]);
    expect([result.partial, result.scannedLines]).toEqual([{ reason: 'time' }, 5]);
  });

  it('finds a match deep inside a line longer than its search window, and shows the line cut', () => {
    const line = 'a'.repeat(150_000) + 'NEEDLE' + 'b'.repeat(50_000);
    const result = grepText(`first\n${line}\nlast`, compileGrepPattern('NEEDLE'), { ...clock, maxLineLength: 10 });
    expect(result.matches.map((m) => [m.line, m.text])).toEqual([[2, 'aaaaaaaaaa… (line truncated: 199996 more chars)']]);
    expect([result.longLines, result.scannedLines]).toEqual([1, 3]);
  });

  it('does not take window edges for line ends in a long line', () => {
    const long = 'a'.repeat(200_000);
    const options = { ...clock };
    expect(grepText(`${long}b\n`, compileGrepPattern('b$'), options).matches.map((m) => m.line)).toEqual([1]);
    expect(grepText(`x${long}\n`, compileGrepPattern('^a'), options).matches).toEqual([]);
    expect(grepText(`${long}!\n`, compileGrepPattern('a$'), options).matches).toEqual([]);
  });

  it('finds in windows what it finds in whole lines, for matches shorter than the overlap', () => {
    const chunk = fc.constantFrom('a', 'b', 'ab', 'x', '$', 'é', 'a'.repeat(700), 'b'.repeat(900));
    const line = fc.array(chunk, { maxLength: 40 }).map((parts) => parts.join(''));
    const source = fc.constantFrom('^a', 'b$', '^ab', 'ab$', 'a.b', '\\Aa', 'b\\z', '[$]', '\\$$', 'xa{3}', '^[^x]*$');
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 4 }), source, (lines, pattern) => {
        const text = lines.join('\n');
        const compiled = compileGrepPattern(pattern);
        const found = (windowChars?: number) =>
          grepText(text, compiled, { ...clock, windowChars, limit: 10 }).matches.map((m) => m.line);
        // '^[^x]*$' spans the whole line, so windows can only see it when the line fits in one.
        const expected = pattern === '^[^x]*$' ? found().filter((n) => lines[n - 1].length <= 2100) : found();
        expect(found(2100)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('shows NUL as U+FFFD and finds it with \\x00', () => {
    const result = grepText('bin\u0000ary\nclean\n', compileGrepPattern('\\x00'), clock);
    expect(result.matches.map((m) => m.text)).toEqual(['bin\uFFFDary']);
  });

  it('gives the same result however the output is cut into pieces, even inside code points', () => {
    const unit = fc.constantFrom('a', 'b', 'é', '😀', '\n', '\n');
    fc.assert(
      fc.property(
        fc.string({ unit, maxLength: 300 }),
        fc.constantFrom('a', 'é', '^b', '😀$', 'ab|ba', '[^a]é'),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.nat(3),
        (text, source, cuts, context) => {
          const pattern = compileGrepPattern(source);
          const options: GrepOptions = { ...clock, context, limit: 5 };
          const bytes = Buffer.from(text);
          const offsets = [...new Set(cuts.map((cut) => cut % (bytes.length + 1))), bytes.length].sort((a, b) => a - b);
          const scanner = new GrepScanner(pattern, options);
          offsets.forEach((end, i) => scanner.push(bytes.subarray(i === 0 ? 0 : offsets[i - 1], end)));
          expect(scanner.finish()).toEqual(grepText(text, pattern, options));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('runs catastrophic patterns in linear time', () => {
    const manyLines = ('a'.repeat(99) + '!\n').repeat(100_000); // 10 MB
    const oneLine = 'a'.repeat(10_000_000) + '!';
    for (const text of [manyLines, oneLine]) {
      const started = Date.now();
      const result = grepText(text, compileGrepPattern('(a+)+$'), { timeLimitMs: 10_000, now: Date.now });
      expect(result.matches).toEqual([]);
      expect(result.partial).toBeNull();
      expect(Date.now() - started).toBeLessThan(3000);
    }
  });

  it('reads the clock while scanning one big piece, so a slow pattern cannot overrun its limit', () => {
    let reads = 0;
    const text = ('x'.repeat(60_000) + '\n').repeat(100);
    const result = grepText(text, compileGrepPattern('(.{300}x){3}\\d'), { timeLimitMs: 10, now: () => reads++ });
    expect(result.partial).toEqual({ reason: 'time' });
    // The clock is read at least every 16 Ki characters, here once a line: ten reads, under ten lines.
    expect(result.scannedLines).toBeLessThan(10);
    expect(result.scannedBytes).toBe(result.scannedLines * 60_001);
  });
});
