import fc from 'fast-check';
import { clipEach, clipRunes } from './clip-runes';

const runes = (text: string) => Array.from(text);

describe('clipRunes', () => {
  it('returns text within the limit unchanged', () => {
    expect(clipRunes('short', 5)).toBe('short');
    expect(clipRunes('😀😀', 2)).toBe('😀😀');
  });

  it('keeps two thirds head and one third tail, marker included in the limit', () => {
    // 40 - "…70 chars truncated…".length (20) = 20 kept: 14 head, 6 tail
    const text = 'a'.repeat(45) + 'b'.repeat(45);
    expect(clipRunes(text, 40)).toBe('a'.repeat(14) + '…70 chars truncated…' + 'b'.repeat(6));
  });

  it('keeps only the head when the limit is below the marker length', () => {
    expect(clipRunes('abcdefghijklmnopqrstuvwxyz', 5)).toBe('abcde');
  });

  it('never exceeds the limit nor splits a code point', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.nat(120), (text, max) => {
        const clipped = clipRunes(text, max);
        expect(runes(clipped).length).toBeLessThanOrEqual(Math.max(max, 0));
        expect(clipped).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
        if (runes(text).length <= max) expect(clipped).toBe(text);
      }),
      { numRuns: 500 },
    );
  });
});

describe('clipEach', () => {
  it('lets short blocks keep everything and the long ones share the rest', () => {
    const joined = clipEach(['short', 'x'.repeat(1_000), 'y'.repeat(1_000)], 105, '\n');
    const [short, xs, ys] = joined.split('\n');

    // 103 runes after separators: 5 for 'short', 49 each for the others (an even split would give 34)
    expect(short).toBe('short');
    expect(runes(xs).length).toBeGreaterThan(34);
    expect(runes(ys).length).toBe(runes(xs).length);
    expect(runes(joined).length).toBeLessThanOrEqual(105);
  });

  it('stays within the limit', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 300 }), { minLength: 1, maxLength: 8 }), fc.integer({ min: 20, max: 400 }), (blocks, max) => {
        expect(runes(clipEach(blocks, max, '\n\n')).length).toBeLessThanOrEqual(max);
      }),
      { numRuns: 500 },
    );
  });
});
