import fc from 'fast-check';

import type { NewEvent } from '../events';
import { buildInContextView, ToolOutputViewConfig } from './in-context-view';
import { INLINE_OUTPUT_MAX_BYTES } from './inline-output';
import {
  OutputSlice,
  restoredEventJson,
  restoreStoredOutputs,
  sliceTexts,
  storedEventOf,
  storedOutputOf,
  storedOutputSlices,
  StoredOutput,
} from './stored-output';

const REF = 'out_0123456789abcdefghijkl';
const logLines = (count: number, width = 60) =>
  Array.from({ length: count }, (_, i) => `2026-11-25T00:00:${String(i % 60).padStart(2, '0')}Z INFO ${`line ${i + 1} `.padEnd(width, 'x')}`).join('\n');

/** What a reader gets back: the pieces resolved against the stored output's bytes. */
function resolve(from: StoredOutput, output: string): string {
  const bytes = Buffer.from(output, 'utf8');
  if (from === true) return output;
  return from.map((p) => (typeof p === 'string' ? p : bytes.subarray(p[0], p[1]).toString('utf8'))).join('');
}

const textOf = (output: string) => (slice: OutputSlice) => {
  const bytes = Buffer.from(output, 'utf8');
  return bytes.subarray(slice.start, slice.end ?? bytes.length).toString('utf8');
};

describe('storedOutputOf', () => {
  it('keeps nothing of a view that is the whole output', () => {
    const output = logLines(40);
    expect(storedOutputOf(buildInContextView(output, REF).view, output)).toBe(true);
  });

  it('keeps a truncated view as its own text and byte ranges of the output, which rebuild it exactly', () => {
    const output = logLines(3000);
    for (const config of [{}, { mode: 'head' }, { maxLines: 100 }, { maxMessageBytes: 8000 }] as Array<Partial<ToolOutputViewConfig>>) {
      const { view } = buildInContextView(output, REF, config);
      const from = storedOutputOf(view, output);
      expect(Array.isArray(from)).toBe(true);
      expect(resolve(from!, output)).toBe(view);
      // The stored literal text is the header, marker and note: a few hundred bytes, whatever the view's size.
      const literal = (from as unknown[]).filter((p): p is string => typeof p === 'string').join('');
      expect(literal.length).toBeLessThan(600);
    }
  });

  it('counts ranges in UTF-8 bytes and never splits a code point', () => {
    const output = Array.from({ length: 3000 }, (_, i) => `${i} ünïcödé 😀 行${i}`).join('\n');
    const { view } = buildInContextView(output, REF, { maxMessageBytes: 20_000 });
    const from = storedOutputOf(view, output);
    expect(Array.isArray(from)).toBe(true);
    expect(resolve(from!, output)).toBe(view);
  });

  it('keeps literally a view that takes too little of the output to be worth ranges, and an empty output', () => {
    const output = logLines(3000);
    const { view } = buildInContextView(output, REF, { maxMessageBytes: 200 });
    expect(storedOutputOf(view, output)).toBeUndefined();
    expect(storedOutputOf('something else entirely', output)).toBeUndefined();
    // An empty output is stored without chunks: nothing to restore it from, nothing to save.
    expect(storedOutputOf('', '')).toBeUndefined();
  });

  it('whatever the view, what it returns rebuilds the view', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { minLength: 1, maxLength: 60 }),
        fc.record({ maxLines: fc.nat(50), maxLineLength: fc.nat(400), maxMessageBytes: fc.nat(6000), mode: fc.constantFrom('head', 'head_tail') }),
        (lines, config) => {
          const output = lines.join('\n').replace(/[\ud800-\udfff]/g, 'x');
          const { view } = buildInContextView(output, REF, config as Partial<ToolOutputViewConfig>);
          const from = storedOutputOf(view, output);
          if (from !== undefined) expect(resolve(from, output)).toBe(view);
        },
      ),
      { numRuns: 50 },
    );
  });
});

const toolMessage = (parts: unknown[], metadata?: Record<string, unknown>) =>
  ({ id: 'e1', type: 'message.added', data: { message: { id: 'e1', role: 'tool', parts, ...(metadata ? { metadata } : {}) } } }) as NewEvent<'message.added'>;
const refOf = (id: string) => ({ id, byte_size: 1, line_count: 1, sha256: 'ab' });

describe('storedEventOf', () => {
  it('drops the view of a sent output the store keeps, and only that', () => {
    const small = 'a small output\n';
    // Shown whole (the view's limits off) but over one chunk: the store keeps it.
    const large = 'x'.repeat(INLINE_OUTPUT_MAX_BYTES + 1);
    const sent = toolMessage([
      { type: 'tool_result', callId: 'c1', output: large },
      { type: 'tool_result', callId: 'c2', outputRef: { id: 'out_up' } },
      { type: 'tool_result', callId: 'c3', output: 'kept whole: the cache is off' },
      { type: 'tool_result', callId: 'c4', output: small },
    ]);
    const written = toolMessage([
      { type: 'tool_result', callId: 'c1', name: 'bash', output: large, outputRef: refOf('out_a'), truncated: false },
      { type: 'tool_result', callId: 'c2', name: 'bash', output: 'an upload view', outputRef: refOf('out_up'), truncated: false },
      { type: 'tool_result', callId: 'c3', name: 'bash', output: 'kept whole: the cache is off' },
      // Inline: the event is where the output lives.
      { type: 'tool_result', callId: 'c4', name: 'bash', output: small, outputRef: refOf('out_b'), truncated: false },
    ]);
    const stored = storedEventOf(written, sent) as NewEvent<'message.added'>;
    expect(stored.data.message.parts).toEqual([
      { type: 'tool_result', callId: 'c1', name: 'bash', outputRef: refOf('out_a'), truncated: false, outputFrom: true },
      written.data.message.parts[1],
      written.data.message.parts[2],
      written.data.message.parts[3],
    ]);
    // An event with nothing to drop is written as it is.
    const whole = toolMessage([written.data.message.parts[2]]);
    expect(storedEventOf(whole, toolMessage([sent.data.message.parts[2]]))).toBe(whole);
  });
});

