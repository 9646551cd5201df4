import { buildDigestMessage, heuristicDigest } from './digest';
import { selectArchive } from './select-archive';
import { archiveOptions, sessionLog } from './testing/session-log';

/** A user turn with `count` tool uses; returns the log and the call ids, oldest first. */
function withToolUses(count: number) {
  const log = sessionLog().user('go');
  return { log, ids: Array.from({ length: count }, (_, i) => log.tool({ output: `out ${i}` })) };
}

describe('selectArchive', () => {
  const options = archiveOptions({ toolCallCutoff: 3 });

  it('archives the oldest results until the visible ones are at the cutoff', () => {
    // given
    const { log, ids } = withToolUses(5);
    // when
    const decision = selectArchive(log.events, options);
    // then
    expect(decision?.callIds).toEqual(ids.slice(0, 2));
    expect(decision?.pairs.map((pair) => pair.result.output)).toEqual(['out 0', 'out 1']);
    expect(decision?.pairs[0].input).toEqual({});
  });

  it('does nothing at the cutoff', () => {
    expect(selectArchive(withToolUses(3).log.events, options)).toBeNull();
  });

  it('counts pruned results (their pairs are still in view) but not archived, hidden or pre-pivot ones', () => {
    // given 2 before the pivot, then 1 archived, 1 hidden, 1 pruned and 3 plain results
    const log = sessionLog().user('go');
    log.tool();
    log.tool();
    log.compacted();
    const archived = log.tool();
    log.tool({ hidden: true });
    const pruned = log.tool();
    const plain = [log.tool(), log.tool(), log.tool()];
    log.archived({ callIds: [archived], digest: null });
    log.pruned({ callIds: [pruned], tokensFreed: 1, policy: {} });
    // then 4 visible: only the pruned one goes
    expect(selectArchive(log.events, options)?.callIds).toEqual([pruned]);
    expect(plain).toHaveLength(3);
  });

  it.each([
    ['disabled', archiveOptions({ enabled: false, toolCallCutoff: 3 })],
    ["strategy 'off' (seed 001: disabled)", archiveOptions({ strategy: 'off', toolCallCutoff: 3 })],
    ['a cutoff of 0', archiveOptions({ toolCallCutoff: 0 })],
  ])('does nothing when %s', (_, disabled) => {
    expect(selectArchive(withToolUses(5).log.events, disabled)).toBeNull();
  });

  it('selects nothing new once its decision is appended with a digest', () => {
    // given
    const { log } = withToolUses(5);
    const decision = selectArchive(log.events, options)!;
    // when
    log.archived({ callIds: decision.callIds, digest: buildDigestMessage(heuristicDigest(decision.pairs, options), 'd1') });
    // then
    expect(selectArchive(log.events, options)).toBeNull();
  });
});
