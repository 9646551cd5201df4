import fc from 'fast-check';

import { formattedTruncateText, policyByteBudget, totalLinesHeader } from './codex-truncation';
import {
  ToolOutputViewConfig,
  VIEW_OVERHEAD_LINES,
  buildInContextView,
  buildInContextViewFromParts,
  closingNote,
  viewOverheadBytes,
  viewWindowBytes,
} from './in-context-view';
import { ViewPartsCollector, decodeOutputParts } from './view-parts';
import { countLines, utf8ByteLength, utf8PrefixEnd, utf8SuffixStart } from './utf8';

const REF = 'out_01HZX';
const numbered = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
const note = (text: string, nextLine: number) => closingNote(REF, countLines(text), utf8ByteLength(text), nextLine);
/** Codex with none of our own limits. */
const CODEX_ONLY = { maxLines: 0, maxLineLength: 0, maxMessageBytes: 0 };

describe('buildInContextView', () => {
  it('leaves an output within every limit unchanged', () => {
    expect(buildInContextView('short output\n', REF)).toEqual({ view: 'short output\n', truncated: false });
    expect(buildInContextView('', REF)).toEqual({ view: '', truncated: false });
  });

  it('keeps the first and last lines past maxLines, the marker on a line of its own', () => {
    const text = numbered(10);
    const { view, truncated } = buildInContextView(text, REF, { maxLines: 4 });
    expect(truncated).toBe(true);
    expect(view).toBe(
      'Total output lines: 10\n\nline 1\nline 2\n…11 tokens truncated…\nline 9\nline 10\n\n' + note(text, 3),
    );
  });

  it('keeps only the head in head mode', () => {
    const text = numbered(10);
    expect(buildInContextView(text, REF, { maxLines: 3, mode: 'head' }).view).toBe(
      'Total output lines: 10\n\nline 1\nline 2\nline 3\n…13 tokens truncated…\n\n' + note(text, 4),
    );
  });

  it('cuts long lines and says so, with the header and note even when nothing else is cut', () => {
    const text = `${'x'.repeat(30)}\nshort\n`;
    expect(buildInContextView(text, REF, { maxLineLength: 10 }).view).toBe(
      'Total output lines: 2\n\nxxxxxxxxxx… (line truncated: 20 more chars)\nshort\n\n' + note(text, 1),
    );
  });

  it('splits the byte budget 50/50 on code point boundaries, counting chars under a byte policy', () => {
    const text = 'αβγδεζηθικλμνξοπρστυφχψω'; // 24 two-byte letters
    const { view } = buildInContextView(text, REF, { ...CODEX_ONLY, truncation: { bytes: 11 } });
    // The head's 5 bytes hold two letters, the tail's 6 three; 19 letters go.
    expect(view).toBe('Total output lines: 1\n\nαβ…19 chars truncated…χψω\n\n' + note(text, 1));
  });

  it('is Codex formatted_truncate_text plus the note when only a Codex policy applies', () => {
    const long = 'this is an example of a long output that should be truncated';
    expect(buildInContextView(long, REF, { ...CODEX_ONLY, truncation: { tokens: 5 } }).view).toBe(
      'Total output lines: 1\n\nthis is an…10 tokens truncated… truncated\n\n' + note(long, 1),
    );
    const ascii = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n'), maxLength: 300 });
    const policy = fc.oneof(fc.record({ bytes: fc.nat(120) }), fc.record({ tokens: fc.nat(30) }));
    fc.assert(
      fc.property(ascii, policy, (text, truncation) => {
        const codex = formattedTruncateText(text, truncation);
        const { view, truncated } = buildInContextView(text, REF, { ...CODEX_ONLY, truncation });
        if (!truncated) return expect(view).toBe(codex);
        // The note points at the first line the kept head does not finish.
        const head = codex.slice(totalLinesHeader(countLines(text)).length, codex.indexOf('…'));
        const nextLine = (head.match(/\n/g)?.length ?? 0) + 1;
        expect(view).toBe(codex + (codex.endsWith('\n') ? '\n' : '\n\n') + note(text, nextLine));
      }),
      { numRuns: 1000 },
    );
  });

  it('shows NUL as U+FFFD so the view fits in jsonb', () => {
    expect(buildInContextView('a\u0000b', REF).view).toBe('a\uFFFDb');
  });

  it('returns the whole output when disabled', () => {
    const text = numbered(5000);
    expect(buildInContextView(text, REF, { enabled: false })).toEqual({ view: text, truncated: false });
  });

  it('reads only the ends of a very large output', () => {
    const text = 'x'.repeat(80) + '\n'.repeat(1) + 'log line with some text\n'.repeat(1_000_000); // ~24 MB
    const started = Date.now();
    const { view } = buildInContextView(text, REF);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(utf8ByteLength(view)).toBeLessThanOrEqual(50 * 1024 + viewOverheadBytes(REF));
    expect(view.startsWith('Total output lines: 1000001\n\n' + 'x'.repeat(80) + '\n')).toBe(true);
  });
});

