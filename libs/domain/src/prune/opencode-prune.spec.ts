import { selectPrune } from './select-prune';
import { opencodeOptions, outputOf, sessionLog } from './testing/session-log';

describe('selectPrune, OpenCode mode', () => {
  const options = opencodeOptions();

  it('prunes a 200,000-char output of turn 1 once two more user turns follow', () => {
    // given
    const log = sessionLog().user('turn 1');
    const big = log.tool({ output: 'x'.repeat(200_000) });
    log.user('turn 2').user('turn 3');
    // when
    const decision = selectPrune(log.events, options);
    // then
    expect(decision).toEqual({
      callIds: [big],
      tokensFreed: 50_000,
      policy: {
        mode: 'opencode',
        protectTurns: 2,
        protectTokens: 40_000,
        minimumTokens: 20_000,
        protectedTools: ['skill', 'manage_todo_list'],
      },
      clearInputs: false,
      cleared_tool_uses: 1,
      cleared_input_tokens: 50_000,
    });
  });

  it.each(['skill', 'manage_todo_list'])('leaves the same output of the protected tool %s untouched', (name) => {
    const log = sessionLog().user('turn 1');
    log.tool({ name, output: 'x'.repeat(200_000) });
    log.user('turn 2').user('turn 3');

    expect(selectPrune(log.events, options)).toBeNull();
  });

  it('protects the tools the options name, not the default list', () => {
    const log = sessionLog().user('turn 1');
    log.tool({ name: 'bash', output: outputOf(50_000) });
    const skill = log.tool({ name: 'skill', output: outputOf(50_000) });
    log.user().user();

    expect(selectPrune(log.events, opencodeOptions({ protectedTools: ['bash'] }))?.callIds).toEqual([skill]);
  });

  it('does not count protected outputs toward the protected newest tokens', () => {
    const log = sessionLog().user('turn 1');
    log.tool({ output: outputOf(30_000) });
    log.tool({ name: 'skill', output: outputOf(100_000) });
    log.user().user();

    expect(selectPrune(log.events, options)).toBeNull();
  });

  it('does nothing when the older outputs are below the minimum', () => {
    // given 10k tokens beyond the 40k protected ones
    const log = sessionLog().user('turn 1');
    log.tool({ output: outputOf(10_000) });
    log.tool({ output: outputOf(40_000) });
    log.user().user();
    // then
    expect(selectPrune(log.events, options)).toBeNull();
  });

  // OpenCode (sst/opencode, packages/opencode/src/session/compaction.ts, `prune`): `if (pruned > PRUNE_MINIMUM)`.
  it.each([
    [20_001, true],
    [20_000, false],
    [19_999, false],
  ])('applies only when the pruned total is strictly above the minimum (%i tokens: %s)', (tokens, applies) => {
    const log = sessionLog().user('turn 1');
    const older = log.tool({ output: outputOf(tokens) });
    log.tool({ output: outputOf(40_000) });
    log.user().user();

    const decision = selectPrune(log.events, options);

    expect(decision?.callIds ?? []).toEqual(applies ? [older] : []);
  });

  // OpenCode (sst/opencode, packages/opencode/src/util/token.ts): `Math.max(0, Math.round((input || "").length / 4))`.
  it('counts tokens as OpenCode does, chars / 4 rounded to nearest, not up', () => {
    // given an older output of 80,006 chars: 20,001.5 → 20,002 rounded (ceil would say 20,002 too), and one of 80,001: 20,000.25 → 20,000
    const rounded = sessionLog().user('turn 1');
    const above = rounded.tool({ output: 'x'.repeat(80_006) });
    rounded.tool({ output: outputOf(40_000) });
    rounded.user().user();
    const down = sessionLog().user('turn 1');
    down.tool({ output: 'x'.repeat(80_001) });
    down.tool({ output: outputOf(40_000) });
    down.user().user();
    // then 20,002 > 20,000 prunes; 20,000 (ceil would say 20,001, above the minimum) does not
    expect(selectPrune(rounded.events, options)).toMatchObject({ callIds: [above], tokensFreed: 20_002 });
    expect(selectPrune(down.events, options)).toBeNull();
  });

  // OpenCode prunes `part.state.status === "completed"` tool parts only: an errored result is neither counted nor pruned.
  it('never prunes an errored result, nor counts it toward the protected tokens', () => {
    // given an old errored output and an old completed one, then 40,000 protected tokens
    const log = sessionLog().user('turn 1');
    const failed = log.tool({ output: outputOf(30_000), isError: true });
    const completed = log.tool({ output: outputOf(30_000) });
    log.tool({ output: outputOf(40_000) });
    log.user().user();
    // when
    const decision = selectPrune(log.events, options);
    // then only the completed one goes
    expect(decision?.callIds).toEqual([completed]);
    expect(decision?.callIds).not.toContain(failed);
  });

  it('keeps the newest outputs up to exactly protectTokens and prunes the one that crosses it and older', () => {
    const log = sessionLog().user('turn 1');
    const oldest = log.tool({ output: outputOf(10_000) });
    const crossing = log.tool({ output: outputOf(35_000) });
    log.tool({ output: outputOf(10_000) });
    log.user().user();

    expect(selectPrune(log.events, options)).toMatchObject({ callIds: [oldest, crossing], tokensFreed: 45_000 });
  });

  it('protects the last protectTurns user turns', () => {
    // given a big output in the second of three turns
    const log = sessionLog().user('turn 1').user('turn 2');
    const big = log.tool({ output: outputOf(60_000) });
    log.user('turn 3');
    // then two turns protect it, one does not
    expect(selectPrune(log.events, options)).toBeNull();
    expect(selectPrune(log.events, opencodeOptions({ protectTurns: 1 }))?.callIds).toEqual([big]);
  });

  it('does not count synthetic or hidden user messages as turns', () => {
    const log = sessionLog().user('turn 1');
    log.tool({ output: outputOf(60_000) });
    log.user('turn 2');
    log.user('Continue if you have next steps', { userVisible: false, kind: 'auto_continue' });
    log.user('hidden note', { agentVisible: false });

    expect(selectPrune(log.events, options)).toBeNull();
  });

  it('stops at the pivot: outputs a compaction covered are not considered', () => {
    const log = sessionLog().user('turn 1');
    log.tool({ output: outputOf(60_000) });
    log.compacted().user('turn 2');
    const afterPivot = log.tool({ output: outputOf(60_000) });
    log.user('turn 3');
    // given only one user turn after the pivot's result: protected
    expect(selectPrune(log.events, options)).toBeNull();
    // when one more turn follows, only the post-pivot result is pruned
    log.user('turn 4');
    expect(selectPrune(log.events, options)?.callIds).toEqual([afterPivot]);
  });

  it('stops at an already pruned output: older outputs stay as an earlier run left them', () => {
    // given
    const log = sessionLog().user('turn 1');
    log.tool({ output: outputOf(60_000) });
    const done = log.tool({ output: outputOf(60_000) });
    log.pruned({ callIds: [done], tokensFreed: 60_000, policy: {} });
    log.user('turn 2');
    const fresh = log.tool({ output: outputOf(50_000) });
    log.user().user();
    // when
    const decision = selectPrune(log.events, options);
    // then
    expect(decision?.callIds).toEqual([fresh]);
  });

  it('skips archived and hidden results', () => {
    const log = sessionLog().user('turn 1');
    const archived = log.tool({ output: outputOf(60_000) });
    log.tool({ output: outputOf(60_000), hidden: true });
    log.archived({ callIds: [archived], digest: null });
    log.user().user();

    expect(selectPrune(log.events, options)).toBeNull();
  });

  it('does nothing when disabled', () => {
    const log = sessionLog().user('turn 1');
    log.tool({ output: 'x'.repeat(200_000) });
    log.user().user();

    expect(selectPrune(log.events, opencodeOptions({ enabled: false }))).toBeNull();
  });
});
