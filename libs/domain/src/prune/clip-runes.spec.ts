import fc from 'fast-check';
import { clipEach, clipNewest, clipRunes } from './clip-runes';

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

describe('clipNewest', () => {
  const omitted = (count: number) => `[${count} omitted]`;

  it('is clipEach while every block can keep its minimum', () => {
    const blocks = ['short', 'x'.repeat(1_000), 'y'.repeat(1_000)];
    expect(clipNewest(blocks, 105, '\n', 30, omitted)).toBe(clipEach(blocks, 105, '\n'));
  });

  it('keeps blocks that fit whole, however many', () => {
    const blocks = Array.from({ length: 50 }, (_, i) => `b${i}`);
    expect(clipNewest(blocks, 1_000, '\n', 80, omitted)).toBe(blocks.join('\n'));
  });

  it('lists the newest blocks with their minimum and counts the older ones', () => {
    const blocks = Array.from({ length: 990 }, (_, i) => `block ${i} `.padEnd(2_000, 'z'));
    const joined = clipNewest(blocks, 800, '\n', 80, omitted);
    const lines = joined.split('\n');
    // 9 blocks of at least 80 runes, their separators and the note fit in 800.
    expect(lines[0]).toBe('[981 omitted]');
    expect(lines).toHaveLength(10);
    expect(lines[1]).toMatch(/^block 981 /);
    expect(lines[9]).toMatch(/^block 989 /);
    expect(lines.slice(1).every((line) => runes(line).length >= 80)).toBe(true);
    expect(runes(joined).length).toBeLessThanOrEqual(800);
  });

  it('stays within the limit for any number of blocks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 300 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 20, max: 2_000 }),
        fc.integer({ min: 1, max: 200 }),
        (blocks, max, min) => {
          expect(runes(clipNewest(blocks, max, '\n\n', min, omitted)).length).toBeLessThanOrEqual(max);
        },
      ),
      { numRuns: 300 },
    );
  });
});
