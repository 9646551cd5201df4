import { compileGrepPattern, grepText } from './grep';
import { formatNumberedLines } from './line-format';
import { formatGrepResultText, formatReadResultText } from './result-text';

const clock = { timeLimitMs: Infinity, now: () => 0 };

describe('formatNumberedLines', () => {
  it('numbers lines like cat -n and cuts long ones', () => {
    expect(formatNumberedLines(['alpha', '', 'x'.repeat(12)], 9, 10)).toBe(
      '     9\talpha\n    10\t\n    11\txxxxxxxxxx… (line truncated: 2 more chars)',
    );
    expect(formatNumberedLines(['a\u0000b'], 1_234_567)).toBe('1234567\ta\uFFFDb');
  });
});

describe('formatReadResultText', () => {
  it('adds a footer with the next offset, or the end', () => {
    expect(formatReadResultText({ offset: 3, lines: ['c', 'd'], totalLines: 10 })).toEqual({
      text: '     3\tc\n     4\td\n\n(showing lines 3-4 of 10; next offset 5)',
      nextOffset: 5,
    });
    expect(formatReadResultText({ offset: 9, lines: ['i', 'j'], totalLines: 10 }).text).toMatch(
      /\(showing lines 9-10 of 10; end of output\)$/,
    );
  });

  it('stops early at its byte cap and points past what it showed', () => {
    const lines = Array.from({ length: 100 }, () => 'y'.repeat(90));
    const { text, nextOffset } = formatReadResultText({ offset: 1, lines, totalLines: 500 }, { maxBytes: 1000 });
    expect(nextOffset).toBe(11);
    expect(text.endsWith('(showing lines 1-10 of 500; next offset 11)')).toBe(true);
  });

  it('explains an empty output and an offset past the end', () => {
    expect(formatReadResultText({ offset: 1, lines: [], totalLines: 0 })).toEqual({
      text: '(the output is empty)',
      nextOffset: null,
    });
    expect(formatReadResultText({ offset: 50, lines: [], totalLines: 10 }).text).toBe(
      '(no lines at offset 50: the output has 10 lines)',
    );
  });
});

describe('formatGrepResultText', () => {
  const errors = [5, 6, 20];
  const text = Array.from({ length: 30 }, (_, i) => (errors.includes(i + 1) ? `ERROR ${i + 1}` : `ok ${i + 1}`)).join('\n');

  it('prints grep -n -C groups separated by --', () => {
    const result = grepText(text, compileGrepPattern('error', { ignoreCase: true }), { ...clock, context: 1 });
    expect(formatGrepResultText(result, { pattern: 'error', ignoreCase: true })).toBe(
      [
        ...['4-ok 4', '5:ERROR 5', '6:ERROR 6', '7-ok 7', '--', '19-ok 19', '20:ERROR 20', '21-ok 21'],
        '',
        '(3 matches for /error/i in 30 lines)',
      ].join('\n'),
    );
  });

  it('says when the result is partial, and when nothing matched', () => {
    const capped = grepText(text, compileGrepPattern('ERROR'), { ...clock, limit: 1 });
    expect(formatGrepResultText(capped, { pattern: 'ERROR' })).toBe(
      '5:ERROR 5\n\n(showing the first 1 match for /ERROR/; there are more: narrow the pattern or raise limit)',
    );
    const none = grepText(text, compileGrepPattern('panic'), clock);
    expect(formatGrepResultText(none, { pattern: 'panic' })).toBe('(0 matches for /panic/ in 30 lines)');
    const late = grepText(text, compileGrepPattern('ERROR'), { timeLimitMs: 0, now: () => 0 });
    expect(formatGrepResultText(late, { pattern: 'ERROR' })).toMatch(/time limit after 0 lines, 0 bytes; 0 matches so far/);
  });

  it('keeps to its byte cap', () => {
    const many = grepText(text, compileGrepPattern('ok'), clock);
    const out = formatGrepResultText(many, { pattern: 'ok', maxBytes: 40 });
    expect(out).toContain('(output cut at 40 bytes: 5 of 27 matches shown; lower limit or context)');
  });
});
