import fc from 'fast-check';
import { FilePart, Message, Part, ToolResultPart } from '../../events';

/**
 * Well-formed conversations made only of what a format carries, for the
 * lossless property (render, parse back, get the same messages): rounds of a
 * user or system message, then assistant steps, each step's calls answered
 * by one tool message. No two messages of a role in a row, no blank or
 * trailing-space text, clean call ids and object inputs: the formats merge,
 * drop, trim, rename or wrap those (see each parser's comment).
 */
export interface Carried {
  /** The files users send and tools return. */
  files: readonly FilePart[];
  reasoning: boolean;
  /** A result's error flag (on results without attachments). */
  errors: boolean;
}

const pngData: FilePart = { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=' };
const pngUrl: FilePart = { type: 'file', mediaType: 'image/png', url: 'https://example.test/shot.png' };
const pdfData: FilePart = { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=' };
const pdfUrl: FilePart = { type: 'file', mediaType: 'application/pdf', url: 'https://example.test/spec.pdf' };
const named = (file: FilePart, filename: string): FilePart => ({ ...file, filename });

/** What each format carries unchanged (see each parser's comment for the rest). */
export const CARRIED_BY_FORMAT: Record<'openai' | 'openai-responses' | 'anthropic' | 'ai-sdk', Carried> = {
  openai: { files: [pngData, pngUrl, named(pdfData, 'spec.pdf')], reasoning: false, errors: false },
  'openai-responses': { files: [pngData, pngUrl, named(pdfData, 'spec.pdf'), pdfUrl], reasoning: false, errors: false },
  anthropic: { files: [pngData, pngUrl, pdfData, pdfUrl], reasoning: false, errors: true },
  'ai-sdk': { files: [named(pngData, 'shot.png'), named(pdfData, 'spec.pdf'), pngUrl, pdfUrl], reasoning: true, errors: true },
};

/** What every format carries. */
export const CARRIED_BY_ALL: Carried = { files: [pngData, pngUrl], reasoning: false, errors: false };

const words = fc.string({ maxLength: 12 }).map((s) => `t${s}`.trimEnd());

interface CallSpec {
  name: string;
  input: Record<string, unknown>;
  output: string;
  error: boolean;
  attachment: FilePart | null;
}

interface StepSpec {
  reasoning: boolean;
  text: string | null;
  calls: CallSpec[];
}

interface RoundSpec {
  opener: { role: 'user' | 'system'; text: string; file: FilePart | null };
  steps: StepSpec[];
}

export function conversationArbitrary(carried: Carried): fc.Arbitrary<Message[]> {
  const file = fc.option(fc.constantFrom(...carried.files));
  const callSpec: fc.Arbitrary<CallSpec> = fc.record({
    name: fc.constantFrom('bash', 'read'),
    input: fc.constantFrom({}, { cmd: 'ls' }, { paths: ['a', 'b'], n: 2 }),
    output: words,
    error: fc.boolean().map((error) => error && carried.errors),
    attachment: file,
  });
  const step = (calls: fc.Arbitrary<CallSpec[]>, text: fc.Arbitrary<string | null>): fc.Arbitrary<StepSpec> =>
    fc.record({ reasoning: fc.boolean().map((on) => on && carried.reasoning), text, calls });
  const opener = (role: fc.Arbitrary<'user' | 'system'>) => fc.record({ role, text: words, file });
  // A round ends with a text-only step or after its last call's results; it has at least one step.
  const round = (role: fc.Arbitrary<'user' | 'system'>): fc.Arbitrary<RoundSpec> =>
    fc
      .tuple(opener(role), fc.array(step(fc.array(callSpec, { minLength: 1, maxLength: 3 }), fc.option(words)), { maxLength: 2 }), fc.option(step(fc.constant([]), words)))
      .map(([first, calls, final]) => {
        const steps = final ? [...calls, final] : calls;
        return { opener: first, steps: steps.length > 0 ? steps : [{ reasoning: false, text: 'done', calls: [] }] };
      });
  return fc
    .tuple(fc.option(words), round(fc.constant('user')), fc.array(round(fc.constantFrom('user', 'system')), { maxLength: 4 }))
    .map(([system, first, rest]) => build(system, [first, ...rest]));
}

function build(system: string | null, rounds: RoundSpec[]): Message[] {
  const messages: Message[] = [];
  const add = (role: Message['role'], parts: Part[]) => messages.push({ id: `m${messages.length + 1}`, role, parts });
  let calls = 0;
  if (system !== null) add('system', [{ type: 'text', text: system }]);
  for (const { opener, steps } of rounds) {
    const file = opener.role === 'user' && opener.file ? [opener.file] : [];
    add(opener.role, [{ type: 'text', text: opener.text }, ...file]);
    for (const step of steps) {
      const ids = step.calls.map(() => `call_${++calls}`);
      add('assistant', [
        ...(step.reasoning ? [{ type: 'reasoning' as const, text: 'thinking it over' }] : []),
        ...(step.text === null ? [] : [{ type: 'text' as const, text: step.text }]),
        ...step.calls.map((spec, i): Part => ({ type: 'tool_call', callId: ids[i], name: spec.name, input: spec.input })),
      ]);
      if (step.calls.length > 0) add('tool', step.calls.map((spec, i) => resultOf(ids[i], spec)));
    }
  }
  return messages;
}

function resultOf(callId: string, { name, output, error, attachment }: CallSpec): ToolResultPart {
  const result: ToolResultPart = { type: 'tool_result', callId, name, output };
  if (attachment) return { ...result, attachments: [attachment] };
  return error ? { ...result, isError: true } : result;
}
