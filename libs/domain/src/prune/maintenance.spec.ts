import fc from 'fast-check';
import { DIGEST_KIND, DIGEST_PREFIX } from './digest';
import {
  archiveActive,
  archivedEvent,
  maintenanceWanted,
  planStillHolds,
  prunedEvent,
  selectMaintenance,
  selectPruneAfterArchive,
} from './maintenance';
import { selectPrune } from './select-prune';
import { archiveOptions, opencodeOptions, outputOf, sessionLog } from './testing/session-log';

describe('archiveActive and maintenanceWanted', () => {
  it.each([
    [{}, true],
    [{ enabled: false }, false],
    [{ strategy: 'off' as const }, false],
    [{ toolCallCutoff: 0 }, false],
    [{ strategy: 'llm' as const }, true],
  ])('archive %j → %s', (overrides, active) => {
    expect(archiveActive(archiveOptions(overrides))).toBe(active);
  });

  it('wants the job when either part can act', () => {
    const off = { prune: opencodeOptions({ enabled: false }), archive: archiveOptions({ enabled: false }) };
    expect(maintenanceWanted(off)).toBe(false);
    expect(maintenanceWanted({ ...off, prune: opencodeOptions() })).toBe(true);
    expect(maintenanceWanted({ ...off, archive: archiveOptions() })).toBe(true);
    expect(maintenanceWanted({ ...off, archive: archiveOptions({ strategy: 'off' }) })).toBe(false);
  });
});

describe('selectPruneAfterArchive', () => {
  it('leaves pairs being archived to the archive and counts only what stays visible', () => {
    // given three old 30,000-token results, then two user turns
    const log = sessionLog().user('go');
    const [first, second] = [log.tool({ output: outputOf(30_000) }), log.tool({ output: outputOf(30_000) })];
    log.tool({ output: outputOf(30_000) });
    log.user().user();
    const options = opencodeOptions();
    // when the oldest is archived first
    const decision = selectPruneAfterArchive(log.events, [first], options);
    // then only the second is pruned (the third is the protected 40,000)
    expect(selectPrune(log.events, options)?.callIds).toEqual([first, second]);
    expect(decision?.callIds).toEqual([second]);
    expect(decision?.tokensFreed).toBe(30_000);
  });

  it('is selectPrune when nothing is archived', () => {
    const log = sessionLog().user('go');
    log.tool({ output: outputOf(70_000) });
    log.user().user();
    expect(selectPruneAfterArchive(log.events, [], opencodeOptions())).toEqual(selectPrune(log.events, opencodeOptions()));
  });
});

describe('planStillHolds', () => {
  it.each([
    [['a'], ['a', 'b'], true],
    [['a', 'b'], ['a', 'b'], true],
    [['a', 'b'], ['a'], false],
    [['b'], ['a', 'b'], false],
    [['a'], undefined, false],
    [[], ['a'], false],
  ])('planned %j on fresh %j → %s', (planned, fresh, holds) => {
    expect(planStillHolds(planned, fresh)).toBe(holds);
  });
});

describe('event builders', () => {
  it('names events by their seq and builds the digest as seed 001 tool_summary message', () => {
    const archived = archivedEvent(7, ['c1', 'c2'], '- bash (ok): done', { strategy: 'llm', digestBy: 'heuristic', fallback: 'no_llm_configured' });
    expect(archived).toEqual({
      id: 'archive-7',
      type: 'tool_results.archived',
      data: {
        callIds: ['c1', 'c2'],
        digest: {
          id: 'archive-7-digest',
          role: 'user',
          parts: [{ type: 'text', text: `${DIGEST_PREFIX}\n- bash (ok): done` }],
          metadata: { agentVisible: true, userVisible: false, kind: DIGEST_KIND },
        },
        strategy: 'llm',
        digestBy: 'heuristic',
        fallback: 'no_llm_configured',
      },
    });
    const decision = { callIds: ['c3'], tokensFreed: 10, policy: { mode: 'opencode' }, clearInputs: false, cleared_tool_uses: 1, cleared_input_tokens: 10 };
    expect(prunedEvent(8, decision as never)).toEqual({ id: 'prune-8', type: 'tool_outputs.pruned', data: decision });
  });
});

describe('selectMaintenance', () => {
  const toolUse = fc.record({ name: fc.constantFrom('bash', 'skill', 'read_file'), tokens: fc.nat(30_000) });
  const step = fc.oneof(
    { arbitrary: fc.constant({ kind: 'user' as const }), weight: 2 },
    { arbitrary: fc.constant({ kind: 'compaction' as const }), weight: 1 },
    { arbitrary: fc.record({ kind: fc.constant('tools' as const), uses: fc.array(toolUse, { minLength: 1, maxLength: 3 }) }), weight: 6 },
  );

  it('once both decisions are appended, a second run selects nothing, and nothing is both archived and pruned', () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 3, maxLength: 30 }),
        fc.nat(12),
        fc.record({ protectTokens: fc.nat(60_000), minimumTokens: fc.nat(30_000) }),
        (steps, cutoff, prune) => {
          // given a session
          const log = sessionLog();
          for (const s of steps) {
            if (s.kind === 'user') log.user();
            else if (s.kind === 'compaction') log.compacted();
            else log.tools(...s.uses.map((use) => ({ name: use.name, output: outputOf(use.tokens) })));
          }
          const config = { prune: opencodeOptions(prune), archive: archiveOptions({ toolCallCutoff: cutoff }) };
          // when both decisions are appended, archive first
          const first = selectMaintenance(log.events, config);
          const archivedIds = first.archive?.callIds ?? [];
          expect(first.prune?.callIds.filter((id) => archivedIds.includes(id)) ?? []).toEqual([]);
          if (first.archive) log.archived({ callIds: first.archive.callIds, digest: null });
          if (first.prune) log.pruned(first.prune);
          // then
          expect(selectMaintenance(log.events, config)).toEqual({ archive: null, prune: null });
        },
      ),
      { numRuns: 300 },
    );
  });
});
