import fc from 'fast-check';
import { FilePart, Message, Part, StoredEvent, ToolResultPart } from '../../events';
import {
  aborted,
  added,
  archived,
  call,
  compacted,
  EventDraft,
  msg,
  pruned,
  result,
  storeEvents,
  text,
  usage,
} from './events';

/**
 * Random but plausible session logs for property tests: user, system,
 * assistant and tool messages interleaved, with unanswered, orphan and
 * duplicate tool calls and results, aborted turns, hidden messages, pivots
 * (compaction.completed with a prefix) and prune/archive events.
 */

/** Every hidden message carries this text, so a test can prove none reaches a render. */
export const HIDDEN_MARKER = 'HIDDEN-7f3a';

const body = fc.oneof(
  fc.constantFrom('', ' ', '\n', 'hello', 'trailing space ', 'two\nlines', '<|endoftext|>', 'x'.repeat(400)),
  fc.string({ maxLength: 12 }),
);
const input = fc.constantFrom<unknown>({}, { cmd: 'ls' }, 'raw', null, [1, 2], 42);
const pick = fc.nat({ max: 50 });
const picks = fc.array(pick, { minLength: 1, maxLength: 3 });

interface CallSpec {
  /** Repeats an earlier call id (refused at write time, but the view must survive it). */
  reuse: number | null;
  /** Ids with `.` and `:`, legal here but not for Anthropic. */
  oddId: boolean;
  name: string;
  input: unknown;
}

const callSpec: fc.Arbitrary<CallSpec> = fc.record({
  reuse: fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: pick }),
  oddId: fc.boolean(),
  name: fc.constantFrom('bash', 'read', 'skill'),
  input,
});

type Step =
  | { kind: 'user'; body: string; file: boolean; hide: boolean }
  | { kind: 'system'; body: string }
  | { kind: 'assistant'; body: string; reasoning: boolean; calls: CallSpec[]; hide: boolean }
  | { kind: 'results'; picks: number[]; orphan: boolean; split: boolean; hide: boolean; output: string; attach: boolean }
  | { kind: 'aborted' }
  | { kind: 'usage'; input: number; output: number }
  | { kind: 'prune'; picks: number[]; clearInputs: boolean }
  | { kind: 'archive'; picks: number[]; digest: 'none' | 'user' | 'assistant' | 'hidden' }
  | { kind: 'compaction'; back: number; prefix: 'summary' | 'assistant-first' | 'pair' | 'unanswered' | 'hidden' | 'empty' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('user' as const), body, file: fc.boolean(), hide: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('system' as const), body }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('assistant' as const),
      body,
      reasoning: fc.boolean(),
      calls: fc.array(callSpec, { maxLength: 3 }),
      hide: fc.boolean(),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('results' as const),
      picks,
      orphan: fc.boolean(),
      split: fc.boolean(),
      hide: fc.boolean(),
      output: body,
      attach: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('aborted' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('usage' as const), input: fc.nat({ max: 5_000 }), output: fc.nat({ max: 500 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('prune' as const), picks, clearInputs: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('archive' as const),
      picks,
      digest: fc.constantFrom('none' as const, 'user' as const, 'assistant' as const, 'hidden' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('compaction' as const),
      back: fc.nat({ max: 6 }),
      prefix: fc.constantFrom(
        'summary' as const,
        'assistant-first' as const,
        'pair' as const,
        'unanswered' as const,
        'hidden' as const,
        'empty' as const,
      ),
    }),
  },
);