describe('buildInContextViewFromParts', () => {
  it('shows binary bytes safely: invalid UTF-8 decodes to U+FFFD, split code points are dropped', () => {
    const bytes = Buffer.concat([Buffer.from('ok\n'), Buffer.from([0xff, 0xfe, 0x00]), Buffer.from('\n€end\n')]);
    const parts = decodeOutputParts({ head: bytes, tail: null, totalBytes: bytes.length, totalLines: 3 });
    expect(buildInContextViewFromParts(parts, REF).view).toBe('ok\n\uFFFD\uFFFD\uFFFD\n€end\n');

    const euro = Buffer.from('€€€€'); // cut after one byte of the 2nd euro and before the last byte of the 3rd
    const split = decodeOutputParts({ head: euro.subarray(0, 4), tail: euro.subarray(8), totalBytes: 12, totalLines: 1 });
    expect([split.head, split.tail]).toEqual(['€', '€']);
  });

  it('takes a whole line from an unknown middle only as the middle marker', () => {
    const view = buildInContextViewFromParts(
      { head: 'first\nsecond li', tail: 'ne ends\nlast\n', totalBytes: 1000, totalLines: 40 },
      REF,
      { maxMessageBytes: 100 },
    ).view;
    // The head's open line shows its known start; the tail's first (partial) line is left to the marker.
    expect(view).toContain('first\nsecond li…');
    expect(view).toMatch(/…\d+ tokens truncated…last\n/);
  });

  it('rejects a partial output when the view is disabled', () => {
    expect(() =>
      buildInContextViewFromParts({ head: 'a', tail: 'b', totalBytes: 10, totalLines: 1 }, REF, { enabled: false }),
    ).toThrow(RangeError);
  });
});

// Property tests: caps, code points, and the streaming path.

const pieceOf = fc.constantFrom('a', 'b', ' ', 'é', '中', '😀', '\t', '\r');
const line = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: pieceOf, maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: pieceOf, minLength: 100, maxLength: 3000 }) },
);
const output = fc
  .tuple(fc.array(line, { maxLength: 60 }), fc.boolean())
  .map(([lines, trailingNewline]) => lines.join('\n') + (trailingNewline && lines.length > 0 ? '\n' : ''));
const config: fc.Arbitrary<Partial<ToolOutputViewConfig>> = fc.record(
  {
    maxLineLength: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 }), fc.constant(2000)),
    maxMessageBytes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 600 })),
    maxLines: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20 })),
    mode: fc.constantFrom('head' as const, 'head_tail' as const),
    truncation: fc.oneof(fc.record({ bytes: fc.nat(800) }), fc.record({ tokens: fc.nat(200) })),
  },
  { requiredKeys: ['maxLineLength', 'maxMessageBytes', 'maxLines', 'mode'] },
);

