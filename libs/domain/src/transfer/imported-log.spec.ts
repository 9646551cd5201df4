import { errorOf } from '../testing/expect-domain-error';
import { ImportedEvent, ImportedLogCheck } from './imported-log';

const message = (seq: number, role: 'assistant' | 'tool', part: object): ImportedEvent =>
  ({ seq, type: 'message.added', data: { message: { id: `m${seq}`, role, parts: [part] } } }) as ImportedEvent;
const call = (seq: number, callId: string) => message(seq, 'assistant', { type: 'tool_call', callId, name: 'bash', input: {} });
const result = (seq: number, callId: string) => message(seq, 'tool', { type: 'tool_result', callId, name: 'bash', output: 'ok' });
const step = (seq: number, input: number, contextSeq?: number): ImportedEvent => ({
  seq,
  type: 'step.finished',
  data: { usage: { input_tokens: input, output_tokens: 10 }, ...(contextSeq !== undefined ? { contextSeq } : {}) },
});
const marker = (seq: number): ImportedEvent => ({ seq, type: 'compaction.requested', data: { auto: false, reason: 'manual' } });
const pinAdded = (seq: number, pinId: string): ImportedEvent => ({ seq, type: 'pin.added', data: { pinId, text: `text of ${pinId}` } });
const pinRemoved = (seq: number, pinId: string): ImportedEvent => ({ seq, type: 'pin.removed', data: { pinId } });
const pivot = (seq: number, data: { markerSeq: number; coveredThroughSeq: number } & Record<string, unknown>): ImportedEvent =>
  ({
    seq,
    type: 'compaction.completed',
    data: { summary: 's', prefix: [], strategy: 'opencode', model: 'm', tokensBefore: 1, tokensAfter: 1, messagesCompacted: 1, durationMs: 1, ...data },
  }) as ImportedEvent;

const prefixMessage = (role: string, part: object) => ({ id: `p-${role}`, role, parts: [part] });

/** Given a log, when checked in order: the code of its refusal (the test fails if none). */
function refusal(events: ImportedEvent[]): string {
  const check = new ImportedLogCheck();
  return errorOf(() => events.forEach((event) => check.check(event))).code;
}

describe('ImportedLogCheck', () => {
  // A log the service itself writes: a call answered, a step, a pin, a compaction of it, a prune of the call.
  const genuine = [
    call(2, 'c1'),
    result(3, 'c1'),
    step(4, 500, 3),
    pinAdded(5, 'p1'),
    marker(6),
    pivot(7, { markerSeq: 6, coveredThroughSeq: 5, pins: [{ pinId: 'p1', text: 'text of p1', seq: 5 }], overhead: 120 }),
    pinRemoved(8, 'p1'),
    { seq: 9, type: 'tool_outputs.pruned', data: { callIds: ['c1'], tokensFreed: 1, policy: {} } },
    marker(10),
    pivot(11, {
      markerSeq: 10,
      coveredThroughSeq: 9,
      prefix: [prefixMessage('assistant', { type: 'tool_call', callId: 'c1', name: 'bash', input: {} }), prefixMessage('tool', { type: 'tool_result', callId: 'c1', name: 'bash', output: 'ok' })],
    }),
  ] as ImportedEvent[];

  it('given a log the service writes, when checked, then nothing is refused', () => {
    const check = new ImportedLogCheck();
    expect(() => genuine.forEach((event) => check.check(event))).not.toThrow();
  });

  it.each([
    ['a pivot answering no marker', [call(2, 'c1'), pivot(3, { markerSeq: 2, coveredThroughSeq: 2 })]],
    ['a pivot covering beyond its marker', [call(2, 'c1'), marker(3), call(4, 'c2'), pivot(5, { markerSeq: 3, coveredThroughSeq: 4 })]],
    ['a pivot covering less than the previous one', [...genuine, marker(12), pivot(13, { markerSeq: 12, coveredThroughSeq: 8 })]],
    ['a second pivot for the same marker', [marker(2), pivot(3, { markerSeq: 2, coveredThroughSeq: 1 }), pivot(4, { markerSeq: 2, coveredThroughSeq: 1 })]],
    ['a pivot with pins not in force at its cut', [pinAdded(2, 'p1'), marker(3), pivot(4, { markerSeq: 3, coveredThroughSeq: 3 })]],
    ['a pivot carrying a pin added after its cut', [marker(2), pinAdded(3, 'p1'), pivot(4, { markerSeq: 2, coveredThroughSeq: 2, pins: [{ pinId: 'p1', text: 'text of p1', seq: 3 }] })]],
    ['a pivot whose overhead exceeds every provider count', [step(2, 100), marker(3), pivot(4, { markerSeq: 3, coveredThroughSeq: 3, overhead: 1_000_000 })]],
    ['a pivot whose prefix holds a lone tool result', [marker(2), pivot(3, { markerSeq: 2, coveredThroughSeq: 1, prefix: [prefixMessage('tool', { type: 'tool_result', callId: 'c9', name: 'bash', output: 'x' })] })]],
    ['a pivot whose prefix holds an unanswered tool call', [marker(2), pivot(3, { markerSeq: 2, coveredThroughSeq: 1, prefix: [prefixMessage('assistant', { type: 'tool_call', callId: 'c9', name: 'bash', input: {} })] })]],
    ['a failure of no marker', [{ seq: 2, type: 'compaction.failed', data: { markerSeq: 1, attempt: 1, error: 'e', fallback: 'none' } } as ImportedEvent]],
    ['a prune of an unanswered call', [call(2, 'c1'), { seq: 3, type: 'tool_outputs.pruned', data: { callIds: ['c1'], tokensFreed: 1, policy: {} } } as ImportedEvent]],
    ['an archive of an unknown call', [{ seq: 2, type: 'tool_results.archived', data: { callIds: ['nope'], digest: null } } as ImportedEvent]],
    ['a pin removed that is not in force', [pinRemoved(2, 'p1')]],
    ['a pin added twice', [pinAdded(2, 'p1'), pinAdded(3, 'p1')]],
    ['a step measuring a later context', [step(2, 100, 2)]],
  ])('given %s, when checked, then it is refused as invalid_log', (_what, events) => {
    expect(refusal(events as ImportedEvent[])).toBe('invalid_log');
  });
});
