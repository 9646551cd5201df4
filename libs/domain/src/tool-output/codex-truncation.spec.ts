import fc from 'fast-check';

import { formattedTruncateText, splitHeadTail, truncateText } from './codex-truncation';
import { utf8ByteLength } from './utf8';

const LONG = 'this is an example of a long output that should be truncated';
const TWO_LINES = `${LONG}\nalso some other line`;

describe('Codex truncation vectors (codex-rs/core/src/truncate.rs), byte for byte', () => {
  it.each([
    ['short output', { tokens: 100 }, 'short output'],
    ['abcdef', { tokens: 0 }, '…2 tokens truncated…'],
    // Codex's own UTF-8 tests.
    ['😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n', { tokens: 8 }, '😀😀😀😀…8 tokens truncated… line with text\n'],
    ['😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n', { bytes: 20 }, '😀😀…21 chars truncated…with text\n'],
  ] as const)('truncateText(%j, %j)', (text, policy, expected) => {
    expect(truncateText(text, policy)).toBe(expected);
  });

  it.each([
    ['example output', { bytes: 1 }, 'Total output lines: 1\n\n…13 chars truncated…t'],
    ['example output', { tokens: 1 }, 'Total output lines: 1\n\nex…3 tokens truncated…ut'],
    ['example output', { tokens: 10 }, 'example output'],
    ['example output', { bytes: 20 }, 'example output'],
    [LONG, { tokens: 5 }, 'Total output lines: 1\n\nthis is an…10 tokens truncated… truncated'],
    [LONG, { bytes: 30 }, 'Total output lines: 1\n\nthis is an exam…30 chars truncated…ld be truncated'],
    [TWO_LINES, { bytes: 30 }, 'Total output lines: 2\n\nthis is an exam…51 chars truncated…some other line'],
    [TWO_LINES, { tokens: 10 }, 'Total output lines: 2\n\nthis is an example o…11 tokens truncated…also some other line'],
  ] as const)('formattedTruncateText(%j, %j)', (text, policy, expected) => {
    expect(formattedTruncateText(text, policy)).toBe(expected);
  });

  it('splits like split_string, never inside a code point', () => {
    const cases: Array<[string, number, number, string, string]> = [
      ['hello world', 5, 5, 'hello', 'world'],
      ['abc', 0, 0, '', ''],
      ['abcdef', 3, 0, 'abc', ''],
      ['abcdef', 0, 3, '', 'def'],
      ['abcdef', 4, 4, 'abcd', 'ef'],
      ['😀abc😀', 5, 5, '😀a', 'c😀'],
      ['😀😀😀😀😀', 1, 1, '', ''],
      ['😀😀😀😀😀', 7, 7, '😀', '😀'],
      ['😀😀😀😀😀', 8, 8, '😀😀', '😀😀'],
    ];
    for (const [text, head, tail, before, after] of cases) {
      const { headEnd, tailStart } = splitHeadTail(text, head, tail);
      expect([text.slice(0, headEnd), text.slice(tailStart)]).toEqual([before, after]);
    }
  });

  it('keeps to its budget plus the marker and never splits a code point', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.oneof(fc.record({ bytes: fc.nat(300) }), fc.record({ tokens: fc.nat(80) })),
        (text, policy) => {
          const out = truncateText(text, policy);
          const budget = 'bytes' in policy ? policy.bytes : policy.tokens * 4;
          const marker = out.match(/…\d+ (chars|tokens) truncated…/)?.[0] ?? '';
          expect(utf8ByteLength(out) - utf8ByteLength(marker)).toBeLessThanOrEqual(Math.max(budget, 0));
          expect(Buffer.from(out).toString()).toBe(out);
          if (utf8ByteLength(text) <= budget && budget > 0) expect(out).toBe(text);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
