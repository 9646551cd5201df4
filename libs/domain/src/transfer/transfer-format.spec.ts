import { createHash } from 'node:crypto';

import { errorOf } from '../testing/expect-domain-error';
import { LineSplitter, parseJsonLine } from './jsonl';
import { chunkLine, eventLine, ImportReader, outputLine, renameEventRefs, renameRefs, sessionLine } from './transfer-format';

const REF = 'out_AAAAAAAAAAAAAAAAAAAAAA';
const SHA = 'a'.repeat(64);
const session = { id: 's1', model: 'gpt-4.1', system: null, config: {}, metadata: {}, headSeq: 3, createdAt: '2026-01-01T00:00:00.000Z' };
const created = { seq: 1, id: 'session-created', type: 'session.created' as const, data: { model: 'gpt-4.1', config: {}, metadata: {} }, createdAt: session.createdAt };
const call = { seq: 2, id: 'e2', type: 'message.added' as const, data: { message: { id: 'e2', role: 'assistant', parts: [{ type: 'tool_call', callId: 'c1', name: 'bash', input: {} }] } }, createdAt: session.createdAt };
const result = (outputRef: object) => ({
  seq: 3,
  id: 'e3',
  type: 'message.added' as const,
  data: { message: { id: 'e3', role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', name: 'bash', output: 'view', outputRef }] } },
  createdAt: session.createdAt,
});
const json = (line: string) => JSON.parse(line);
const marker = (seq: number) => ({ seq, id: `m${seq}`, type: 'compaction.requested' as const, data: { auto: false, reason: 'manual' }, createdAt: session.createdAt });
const pivotData = { markerSeq: 3, coveredThroughSeq: 2, summary: 's', prefix: [], strategy: 'opencode', model: 'gpt-4.1', tokensBefore: 10, tokensAfter: 5, messagesCompacted: 1, durationMs: 1 };
const pivot = (seq: number, data: object) => ({ seq, id: `p${seq}`, type: 'compaction.completed' as const, data: { ...pivotData, ...data }, createdAt: session.createdAt });

/** Given the lines of an import, when the reader reads them all: what it returns, or the error it throws. */
function read(lines: string[]) {
  const reader = new ImportReader();
  reader.header(json(lines[0]));
  const steps = lines.slice(1).map((l) => reader.next(json(l)));
  reader.finish();
  return { steps, reader };
}

const REF_FIGURES = { id: REF, byte_size: 4, line_count: 1, sha256: SHA };
/** The event line with its tool result's view marked truncated. */
const truncated = (line: string) => {
  const value = json(line);
  value.data.message.parts[0].truncated = true;
  return JSON.stringify(value);
};

describe('ImportReader', () => {
  const good = [sessionLine(session), eventLine(created), eventLine(call), outputLine({ ref: REF, byteSize: 4, lineCount: 1, sha256: SHA }), chunkLine(REF, 0, Buffer.from('ab\n').toString('base64')), chunkLine(REF, 3, 'eA=='), eventLine(result({ id: REF, byte_size: 4, line_count: 1, sha256: SHA }))];

  /** `good` with the message at seq `seq` given another single part, or another role. */
  const withPart = (seq: number, part: object) =>
    good.map((line) => {
      const value = json(line);
      if (value.seq === seq) value.data.message.parts = [part];
      return JSON.stringify(value);
    });
  const withRole = (seq: number, role: string) =>
    good.map((line) => {
      const value = json(line);
      if (value.seq === seq) value.data.message.role = role;
      return JSON.stringify(value);
    });

  it('given an export in order, when read, then it yields the output, its chunks (the last one marked) and the events', () => {
    const { steps } = read(good);
    expect(steps.map((s) => s.kind)).toEqual(['event', 'event', 'output', 'chunk', 'chunk', 'event']);
    expect(steps.filter((s) => s.kind === 'chunk').map((s) => (s as { last: boolean }).last)).toEqual([false, true]);
  });

  it('given a ref no line gave the bytes of, cited by a result holding its output whole, when read, then the event holds it inline', () => {
    const output = 'ab\nx';
    const inline = { id: REF, byte_size: 4, line_count: 2, sha256: createHash('sha256').update(output).digest('hex') };
    const cite = (seq: number) => ({ ...result(inline), seq, id: `e${seq}`, data: { message: { id: `e${seq}`, role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', name: 'bash', output, outputRef: inline }] } } });
    const again = { ...cite(5), data: { message: { id: 'e5', role: 'user', parts: [{ type: 'text', text: `see ${REF}` }] } } };
    const { steps, reader } = read([sessionLine({ ...session, headSeq: 5 }), good[1], good[2], eventLine(cite(3)), eventLine(marker(4)), eventLine(again)]);
    expect(steps.map((s) => (s.kind === 'event' ? s.inlineRefs : s.kind))).toEqual([[], [], [REF], [], []]);
    expect([...reader.inline]).toEqual([REF]);
    // A tool_output line for the same ref after that is a second copy.
    expect(errorOf(() => read([...good.slice(0, 3), eventLine(cite(3)), good[3]])).code).toBe('duplicate_output');
  });

  it('given a pivot, when read, then the reader reports it as the session pivot', () => {
    const lines = [sessionLine({ ...session, headSeq: 4 }), eventLine(created), eventLine(call), eventLine(marker(3)), eventLine(pivot(4, {}))];
    expect(read(lines).reader.pivot).toEqual({ seq: 4, coveredThroughSeq: 2 });
  });

  it.each([
    ['another version', [sessionLine(session).replace('"version":1', '"version":2'), ...good.slice(1)], 'unsupported_version'],
    ['an event out of order', [good[0], good[2], good[1], ...good.slice(3)], 'event_out_of_order'],
    ['a ref never given, cited by a truncated view', [good[0], good[1], good[2], truncated(good[6])], 'unknown_output_ref'],
    ['a ref never given, cited by a whole view with other figures', [good[0], good[1], good[2], good[6]], 'output_ref_mismatch'],
    ['a ref with other figures', [...good.slice(0, 6), eventLine(result({ id: REF, byte_size: 5, line_count: 1 }))], 'output_ref_mismatch'],
    ['an output cut short', [...good.slice(0, 5), good[6]], 'output_cut_short'],
    ['a chunk beyond the declared size', [...good.slice(0, 5), chunkLine(REF, 3, 'eHk='), good[6]], 'output_size_mismatch'],
    ['a chunk out of order', [...good.slice(0, 4), chunkLine(REF, 1, 'eA==')], 'chunk_out_of_order'],
    ['events missing at the end', good.slice(0, 3), 'missing_events'],
    // Fields only the service writes, and parts an append refuses (issue cases: outputFrom, a number as text...).
    ['a tool result carrying outputFrom', withPart(3, { type: 'tool_result', callId: 'c1', name: 'bash', output: 'view', outputRef: REF_FIGURES, outputFrom: [[0, 4]] }), 'unknown_field'],
    ['a text part whose text is a number', withPart(2, { type: 'text', text: 42 }), 'invalid_field'],
    ['a reasoning part whose text is an object', withPart(2, { type: 'reasoning', text: { a: 1 } }), 'invalid_field'],
    ['a file part without mediaType', withPart(2, { type: 'file', url: 'https://example.com/a.png' }), 'invalid_field'],
    ['a tool call in a user message', withRole(2, 'user'), 'invalid_part'],
  ])('given %s, when read, then it is refused', (_what, lines, code) => {
    expect(errorOf(() => read(lines as string[])).code).toBe(code);
  });
});

describe('LineSplitter and parseJsonLine', () => {
  it('given pieces cut anywhere, when split, then lines come whole and numbered, blank ones counted, CR dropped, the last without a newline kept', () => {
    const splitter = new LineSplitter(100);
    const text = new TextEncoder().encode('{"a":1}\r\n\n{"b"');
    const lines = [...splitter.push(text.subarray(0, 3)), ...splitter.push(text.subarray(3)), ...splitter.push(new TextEncoder().encode(':2}')), ...splitter.end()];
    expect(lines.map((l) => [l.line, parseJsonLine(l.bytes, l.line, 64)])).toEqual([[1, { a: 1 }], [3, { b: 2 }]]);
  });

  it('given a line longer than the bound, when split, then it is refused with its number before it is whole', () => {
    const splitter = new LineSplitter(8);
    splitter.push(new TextEncoder().encode('{}\n'));
    expect(errorOf(() => splitter.push(new TextEncoder().encode('123456789'))).details).toMatchObject({ line: 2 });
  });

  it('given invalid UTF-8, a cut JSON value or a NUL, when parsed, then the error names the line', () => {
    expect(errorOf(() => parseJsonLine(new Uint8Array([0xff]), 4, 64)).code).toBe('invalid_utf8');
    expect(errorOf(() => parseJsonLine(new TextEncoder().encode('{"a":'), 5, 64)).details).toEqual({ line: 5 });
    expect(errorOf(() => parseJsonLine(new TextEncoder().encode('"\\u0000"'), 6, 64)).message).toMatch(/^line 6: /);
  });
});

describe('renameRefs', () => {
  it('given a renamed ref, when a value cites it anywhere, then every mention is rewritten and others are kept', () => {
    const other = 'out_BBBBBBBBBBBBBBBBBBBBBB';
    const renamed = new Map([[REF, 'out_CCCCCCCCCCCCCCCCCCCCCC']]);
    expect(renameRefs({ ref: { id: REF }, text: `see ref=${REF} and ${other}` }, renamed)).toEqual({
      ref: { id: 'out_CCCCCCCCCCCCCCCCCCCCCC' },
      text: `see ref=out_CCCCCCCCCCCCCCCCCCCCCC and ${other}`,
    });
  });
});

describe('renameEventRefs', () => {
  it('given an event holding an output inline, when its refs are renamed, then the output keeps its bytes and the rest is rewritten', () => {
    const inlineRef = 'out_BBBBBBBBBBBBBBBBBBBBBB';
    const renamed = new Map([
      [REF, 'out_CCCCCCCCCCCCCCCCCCCCCC'],
      [inlineRef, 'out_DDDDDDDDDDDDDDDDDDDDDD'],
    ]);
    const output = `read ${REF} earlier`;
    const event = result({ id: inlineRef, byte_size: 1, line_count: 1, sha256: SHA });
    event.data.message.parts.push({ type: 'tool_result', callId: 'c2', name: 'bash', output: `a view citing ${REF}`, outputRef: { id: REF } } as never);
    event.data.message.parts[0].output = output;
    const parts = renameEventRefs(event, renamed, new Set([inlineRef])).data.message as unknown as { parts: Array<{ output: string; outputRef: { id: string } }> };
    expect(parts.parts.map((p) => [p.output, p.outputRef.id])).toEqual([
      [output, 'out_DDDDDDDDDDDDDDDDDDDDDD'],
      ['a view citing out_CCCCCCCCCCCCCCCCCCCCCC', 'out_CCCCCCCCCCCCCCCCCCCCCC'],
    ]);
  });
});