const image: FilePart = { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=', filename: 'shot.png' };
const hiddenMeta = { agentVisible: false };

/** Turns steps into drafts, tracking call ids so results, prunes and archives can refer to them. */
class LogWriter {
  readonly drafts: EventDraft[] = [];
  private readonly calls: string[] = [];
  private readonly open: string[] = [];
  private n = 0;

  private id(prefix: string): string {
    this.n += 1;
    return `${prefix}${this.n}`;
  }

  private called(choice: number): string | undefined {
    if (this.open.length > 0) return this.open.splice(choice % this.open.length, 1)[0];
    return this.calls.length > 0 ? this.calls[choice % this.calls.length] : undefined;
  }

  private anyCalls(choices: number[]): string[] {
    return this.calls.length === 0 ? [] : [...new Set(choices.map((c) => this.calls[c % this.calls.length]))];
  }

  write(s: Step): void {
    switch (s.kind) {
      case 'user': {
        const parts: Part[] = [text(s.hide ? `${HIDDEN_MARKER} ${s.body}` : s.body), ...(s.file ? [image] : [])];
        this.drafts.push(added(msg(this.id('u'), 'user', parts, s.hide ? hiddenMeta : undefined)));
        break;
      }
      case 'system':
        this.drafts.push(added(msg(this.id('s'), 'system', [text(s.body)])));
        break;
      case 'assistant': {
        const calls = s.calls.map((spec) => {
          const reused = spec.reuse !== null && this.calls.length > 0 ? this.calls[spec.reuse % this.calls.length] : null;
          const callId = reused ?? this.id(spec.oddId ? 'fn.call:' : 'call_');
          // Hidden calls stay referable, so later results for them become orphans.
          if (!reused) this.calls.push(callId);
          if (!reused && !s.hide) this.open.push(callId);
          return call(callId, spec.name, spec.input);
        });
        const lead: Part[] = [text(s.hide ? HIDDEN_MARKER : s.body)];
        if (s.reasoning) lead.push({ type: 'reasoning', text: 'thinking' });
        this.drafts.push(added(msg(this.id('a'), 'assistant', [...lead, ...calls], s.hide ? hiddenMeta : undefined)));
        break;
      }
      case 'results': {
        const output = s.hide ? `${HIDDEN_MARKER} ${s.output}` : s.output;
        const ids = s.picks.map((c) => this.called(c)).filter((id): id is string => id !== undefined);
        const withMedia = (id: string) => ({ attachments: [image], outputRef: { id: `ref-${id}`, byte_size: 1, line_count: 1 } });
        const results: ToolResultPart[] = [...ids, ...(s.orphan ? [this.id('orphan_')] : [])].map((id) =>
          result(id, output, s.attach ? withMedia(id) : {}),
        );
        const groups = s.split ? results.map((r) => [r]) : [results];
        for (const parts of groups.filter((g) => g.length > 0)) {
          this.drafts.push(added(msg(this.id('t'), 'tool', parts, s.hide ? hiddenMeta : undefined)));
        }
        break;
      }
      case 'aborted':
        this.drafts.push(aborted());
        break;
      case 'usage':
        this.drafts.push(usage(s.input, s.output));
        break;
      case 'prune':
        this.drafts.push(pruned(this.anyCalls(s.picks), s.clearInputs));
        break;
      case 'archive':
        this.drafts.push(archived(this.anyCalls(s.picks), this.digest(s.digest)));
        break;
      case 'compaction':
        this.drafts.push(compacted(Math.max(0, this.drafts.length - s.back), this.prefix(s.prefix)));
        break;
    }
  }

  private digest(kind: 'none' | 'user' | 'assistant' | 'hidden'): Message | null {
    if (kind === 'none') return null;
    if (kind === 'hidden') return msg(this.id('d'), 'user', [text(HIDDEN_MARKER)], hiddenMeta);
    return msg(this.id('d'), kind, [text('digest of archived tool results')]);
  }

  private prefix(kind: 'summary' | 'assistant-first' | 'pair' | 'unanswered' | 'hidden' | 'empty'): Message[] {
    const summary = msg(this.id('p'), 'user', [text('summary of earlier work')]);
    const callId = this.id('pcall_');
    switch (kind) {
      case 'summary':
        return [summary];
      case 'assistant-first':
        return [msg(this.id('p'), 'assistant', [text('I was working on it')]), summary];
      case 'pair':
        return [summary, msg(this.id('p'), 'assistant', [call(callId)]), msg(this.id('p'), 'tool', [result(callId)])];
      case 'unanswered':
        return [summary, msg(this.id('p'), 'assistant', [call(callId)])];
      case 'hidden':
        return [summary, msg(this.id('p'), 'user', [text(HIDDEN_MARKER)], hiddenMeta)];
      case 'empty':
        return [];
    }
  }
}

/** A stored session log (seq 1..n, starting with session.created). */
export function sessionEventsArbitrary(options: { maxSteps?: number } = {}): fc.Arbitrary<StoredEvent[]> {
  return fc.array(step, { maxLength: options.maxSteps ?? 30, size: 'max' }).map((steps) => {
    const writer = new LogWriter();
    writer.drafts.push({ type: 'session.created', data: { model: 'test', config: {}, metadata: {} } });
    for (const s of steps) writer.write(s);
    return storeEvents(writer.drafts);
  });
}
