import fc from 'fast-check';
import { StoredEvent } from '../events';
import { buildDigestMessage, heuristicDigest } from './digest';
import { ArchiveOptions, PruneOptions } from './options';
import { selectArchive } from './select-archive';
import { selectPrune } from './select-prune';
import { archiveOptions, opencodeOptions, outputOf, sessionLog } from './testing/session-log';

const TOOLS = ['bash', 'read_file', 'skill', 'web_search'];

const toolUse = fc.record({ name: fc.constantFrom(...TOOLS), tokens: fc.nat(30_000), inputChars: fc.nat(2_000) });
const step = fc.oneof(
  { arbitrary: fc.constant({ kind: 'user' as const }), weight: 3 },
  { arbitrary: fc.constant({ kind: 'synthetic' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'compaction' as const }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('tools' as const),
      uses: fc.array(toolUse, { minLength: 1, maxLength: 3 }),
      hidden: fc.nat(9).map((n) => n === 0),
    }),
    weight: 8,
  },
);
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;
const session = fc.array(step, { minLength: 5, maxLength: 40, size: 'max' });

function build(steps: Step[]) {
  const log = sessionLog();
  for (const s of steps) {
    if (s.kind === 'user') log.user();
    else if (s.kind === 'synthetic') log.user('continue', { userVisible: false, kind: 'auto_continue' });
    else if (s.kind === 'compaction') log.compacted();
    else {
      const specs = s.uses.map((u) => ({ name: u.name, output: outputOf(u.tokens), input: { q: 'i'.repeat(u.inputChars) } }));
      log.tools(...specs.map((spec) => ({ ...spec, hidden: s.hidden })));
    }
  }
  return log;
}

const toolNames = (events: readonly StoredEvent[]) =>
  new Map(
    events
      .flatMap((e) => (e.type === 'message.added' ? e.data.message.parts : []))
      .flatMap((p) => (p.type === 'tool_result' ? [[p.callId, p.name] as const] : [])),
  );

const tools = fc.subarray(TOOLS);
const pruneOptions: fc.Arbitrary<PruneOptions> = fc.oneof(
  fc
    .record({ protectTurns: fc.nat(3), protectTokens: fc.nat(60_000), minimumTokens: fc.nat(30_000), protectedTools: tools })
    .map((o) => opencodeOptions(o)),
  fc
    .record({
      trigger: fc.oneof(
        fc.record({ type: fc.constant('input_tokens' as const), value: fc.nat(150_000) }),
        fc.record({ type: fc.constant('tool_uses' as const), value: fc.nat(15) }),
      ),
      keep: fc.record({ type: fc.constant('tool_uses' as const), value: fc.nat(6) }),
      clearAtLeast: fc.option(fc.nat(20_000), { nil: undefined }),
      excludeTools: tools,
      clearToolInputs: fc.boolean(),
      protectedTools: tools,
    })
    .map((o) => opencodeOptions({ mode: 'anthropic', ...o })),
);
const archive: fc.Arbitrary<ArchiveOptions> = fc
  .record({ toolCallCutoff: fc.nat(12), strategy: fc.constantFrom('llm' as const, 'heuristic' as const) })
  .map((o) => archiveOptions(o));
const inputTokens = fc.option(fc.nat(200_000), { nil: undefined });

describe('idempotence', () => {
  it('a prune decision, once appended, makes the next prune select nothing', () => {
    fc.assert(
      fc.property(session, pruneOptions, inputTokens, (steps, options, tokens) => {
        // given a session and what the prune job selects in it
        const log = build(steps);
        const decision = selectPrune(log.events, options, tokens);
        if (!decision) return;
        // then the decision respects its limits
        const never = [...options.protectedTools, ...(options.excludeTools ?? [])];
        const names = toolNames(log.events);
        const minimum = options.mode === 'anthropic' ? (options.clearAtLeast ?? 0) : options.minimumTokens;
        expect(new Set(decision.callIds).size).toBe(decision.callIds.length);
        expect(decision.callIds.filter((id) => never.includes(names.get(id)!))).toEqual([]);
        expect(decision.tokensFreed).toBeGreaterThanOrEqual(minimum);
        // and, once appended, is not repeated
        log.pruned(decision);
        expect(selectPrune(log.events, options, tokens)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it('after both jobs ran and their events were appended, neither selects anything', () => {
    fc.assert(
      fc.property(session, pruneOptions, archive, inputTokens, (steps, prune, archiving, tokens) => {
        // given both jobs' decisions appended
        const log = build(steps);
        const pruned = selectPrune(log.events, prune, tokens);
        if (pruned) log.pruned(pruned);
        const archived = selectArchive(log.events, archiving);
        if (archived) {
          const digest = buildDigestMessage(heuristicDigest(archived.pairs, archiving), `digest${log.events.length}`);
          log.archived({ callIds: archived.callIds, digest });
        }
        // then a second run selects nothing
        expect(selectPrune(log.events, prune, tokens)).toBeNull();
        expect(selectArchive(log.events, archiving)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });
});
