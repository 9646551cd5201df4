import fc from 'fast-check';

import { ChunkSplitter, chunksForLineRange, linesInRange, splitIntoChunks } from './chunking';
import { countLines } from './utf8';

const linesOf = (output: string) => {
  const lines = output.split('\n');
  if (output.endsWith('\n')) lines.pop();
  return output === '' ? [] : lines;
};

describe('splitIntoChunks', () => {
  it('ends chunks on line boundaries and numbers their first lines', () => {
    const chunks = splitIntoChunks(Buffer.from('aaa\nbbb\nccc\nddd\n'), { targetBytes: 9 });
    expect(chunks.map(({ bytes, ...meta }) => ({ ...meta, text: Buffer.from(bytes).toString() }))).toEqual([
      { index: 0, firstLine: 1, lineCount: 2, byteOffset: 0, byteLength: 8, text: 'aaa\nbbb\n' },
      { index: 1, firstLine: 3, lineCount: 2, byteOffset: 8, byteLength: 8, text: 'ccc\nddd\n' },
    ]);
  });

  it('splits a line longer than a chunk at code point boundaries, continuing its line number', () => {
    const chunks = splitIntoChunks(Buffer.from('€€€€€\nz'), { targetBytes: 8 });
    expect(chunks.map((chunk) => [Buffer.from(chunk.bytes).toString(), chunk.firstLine, chunk.lineCount])).toEqual([
      ['€€', 1, 1],
      ['€€', 1, 1],
      ['€\nz', 1, 2],
    ]);
  });

  it('closes a chunk after maxLines lines', () => {
    const chunks = splitIntoChunks(Buffer.from('1\n2\n3\n4\n5\n'), { maxLines: 2 });
    expect(chunks.map((chunk) => [chunk.firstLine, chunk.lineCount])).toEqual([
      [1, 2],
      [3, 2],
      [5, 1],
    ]);
  });

  it('reports totals like countLines', () => {
    const splitter = new ChunkSplitter({ targetBytes: 4 });
    for (const piece of ['ab', 'c\nde', '', 'f']) splitter.push(Buffer.from(piece));
    splitter.end();
    expect(splitter.totals).toEqual({ byteSize: 7, lineCount: 2 });
    expect(splitIntoChunks(Buffer.alloc(0))).toEqual([]);
  });
});

const unit = fc.constantFrom('a', 'b', '\n', '\n', 'é', '😀');
const outputs = fc.string({ unit, maxLength: 400 });
const splitOptions = fc.record({ targetBytes: fc.integer({ min: 4, max: 64 }), maxLines: fc.integer({ min: 1, max: 8 }) });
/** Arbitrary piece boundaries, including ones inside code points. */
function pieces(bytes: Buffer, cuts: number[]): Buffer[] {
  const offsets = [...new Set(cuts.map((cut) => cut % (bytes.length + 1))), bytes.length].sort((a, b) => a - b);
  return offsets.map((end, i) => bytes.subarray(i === 0 ? 0 : offsets[i - 1], end));
}

describe('chunk properties', () => {
  it('concatenated chunks are the input, within size, numbered consistently', () => {
    fc.assert(
      fc.property(outputs, splitOptions, fc.array(fc.nat(), { maxLength: 6 }), (output, options, cuts) => {
        const bytes = Buffer.from(output);
        const chunks = splitIntoChunks(pieces(bytes, cuts), options);
        expect(Buffer.concat(chunks.map((chunk) => chunk.bytes)).equals(bytes)).toBe(true);
        let line = 1;
        let offset = 0;
        for (const chunk of chunks) {
          const newlines = chunk.bytes.filter((byte) => byte === 0x0a).length;
          expect(chunk.byteLength).toBeGreaterThan(0);
          expect(chunk.byteLength).toBeLessThanOrEqual(options.targetBytes);
          expect(newlines).toBeLessThanOrEqual(options.maxLines);
          expect([chunk.firstLine, chunk.byteOffset]).toEqual([line, offset]);
          // Each chunk decodes on its own unless a run of bytes gave it no choice.
          if (!chunk.bytes.includes(0x0a) || chunk.bytes[chunk.byteLength - 1] === 0x0a) {
            expect(Buffer.from(chunk.bytes).toString().includes('\uFFFD')).toBe(false);
          }
          line += newlines;
          offset += chunk.byteLength;
        }
        const last = chunks[chunks.length - 1];
        expect(last ? last.firstLine + last.lineCount - 1 : 0).toBe(countLines(output));
      }),
      { numRuns: 1000 },
    );
  });

  it('chunksForLineRange picks exactly the chunks holding the range, which yield exactly its lines', () => {
    fc.assert(
      fc.property(outputs, splitOptions, fc.integer({ min: 1, max: 120 }), fc.nat(40), (output, options, offset, limit) => {
        const chunks = splitIntoChunks(Buffer.from(output), options);
        const chosen = chunksForLineRange(chunks, offset, limit);
        const last = offset + limit - 1;
        expect(chosen).toEqual(chunks.filter((c) => limit > 0 && c.firstLine <= last && c.firstLine + c.lineCount - 1 >= offset));
        expect(linesInRange(chosen, offset, limit)).toEqual(linesOf(output).slice(offset - 1, offset - 1 + limit));
      }),
      { numRuns: 1000 },
    );
  });

  it('reads a range from a big output without touching the rest', () => {
    const big = Buffer.from(Array.from({ length: 200_000 }, (_, i) => `row ${i + 1}`).join('\n'));
    const chunks = splitIntoChunks(big);
    const near = chunksForLineRange(chunks, 199_950, 100);
    expect(near.length).toBeLessThanOrEqual(2);
    expect(linesInRange(near, 199_950, 100)).toEqual(Array.from({ length: 51 }, (_, i) => `row ${199_950 + i}`));
    expect(chunksForLineRange(chunks, 300_000, 10)).toEqual([]);
  });
});
