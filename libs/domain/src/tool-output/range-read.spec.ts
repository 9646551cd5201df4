import fc from 'fast-check';

import { chunksForLineRange, linesInRange, OutputChunk, splitIntoChunks } from './chunking';
import { cutLongLine } from './line-format';
import { chunksNeedingBytes, LineRangeCollector, shownRangeLines } from './range-read';

/** What the store does: the range's chunks, bytes only where needed, fed in order. */
function read(chunks: OutputChunk[], offset: number, limit: number, maxLineLength: number, maxBytes?: number) {
  const range = chunksForLineRange(chunks, offset, limit);
  const needed = chunksNeedingBytes(range, maxLineLength);
  const collector = new LineRangeCollector(offset, limit, maxLineLength, maxBytes);
  let pushed = 0;
  for (const [i, chunk] of range.entries()) {
    pushed++;
    if (!collector.push(chunk, needed[i] ? chunk.bytes : null)) break;
  }
  return { lines: collector.finish(), fetched: range.filter((_, i) => needed[i] && i < pushed).length, range };
}

describe('chunksNeedingBytes', () => {
  it('skips the middle of a long line once its start is fetched', () => {
    // Line 1 is 40 bytes over chunks of 8: the start chunk, one inside chunk (4 * 2 = 8 bytes), then skips.
    const chunks = splitIntoChunks(Buffer.from(`${'x'.repeat(40)}\nshort\n`), { targetBytes: 8 });
    const needed = chunksNeedingBytes(chunks, 2);
    expect(chunks.map((c) => [c.firstLine, c.lineCount])).toEqual([
      [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 2],
    ]);
    expect(needed).toEqual([true, true, false, false, false, true]);
  });

  it('fetches every chunk of ordinary lines', () => {
    const chunks = splitIntoChunks(Buffer.from('a\nbb\nccc\ndddd\n'.repeat(20)), { targetBytes: 16 });
    expect(chunksNeedingBytes(chunks, 2000).every(Boolean)).toBe(true);
  });
});

describe('LineRangeCollector', () => {
  it('reads a 1 MB single line by its ends: the start shown, the rest counted', () => {
    const output = `head\n${'y'.repeat(1 << 20)}\ntail`;
    const chunks = splitIntoChunks(Buffer.from(output), { targetBytes: 4096 });
    const { lines, fetched, range } = read(chunks, 2, 2, 100);
    expect(range.length).toBeGreaterThan(250);
    expect(fetched).toBeLessThan(5);
    expect(shownRangeLines(lines, 100)).toEqual([cutLongLine('y'.repeat(1 << 20), 100), 'tail']);
    expect(lines.map((l) => l.line)).toEqual([2, 3]);
  });

  it('stops once the shown lines reach maxBytes', () => {
    const chunks = splitIntoChunks(Buffer.from('0123456789\n'.repeat(100)), { targetBytes: 32 });
    const { lines, fetched, range } = read(chunks, 1, 100, 2000, 55);
    expect(lines).toHaveLength(5);
    expect(fetched).toBeLessThan(range.length);
  });

  it('returns nothing past the end', () => {
    const chunks = splitIntoChunks(Buffer.from('a\nb\n'));
    expect(read(chunks, 3, 10, 2000).lines).toEqual([]);
  });

  const unit = fc.constantFrom('a', 'b', ' ', '\n', '\n', 'é', '😀');
  const longish = fc.oneof(
    fc.string({ unit, maxLength: 300 }),
    fc.tuple(fc.string({ unit, maxLength: 30 }), fc.nat(400), fc.string({ unit, maxLength: 30 })).map(
      ([a, n, b]) => `${a}${'é'.repeat(n)}${b}`,
    ),
  );

  it('shows what a whole read shows; counts are exact unless a chunk was skipped', () => {
    fc.assert(
      fc.property(
        longish,
        fc.integer({ min: 4, max: 48 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 30 }),
        (output, targetBytes, offset, limit, maxLineLength) => {
          const chunks = splitIntoChunks(Buffer.from(output), { targetBytes, maxLines: 5 });
          const { lines } = read(chunks, offset, limit, maxLineLength);
          const whole = linesInRange(chunksForLineRange(chunks, offset, limit), offset, limit);
          expect(lines.map((l) => l.line)).toEqual(whole.map((_, i) => offset + i));
          const skipped = chunksNeedingBytes(chunksForLineRange(chunks, offset, limit), maxLineLength).includes(false);
          lines.forEach((line, i) => {
            const expected = cutLongLine(whole[i], maxLineLength);
            const shown = cutLongLine(line.text, maxLineLength, line.chars);
            if (!skipped) expect(shown).toBe(expected);
            // A skipped chunk counts bytes as code points: the same start, at least as many chars.
            expect(shown.slice(0, 8)).toBe(expected.slice(0, 8));
            expect(line.chars).toBeGreaterThanOrEqual([...whole[i]].length);
          });
        },
      ),
    );
  });
});