describe('restoring stored views', () => {
  it('gives back the event as written, the part keys in the order PostgreSQL returns them', () => {
    // Shown whole but over one chunk (so not inline), and truncated.
    const small = logLines(1200);
    const big = logLines(3000);
    const bigView = buildInContextView(big, 'out_big').view;
    const outputs: Record<string, string> = { out_small: small, out_big: big };
    const written = toolMessage(
      [
        { type: 'tool_result', callId: 'c1', name: 'bash', output: small, outputRef: refOf('out_small'), truncated: false, isError: true },
        { type: 'tool_result', callId: 'c2', name: 'bash', output: bigView, outputRef: refOf('out_big'), truncated: true },
      ],
      { note: 'kept' },
    );
    const sent = toolMessage([
      { type: 'tool_result', callId: 'c1', output: small, isError: true },
      { type: 'tool_result', callId: 'c2', output: big },
    ]);
    // Read back as jsonb gives it: keys by length, then bytes.
    const stored = JSON.parse(JSON.stringify(storedEventOf(written, sent).data)) as unknown;
    const slices = storedOutputSlices([stored, stored]);
    expect(slices.filter((s) => s.refId === 'out_small')).toEqual([{ refId: 'out_small', start: 0, end: null }]);
    const restored = restoreStoredOutputs(stored, (slice) => textOf(outputs[slice.refId])(slice)) as { message: { parts: Array<Record<string, unknown>> } };
    expect(restored).toEqual(written.data);
    expect(restored.message.parts.map((p) => Object.keys(p))).toEqual([
      ['name', 'type', 'callId', 'output', 'isError', 'outputRef', 'truncated'],
      ['name', 'type', 'callId', 'output', 'outputRef', 'truncated'],
    ]);
  });

  it('splices outputs into an event read as JSON, byte for byte the JSON of the object restore', () => {
    // Every character JSON escapes, text that looks like a placeholder, non-ASCII and a 4-byte code point.
    const nasty = `${logLines(2000)}\n"quoted" back\\slash \\u0000 \u0001\b\f\r\t tab é 漢字 😀 "\\u00000"\n${logLines(2000)}`;
    const view = buildInContextView(nasty, 'out_nasty').view;
    const outputs: Record<string, string> = { out_nasty: nasty, out_whole: `whole "output"\n\\u00001${'x'.repeat(INLINE_OUTPUT_MAX_BYTES)}` };
    const written = toolMessage([
      { type: 'tool_call', callId: 'c0', name: 'bash', input: { command: '\\u0000', output: '' } },
      { type: 'tool_result', callId: 'c1', name: 'bash', output: view, outputRef: refOf('out_nasty'), truncated: true },
      { type: 'tool_result', callId: 'c2', name: 'bash', output: outputs.out_whole, outputRef: refOf('out_whole'), truncated: false },
    ]);
    const sent = toolMessage([written.data.message.parts[0], { type: 'tool_result', callId: 'c1', output: nasty }, { type: 'tool_result', callId: 'c2', output: outputs.out_whole }]);
    const event = JSON.parse(JSON.stringify({ seq: 3, id: 'e3', type: 'message.added', data: storedEventOf(written, sent).data, createdAt: '2026-11-27T00:00:00.000Z' }));
    expect(JSON.stringify(event)).toContain('"outputFrom":[');

    const text = (slice: OutputSlice) => textOf(outputs[slice.refId])(slice);
    const json = restoredEventJson(event, text)!.join('');
    // Byte for byte what serializing the object restore gives, key order included.
    expect(json).toBe(JSON.stringify({ ...event, data: restoreStoredOutputs(event.data, text) }));
    expect(JSON.parse(json).data).toEqual(written.data);
    expect(restoredEventJson({ data: { message: { role: 'user', parts: [{ type: 'text', text: '"outputFrom"' }] } } }, text)).toBeUndefined();
  });

  it('leaves data without stored views alone, and a missing slice is an error', () => {
    const data = { message: { role: 'user', parts: [{ type: 'text', text: 'hi' }] } };
    expect(storedOutputSlices([data, null, { usage: {} }])).toEqual([]);
    expect(restoreStoredOutputs(data, () => 'never')).toBe(data);
    const stored = { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'c', name: 'n', outputRef: refOf('out_gone'), outputFrom: true }] } };
    expect(() => restoreStoredOutputs(stored, sliceTexts([]))).toThrow(/out_gone .*missing/);
  });
});
