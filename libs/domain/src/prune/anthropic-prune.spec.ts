import { ANTHROPIC_PRUNE_DEFAULTS, pruneMode } from './options';
import { selectPrune } from './select-prune';
import { opencodeOptions, outputOf, sessionLog, ToolSpec } from './testing/session-log';

/** Anthropic mode with its defaults unless overridden. */
const anthropic = (overrides: Parameters<typeof opencodeOptions>[0] = {}) =>
  opencodeOptions({ mode: 'anthropic', ...overrides });

/** One user turn, then one tool use per spec; returns the call ids, oldest first. */
function toolUses(...specs: ToolSpec[]) {
  const log = sessionLog().user('do it');
  return { log, ids: specs.map((spec) => log.tool(spec)) };
}
const fiveOutputs = () => toolUses(...[1, 2, 3, 4, 5].map(() => ({ output: outputOf(1_000) })));

describe('pruneMode', () => {
  it.each([
    [{}, 'opencode'],
    [{ excludeTools: [], clearToolInputs: false }, 'opencode'],
    [{ trigger: ANTHROPIC_PRUNE_DEFAULTS.trigger }, 'anthropic'],
    [{ keep: ANTHROPIC_PRUNE_DEFAULTS.keep }, 'anthropic'],
    [{ clearAtLeast: 0 }, 'anthropic'],
    [{ excludeTools: ['web_search'] }, 'anthropic'],
    [{ clearToolInputs: true }, 'anthropic'],
    [{ mode: 'opencode' as const, keep: ANTHROPIC_PRUNE_DEFAULTS.keep }, 'opencode'],
  ])('reads %j as %s', (overrides, mode) => {
    expect(pruneMode(opencodeOptions(overrides))).toBe(mode);
  });
});

describe('selectPrune, Anthropic mode', () => {
  it('clears all but the newest 3 tool uses once input exceeds 100,000 tokens, and reports like Anthropic', () => {
    // given
    const { log, ids } = fiveOutputs();
    // when
    const decision = selectPrune(log.events, anthropic(), 100_001);
    // then
    expect(decision).toEqual({
      callIds: ids.slice(0, 2),
      tokensFreed: 2_000,
      policy: {
        mode: 'anthropic',
        trigger: { type: 'input_tokens', value: 100_000 },
        keep: { type: 'tool_uses', value: 3 },
        clearAtLeast: 0,
        excludeTools: [],
        clearToolInputs: false,
        protectedTools: ['skill', 'manage_todo_list'],
      },
      clearInputs: false,
      cleared_tool_uses: 2,
      cleared_input_tokens: 2_000,
    });
  });

  it('does not trigger at or below the input trigger, nor without a known input size', () => {
    const { log } = fiveOutputs();

    expect(selectPrune(log.events, anthropic(), 100_000)).toBeNull();
    expect(selectPrune(log.events, anthropic())).toBeNull();
  });

  it('ignores the OpenCode turn protection: keep alone decides', () => {
    const { log, ids } = fiveOutputs();

    const decision = selectPrune(log.events, anthropic({ keep: { type: 'tool_uses', value: 1 } }), 200_000);

    expect(decision?.callIds).toEqual(ids.slice(0, 4));
  });

  it('triggers on a count of uncleared tool uses above the tool_uses trigger', () => {
    // given 5 tool uses, one of them already cleared
    const { log, ids } = fiveOutputs();
    log.pruned({ callIds: [ids[0]], tokensFreed: 1_000, policy: {} });
    const trigger = (value: number) => anthropic({ trigger: { type: 'tool_uses', value } });
    // then 4 uncleared uses exceed 3 but not 4
    expect(selectPrune(log.events, trigger(3))?.callIds).toEqual([ids[1]]);
    expect(selectPrune(log.events, trigger(4))).toBeNull();
  });

  it.each([
    [2_000, true],
    [2_001, false],
  ])('clears only when at least clear_at_least tokens are freed (%i: %s)', (clearAtLeast, applies) => {
    const { log } = fiveOutputs();

    const decision = selectPrune(log.events, anthropic({ clearAtLeast }), 200_000);

    expect(decision !== null).toBe(applies);
  });

  it('never clears exclude_tools nor protected tools, which still count as kept tool uses', () => {
    // given
    const { log, ids } = toolUses(
      { name: 'web_search', output: outputOf(1_000) },
      { name: 'skill', output: outputOf(1_000) },
      { name: 'bash', output: outputOf(1_000) },
      { name: 'web_search', output: outputOf(1_000) },
      { name: 'bash', output: outputOf(1_000) },
    );
    // when
    const decision = selectPrune(
      log.events,
      anthropic({ excludeTools: ['web_search'], keep: { type: 'tool_uses', value: 2 } }),
      200_000,
    );
    // then
    expect(decision?.callIds).toEqual([ids[2]]);
  });

  it('clear_tool_inputs clears the inputs too and counts their tokens as freed', () => {
    const input = { path: 'x'.repeat(3_990) }; // {"path":"…"} is 4,001 chars: 1,001 tokens
    const { log, ids } = toolUses(...[1, 2, 3, 4].map(() => ({ input, output: outputOf(1_000) })));

    const decision = selectPrune(log.events, anthropic({ clearToolInputs: true }), 200_000);

    expect(decision).toMatchObject({
      callIds: [ids[0]],
      clearInputs: true,
      tokensFreed: 2_001,
      cleared_tool_uses: 1,
      cleared_input_tokens: 2_001,
    });
  });

  it('only considers tool uses after the pivot', () => {
    const { log } = fiveOutputs();
    log.compacted().user();
    const ids = [1, 2, 3, 4].map(() => log.tool({ output: outputOf(1_000) }));

    expect(selectPrune(log.events, anthropic(), 200_000)?.callIds).toEqual([ids[0]]);
  });
});
