import { createHash } from 'node:crypto';

import { given } from '../testing/given';
import { splitIntoChunks } from './chunking';
import { buildInContextView, ToolOutputViewConfig } from './in-context-view';
import { assertInlineOutput, INLINE_OUTPUT_MAX_BYTES, inlineOutputIn, inlineOutputRef, outputPlacement } from './inline-output';

const REF = 'out_0123456789abcdefghijkl';
const lines = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1} ünïcödé`).join('\n');
/** The placement of `output` under the view config, as the append decides it. */
const placed = (config: Partial<ToolOutputViewConfig>) => (output: string) => outputPlacement(output, buildInContextView(output, REF, config));

describe('outputPlacement', () => {
  it('keeps inline an output its view shows whole', () => {
    given(lines(100)).when(placed({})).then('inline');
  });

  it('keeps inline the empty output', () => {
    given('').when(placed({})).then('inline');
  });

  it('stores an output its view truncates', () => {
    given(lines(3000)).when(placed({})).then('stored');
  });

  it('stores an output whose view cuts a long line, though it is short in bytes', () => {
    given(`short\n${'x'.repeat(3000)}\n`).when(placed({ maxLineLength: 2000 })).then('stored');
  });

  it('stores an output shown otherwise than sent (characters the view replaces)', () => {
    given('a\u0000b').when(placed({})).then('stored');
  });

  it('stores an output over one chunk even when the view shows it whole (limits off)', () => {
    const limitsOff = { maxMessageBytes: 0, maxLines: 0, maxLineLength: 0 };
    given('x'.repeat(INLINE_OUTPUT_MAX_BYTES)).when(placed(limitsOff)).then('inline');
    given('x'.repeat(INLINE_OUTPUT_MAX_BYTES + 1)).when(placed(limitsOff)).then('stored');
  });
});

describe('inlineOutputRef', () => {
  it('gives the figures the store gives the same bytes', () => {
    const output = `${lines(5)}\n`;
    const bytes = Buffer.from(output, 'utf8');
    const chunks = splitIntoChunks(bytes);
    const last = chunks[chunks.length - 1];
    given(output)
      .when((o) => inlineOutputRef(REF, o))
      .then({
        id: REF,
        byte_size: bytes.length,
        line_count: last.firstLine + last.lineCount - 1,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      });
  });
});

describe('inlineOutputIn', () => {
  const data = (parts: unknown[]) => ({ message: { role: 'tool', parts } });

  it("finds the output of the result citing the ref, whole", () => {
    const ref = inlineOutputRef(REF, 'hello\n');
    given(data([{ type: 'text', text: 'x' }, { type: 'tool_result', callId: 'c', name: 'n', output: 'hello\n', outputRef: ref, truncated: false }]))
      .when((d) => inlineOutputIn(d, REF))
      .then({ output: 'hello\n', ref });
  });

  it('finds nothing in a truncated result, another ref, or an event that is no message', () => {
    const ref = inlineOutputRef(REF, 'hello\n');
    given(data([{ type: 'tool_result', callId: 'c', name: 'n', output: 'view', outputRef: ref, truncated: true }]))
      .when((d) => inlineOutputIn(d, REF))
      .then(undefined);
    given(data([{ type: 'tool_result', callId: 'c', name: 'n', output: 'hello\n', outputRef: { ...ref, id: 'out_other' } }]))
      .when((d) => inlineOutputIn(d, REF))
      .then(undefined);
    given({ usage: {} }).when((d) => inlineOutputIn(d, REF)).then(undefined);
  });
});

describe('assertInlineOutput (an import citing a ref no line gave the bytes of)', () => {
  const part = (output: string, overrides: Record<string, unknown> = {}) => ({
    type: 'tool_result',
    output,
    outputRef: inlineOutputRef(REF, output),
    truncated: false,
    ...overrides,
  });
  const check = (p: ReturnType<typeof part>) => assertInlineOutput(p, 'data.message.parts[0]');

  it('accepts a result holding the output whole, with its figures', () => {
    given(part(lines(3))).when(check).then(undefined);
  });

  it('refuses a truncated result, or one without sha256, as an unknown ref', () => {
    given(part(lines(3), { truncated: true })).when(check).thenFails('unknown_output_ref');
    given(part(lines(3), { outputRef: { ...inlineOutputRef(REF, lines(3)), sha256: undefined } })).when(check).thenFails('unknown_output_ref');
  });

  it('refuses an output larger than an inline one may be', () => {
    given(part('x'.repeat(INLINE_OUTPUT_MAX_BYTES + 1))).when(check).thenFails('unknown_output_ref');
  });

  it('refuses figures that are not the output it holds', () => {
    given(part(lines(3), { outputRef: inlineOutputRef(REF, lines(4)) })).when(check).thenFails('output_ref_mismatch');
  });
});
