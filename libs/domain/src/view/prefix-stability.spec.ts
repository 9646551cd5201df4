import fc from 'fast-check';
import { FilePart, Part, StoredEvent, ToolResultPart } from '../events';
import { FITTED_NOTICE_KIND, fitView } from './fit';
import { viewAt } from './model-view';
import { CONTEXT_FORMATS, renderContext } from './render';
import { prefixBreak } from './testing/prefix';
import { aborted, added, assistant, call, EventDraft, msg, result, storeEvents, TEST_MODEL, text, tool, usage, user } from './testing/events';
import { ModelView, PendingMode } from './types';

/**
 * Prefix stability: between two reads with no pivot, prune, archive, pin or
 * config change in between, the later rendering begins with the earlier one,
 * byte for byte, in every format. That is what keeps a provider's prompt
 * cache warm: any changed early byte turns the next call into a cache write.
 *
 * "Begins with" is testing/prefix.ts's prefixBreak. What is compared of the
 * earlier read is its *settled* view: the trailing assistant turn whose calls
 * are still pending, and their answers, are left out, since a read answers
 * them as aborted (or omits them) until their results land.
 */

const image: FilePart = { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=', filename: 'shot.png' };
const LARGE = Array.from({ length: 400 }, (_, i) => `line ${i}: ${'x'.repeat(40)}`).join('\n');

const words = fc.constantFrom('fix the bug', 'run the tests', 'two\nlines', 'trailing space ', 'ends with newline\n', 'ok');
const output = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a.txt\nb.txt', '', 'done', 'exit 1') },
  { weight: 1, arbitrary: fc.constant(LARGE) },
);

/** One agent turn, as the events an agent appends for it (one append each). */
type Turn =
  | { kind: 'user'; text: string; file: boolean; reminder: boolean }
  | {
      kind: 'step';
      text: string;
      reasoning: boolean;
      calls: Array<{ name: string; output: string; error: boolean; attach: boolean }>;
      split: boolean;
      usage: 'none' | 'before-results' | 'after';
      abort: 'no' | 'before-results' | 'after-some';
    };

const turn: fc.Arbitrary<Turn> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('user' as const), text: words, file: fc.boolean(), reminder: fc.boolean() }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('step' as const),
      text: fc.oneof(words, fc.constant('')),
      reasoning: fc.boolean(),
      // Parallel calls: up to three in one assistant message.
      calls: fc.array(
        fc.record({ name: fc.constantFrom('bash', 'read'), output, error: fc.boolean(), attach: fc.boolean() }),
        { maxLength: 3 },
      ),
      split: fc.boolean(),
      usage: fc.constantFrom('none' as const, 'before-results' as const, 'after' as const),
      abort: fc.constantFrom('no' as const, 'no' as const, 'no' as const, 'before-results' as const, 'after-some' as const),
    }),
  },
);

/** The appends of a session: a first user message, then the turns. */
function drafts(turns: readonly Turn[]): EventDraft[] {
  let n = 0;
  const id = (prefix: string) => `${prefix}${++n}`;
  const out: EventDraft[] = [
    { type: 'session.created', data: { model: TEST_MODEL, config: {}, metadata: {} } },
    added(msg(id('u'), 'user', [text('start')])),
  ];
  for (const t of turns) {
    if (t.kind === 'user') {
      const parts: Part[] = [text(t.text), ...(t.file ? [image] : [])];
      out.push(added(msg(id('u'), 'user', parts)));
      if (t.reminder) out.push(added(msg(id('s'), 'system', [text('reminder: tests are slow')])));
      continue;
    }
    const calls = t.calls.map((c) => ({ ...c, callId: id('call_') }));
    const lead: Part[] = [...(t.reasoning ? [{ type: 'reasoning' as const, text: 'thinking' }] : []), text(t.text)];
    out.push(added(msg(id('a'), 'assistant', [...lead, ...calls.map((c) => call(c.callId, c.name, { cmd: c.name }))])));
    if (t.usage === 'before-results') out.push(usage(1_000 + n, 50));
    if (t.abort === 'before-results') {
      out.push(aborted());
      continue;
    }
    const answered = t.abort === 'after-some' ? calls.slice(0, 1) : calls;
    const results: ToolResultPart[] = answered.map((c) =>
      result(c.callId, c.output, {
        name: c.name,
        ...(c.error ? { isError: true } : {}),
        ...(c.attach ? { attachments: [image], outputRef: { id: `ref-${c.callId}`, byte_size: 1, line_count: 1 } } : {}),
      }),
    );
    const groups = t.split ? results.map((r) => [r]) : results.length > 0 ? [results] : [];
    for (const parts of groups) out.push(added(msg(id('t'), 'tool', parts)));
    if (t.abort === 'after-some') out.push(aborted());
    if (t.usage === 'after') out.push(usage(2_000 + n, 80));
  }
  return out;
}

const sessions = fc.array(turn, { minLength: 1, maxLength: 12 }).map((turns) => storeEvents(drafts(turns)));
const settings = fc.record({
  pending: fc.constantFrom<PendingMode>('abort', 'omit'),
  system: fc.constantFrom(undefined, 'You are a terse coding agent.'),
});
/** Fixed seed, bounded runs: the same cases in CI every time. */
const runs = { seed: 3_2_2026, numRuns: 150 };

const read = (events: StoredEvent[], atSeq: number, pending: PendingMode, system: string | undefined, contextBudgetTokens: number) =>
  viewAt(events, atSeq, { system, model: TEST_MODEL, options: { pending, contextBudgetTokens } });

