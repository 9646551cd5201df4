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

  it.each([
    [20_000, true],
    [19_999, false],
  ])('applies when the pruned total is at least the minimum (%i tokens: %s)', (tokens, applies) => {
    const log = sessionLog().user('turn 1');
    const older = log.tool({ output: outputOf(tokens) });
    log.tool({ output: outputOf(40_000) });
    log.user().user();

    const decision = selectPrune(log.events, options);

    expect(decision?.callIds ?? []).toEqual(applies ? [older] : []);
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