/** The output kept in a truncated view, head and tail: without header, note, and the middle marker with its line. */
function keptContent(view: string, text: string): string[] {
  const header = totalLinesHeader(countLines(text));
  expect(view.startsWith(header)).toBe(true);
  const body = view.slice(header.length, view.lastIndexOf('[Output truncated: ')).replace(/\n?\n$/, '');
  return body.split(/…\d+ (?:tokens|chars) truncated…\n?/);
}

function checkCaps(text: string, cfg: Partial<ToolOutputViewConfig>, view: string, truncated: boolean): void {
  // Valid text in, valid text out: nothing split, no replacement characters introduced.
  expect(Buffer.from(view, 'utf8').toString('utf8')).toBe(view);
  expect(view.includes('\uFFFD')).toBe(false);
  if (!truncated) {
    expect(view).toBe(text);
    return;
  }
  const budget = Math.min(cfg.maxMessageBytes || Infinity, cfg.truncation ? policyByteBudget(cfg.truncation) : Infinity);
  const kept = keptContent(view, text);
  expect(kept.length).toBeLessThanOrEqual(2);
  expect(utf8ByteLength(kept.join(''))).toBeLessThanOrEqual(budget);
  expect(utf8ByteLength(view)).toBeLessThanOrEqual(budget + viewOverheadBytes(REF));
  if (cfg.maxLines) expect(countLines(view)).toBeLessThanOrEqual(cfg.maxLines + VIEW_OVERHEAD_LINES);
  if (cfg.maxLineLength) {
    for (const shown of kept.flatMap((part) => part.split('\n'))) {
      const content = shown.replace(/… \(line truncated: \d+ more chars\)$/, '');
      expect([...content].length).toBeLessThanOrEqual(cfg.maxLineLength);
    }
  }
}

describe('in-context view properties', () => {
  it('never exceeds its byte and line caps and never splits a code point', () => {
    fc.assert(
      fc.property(output, config, (text, cfg) => {
        const { view, truncated } = buildInContextView(text, REF, cfg);
        checkCaps(text, cfg, view, truncated);
      }),
      { numRuns: 1500 },
    );
  });

  it('keeps its caps from any pair of ends, however small', () => {
    fc.assert(
      fc.property(output, config, fc.nat(400), fc.nat(400), (text, cfg, headBytes, tailBytes) => {
        fc.pre(utf8ByteLength(text) > headBytes + tailBytes);
        const parts = {
          head: text.slice(0, utf8PrefixEnd(text, headBytes)),
          tail: text.slice(utf8SuffixStart(text, tailBytes)),
          totalBytes: utf8ByteLength(text),
          totalLines: countLines(text),
        };
        const { view, truncated } = buildInContextViewFromParts(parts, REF, cfg);
        expect(truncated).toBe(true);
        checkCaps(text, cfg, view, truncated);
      }),
      { numRuns: 1000 },
    );
  });

  it('gives the same view from streamed pieces as from the whole string', () => {
    fc.assert(
      fc.property(output, config, fc.array(fc.nat(), { maxLength: 8 }), (text, cfg, cuts) => {
        const bytes = Buffer.from(text);
        const offsets = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
        const collector = new ViewPartsCollector(cfg);
        let at = 0;
        for (const offset of [...offsets, bytes.length]) {
          collector.push(bytes.subarray(at, offset));
          at = offset;
        }
        expect(buildInContextViewFromParts(collector.finish(), REF, cfg)).toEqual(buildInContextView(text, REF, cfg));
      }),
      { numRuns: 1000 },
    );
  });

  it('asks for finite windows whenever a byte budget exists', () => {
    expect(viewWindowBytes()).toEqual({ head: 25 * 1024 + 3, tail: 25 * 1024 + 3 + 8001 });
    expect(viewWindowBytes({ maxMessageBytes: 0, maxLines: 0 }).head).toBe(Infinity);
    expect(viewWindowBytes({ enabled: false })).toEqual({ head: Infinity, tail: Infinity });
  });
});