/** The part of a view that later reads must keep: all but the assistant turn still waiting on its calls (and its answers). */
function settled(view: ModelView, events: readonly StoredEvent[]): ModelView {
  if (view.pendingToolCalls.length === 0) return view;
  const callId = view.pendingToolCalls[0].callId;
  const owner = events.find(
    (event) =>
      event.type === 'message.added' && event.data.message.parts.some((part) => part.type === 'tool_call' && part.callId === callId),
  );
  const keep = view.sources.findIndex((source) => source.seq >= owner!.seq);
  return { ...view, messages: view.messages.slice(0, keep === -1 ? undefined : keep) };
}

const json = (value: unknown) => JSON.stringify(value);

/** Every read after every append keeps the settled part of the read before it, in every format. */
function checkEveryAppend(
  events: StoredEvent[],
  view: (atSeq: number) => ModelView,
  comparable: (earlier: ModelView, later: ModelView) => boolean = () => true,
): void {
  // seq 1 is session.created and seq 2 the first user message: reads start there.
  let earlier = view(2);
  for (let seq = 3; seq <= events.length; seq++) {
    const later = view(seq);
    if (comparable(earlier, later)) {
      const stable = settled(earlier, events);
      for (const format of CONTEXT_FORMATS) {
        const broken = prefixBreak(format, renderContext(stable, format), renderContext(later, format));
        if (broken) throw new Error(`${format}: read at seq ${seq} breaks the prefix of seq ${seq - 1} at ${broken}`);
      }
    }
    earlier = later;
  }
}

describe('prefix stability (random agent sessions, a read after every append)', () => {
  it('the later read begins with the earlier one, every format, system included', () => {
    fc.assert(
      fc.property(sessions, settings, (events, { pending, system }) => {
        checkEveryAppend(events, (atSeq) => read(events, atSeq, pending, system, Number.POSITIVE_INFINITY));
      }),
      runs,
    );
  });

  it('rendering is deterministic: the same log renders the same bytes', () => {
    fc.assert(
      fc.property(sessions, settings, (events, { pending, system }) => {
        for (const format of CONTEXT_FORMATS) {
          const once = json(renderContext(read(events, events.length, pending, system, Number.POSITIVE_INFINITY), format));
          expect(json(renderContext(read(events, events.length, pending, system, Number.POSITIVE_INFINITY), format))).toBe(once);
        }
      }),
      { ...runs, numRuns: 50 },
    );
  });

  // The view-time trim (seed 000, 1.7; on in the spec-000 preset) is a rewrite the service makes
  // itself: when a new output pushes the kept total over the budget, an older output becomes the
  // placeholder. Between such moves the prefix holds.
  it('with the view-time trim: holds between reads that trim the same outputs', () => {
    fc.assert(
      fc.property(sessions, settings, (events, { pending, system }) => {
        const sameTrim = (a: ModelView, b: ModelView) => json(a.trimmedCallIds) === json(b.trimmedCallIds);
        checkEveryAppend(events, (atSeq) => read(events, atSeq, pending, system, 2_000), sameTrim);
      }),
      runs,
    );
  });

  // A fitted read (over the read budget while a compaction is pending) is a rewrite too: it
  // clears outputs and drops the oldest messages only as far as this read needs. Reads fitted
  // the same way keep the prefix.
  it('fitted views: holds between reads fitted the same way', () => {
    fc.assert(
      fc.property(sessions, settings, (events, { pending, system }) => {
        const fitted = (atSeq: number) => fitView(read(events, atSeq, pending, system, Number.POSITIVE_INFINITY), 3_000).view;
        const sameFit = (a: ModelView, b: ModelView) => json(fitShape(a)) === json(fitShape(b));
        checkEveryAppend(events, fitted, sameFit);
      }),
      runs,
    );
  });
});

// The rewrites the service makes without a pivot, prune, archive, pin or config change, each
// shown once (docs/compaction.md, section 16).
describe('rewrites without a rewrite event', () => {
  const at = (events: StoredEvent[], seq: number, budget = Number.POSITIVE_INFINITY) =>
    renderContext(read(events, seq, 'abort', undefined, budget), 'neutral');

  it('the view-time trim: a new output over the budget turns an older one into the placeholder', () => {
    const big = 'x'.repeat(4_000); // 1,000 tokens each
    const events = storeEvents([user('u1', 'go'), assistant('a1', call('c1')), tool('t1', result('c1', big)), assistant('a2', call('c2')), tool('t2', result('c2', big))]);
    expect(prefixBreak('neutral', at(events, 3, 1_500), at(events, 5, 1_500))).toBe('message 2');
    expect(prefixBreak('neutral', at(events, 3, 2_500), at(events, 5, 2_500))).toBeNull();
  });

  it('a late result, appended after a later turn closed its call, replaces the aborted answer in place', () => {
    const events = storeEvents([user('u1', 'go'), assistant('a1', call('c1')), user('u2', 'next'), tool('t1', result('c1', 'late'))]);
    expect(prefixBreak('neutral', at(events, 3), at(events, 4))).toBe('message 2');
  });
});

/** What a fit changed: the notice and the messages it cleared, by id. */
function fitShape(view: ModelView) {
  const cleared = (part: Part) => part.type === 'tool_result' && part.output.startsWith('[tool output trimmed');
  return view.messages
    .filter((message) => message.metadata?.kind === FITTED_NOTICE_KIND || message.parts.some(cleared))
    .map((message) => message.id);
}
