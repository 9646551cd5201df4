import { DomainError } from '../errors';
import {
  applyConfigPatch,
  DEFAULT_PRESET,
  PRESET_NAMES,
  PRESETS,
  PRUNE_ENABLED_BY_PRESET,
  resolveSessionConfig,
  validateSessionConfigInput,
} from './index';

const issuesOf = (input: unknown) => {
  const result = validateSessionConfigInput(input);
  return result.ok ? [] : result.issues.map(({ path, code }) => ({ path, code }));
};

const thrown = (run: () => unknown): DomainError => {
  try {
    run();
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
};

describe('presets', () => {
  it.each(PRESET_NAMES)('%s is a complete, valid config', (name) => {
    expect(validateSessionConfigInput(PRESETS[name])).toEqual({ ok: true, value: PRESETS[name] });
    expect(resolveSessionConfig(name)).toEqual(PRESETS[name]);
  });

  it('defaults to spec-000', () => {
    expect(DEFAULT_PRESET).toBe('spec-000');
    expect(resolveSessionConfig().preset).toBe('spec-000');
  });

  it('states prune.enabled per preset exactly as documented', () => {
    expect(PRUNE_ENABLED_BY_PRESET).toEqual({
      opencode: true,
      codex: false,
      'spec-000': false,
      'spec-001': false,
      'spec-003': false,
    });
    for (const name of PRESET_NAMES) expect(resolveSessionConfig(name).prune.enabled).toBe(PRUNE_ENABLED_BY_PRESET[name]);
  });

  it('lets rewrites pay for themselves and compacts early on a cold cache in every preset; the seeds\' timing is one setting away', () => {
    for (const name of PRESET_NAMES) {
      expect(PRESETS[name].cache).toEqual({ breakpoints: 'off', lifetimeSeconds: 300, rewrites: 'pay-off', timing: 'cache-aware', coldMargin: 0.1 });
      expect(PRESETS[name].toolOutput.trimStep).toBe(0);
      const seed = resolveSessionConfig(name, undefined, { cache: { rewrites: 'always', timing: 'threshold' } });
      expect(seed.cache).toMatchObject({ rewrites: 'always', timing: 'threshold' });
    }
    expect(issuesOf({ cache: { rewrites: 'never', coldMargin: 0.6, lifetimeSeconds: 0 }, toolOutput: { trimStep: 1 } }).map((i) => i.path)).toEqual([
      'cache.rewrites',
      'cache.coldMargin',
      'cache.lifetimeSeconds',
      'toolOutput.trimStep',
    ]);
  });

  it('reproduces each system', () => {
    const opencode = PRESETS.opencode;
    expect(opencode.compaction).toMatchObject({
      trigger: { type: 'reserved', reserved: null, buffer: 20_000, outputCap: 32_000 },
      thresholdRatio: 1,
      strategy: 'summary-tail',
      retainLastTurns: 2,
      tailBudget: { minTokens: 2_000, maxTokens: 8_000, usableRatio: 0.25 },
      toolResultClipRunes: 2_000,
      autoContinue: true,
    });
    expect(opencode.prune).toMatchObject({ protectTokens: 40_000, minimumTokens: 20_000, protectedTools: ['skill'] });
    expect(PRESETS.codex.compaction).toMatchObject({ thresholdRatio: 0.9, strategy: 'user-rebuild', userMessageMaxTokens: 20_000 });
    expect(PRESETS.codex.toolOutput.truncation).toEqual({ tokens: 10_000 });
    expect(PRESETS['spec-000'].compaction).toMatchObject({ thresholdRatio: 0.8, strategy: 'retain-summary', retainLastTurns: 1 });
    expect(PRESETS['spec-000'].toolOutput).toMatchObject({ viewTrim: true, maxMessageBytes: 51_200, maxLineLength: 2_000 });
    expect(PRESETS['spec-001'].compaction).toMatchObject({
      trigger: { type: 'reserve-chain', reserveTokens: 16_384, maxTokens: 8_000, maxMessages: 50 },
      keepRecentTokens: 20_000,
      keepRecentMessages: 5,
      toolResultClipRunes: 1_800,
    });
    expect(PRESETS['spec-001'].archive).toEqual({
      enabled: true,
      toolCallCutoff: 10,
      strategy: 'llm',
      inputClipChars: 12_000,
      outputClipRunes: 1_200,
      heuristicClipRunes: 800,
    });
    expect(PRESETS['spec-003'].compaction).toMatchObject({ thresholdRatio: 0.75, targetRatio: 0.5, retainLastTurns: 6, maxAttempts: 2 });
  });
});

describe('resolveSessionConfig', () => {
  it('merges preset ← tenant ← session, deep, replacing lists', () => {
    const config = resolveSessionConfig(
      'opencode',
      { compaction: { thresholdRatio: 0.7, summaryDirectives: ['a'] }, prune: { protectTokens: 30_000 } },
      { compaction: { thresholdRatio: 0.6, summaryDirectives: ['b', 'c'] } },
    );
    expect(config.compaction.thresholdRatio).toBe(0.6);
    expect(config.compaction.summaryDirectives).toEqual(['b', 'c']);
    expect(config.prune.protectTokens).toBe(30_000);
    expect(config.prune.minimumTokens).toBe(20_000);
    expect(config.compaction.strategy).toBe('summary-tail');
  });

  it("takes the session's preset, then the tenant's, then the argument", () => {
    expect(resolveSessionConfig('codex', { preset: 'spec-001' }, { preset: 'spec-003' }).preset).toBe('spec-003');
    expect(resolveSessionConfig('codex', { preset: 'spec-001' }).compaction.strategy).toBe('recent-tokens');
    expect(resolveSessionConfig('codex').compaction.strategy).toBe('user-rebuild');
  });

  it('never shares state with the presets: the resolved config is frozen, and the same inputs give the same one', () => {
    const config = resolveSessionConfig('opencode');
    expect(() => config.prune.protectedTools.push('mutated')).toThrow(/not extensible/);
    expect(() => (config.compaction.tailBudget!.maxTokens = 1)).toThrow(/read only/);
    expect(PRESETS.opencode.prune.protectedTools).toEqual(['skill']);
    expect(PRESETS.opencode.compaction.tailBudget!.maxTokens).toBe(8_000);
    expect(resolveSessionConfig('opencode')).toBe(config);
    expect(resolveSessionConfig('opencode', { prune: { protectedTools: ['x'] } })).not.toBe(config);
  });

  it('merges a trigger of the same type, and starts another type from its defaults', () => {
    const same = resolveSessionConfig('spec-000', undefined, { compaction: { trigger: { type: 'ratio', tokenLimit: 100_000 } } });
    expect(same.compaction.trigger).toEqual({ type: 'ratio', outputReserve: 0, tokenLimit: 100_000 });
    const other = resolveSessionConfig('spec-000', undefined, { compaction: { trigger: { type: 'reserve-chain', maxMessages: 20 } } });
    expect(other.compaction.trigger).toEqual({ type: 'reserve-chain', reserveTokens: 16_384, maxTokens: 8_000, maxMessages: 20 });
  });

  it('fills a budget set on a null one from the defaults', () => {
    const config = resolveSessionConfig('spec-003', undefined, { compaction: { tailBudget: { maxTokens: 5_000 } } });
    expect(config.compaction.tailBudget).toEqual({ minTokens: 2_000, maxTokens: 5_000, usableRatio: 0.25 });
    expect(resolveSessionConfig('opencode', undefined, { compaction: { tailBudget: null } }).compaction.tailBudget).toBeNull();
  });

  it('overrides model limits, and null drops an override', () => {
    expect(resolveSessionConfig('opencode', { limits: { context: 64_000 } }).limits).toEqual({ context: 64_000 });
    expect(resolveSessionConfig('opencode', { limits: { context: 64_000 } }, { limits: { context: null } }).limits).toEqual({});
  });

  it("selects Anthropic prune mode when an input sets an Anthropic parameter, unless it names the mode", () => {
    expect(resolveSessionConfig('opencode', undefined, { prune: { clearAtLeast: 5_000 } }).prune.mode).toBe('anthropic');
    expect(resolveSessionConfig('opencode', { prune: { clearAtLeast: 5_000 } }, { prune: { mode: 'opencode' } }).prune.mode).toBe(
      'opencode',
    );
    expect(resolveSessionConfig('opencode', undefined, { prune: { excludeTools: [] } }).prune.mode).toBe('opencode');
  });

  it('throws invalid_config with the issues', () => {
    const error = thrown(() => resolveSessionConfig('opencode', undefined, { compaction: { thresholdRatio: 2 } }));
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ kind: 'invalid', code: 'invalid_config' });
    expect(error.details).toMatchObject({
      source: 'session',
      issues: [{ path: 'compaction.thresholdRatio', code: 'out_of_range' }],
    });
  });

  it('rejects a tail budget whose minimum is above its maximum', () => {
    const error = thrown(() => resolveSessionConfig('opencode', undefined, { compaction: { tailBudget: { minTokens: 9_000 } } }));
    expect(error.details).toMatchObject({ issues: [{ path: 'compaction.tailBudget', code: 'invalid_combination' }] });
  });
});

describe('validateSessionConfigInput', () => {
  it('accepts an empty patch and a partial one', () => {
    expect(issuesOf({})).toEqual([]);
    expect(issuesOf({ compaction: { auto: false }, toolOutput: { truncation: { bytes: 10_000 } } })).toEqual([]);
  });

  it.each([
    [{ compaction: { nope: 1 } }, 'compaction.nope', 'unknown_key'],
    [{ extra: {} }, 'extra', 'unknown_key'],
    [{ compaction: { enabled: 'yes' } }, 'compaction.enabled', 'wrong_type'],
    [{ compaction: 'off' }, 'compaction', 'wrong_type'],
    [{ compaction: { thresholdRatio: 0 } }, 'compaction.thresholdRatio', 'out_of_range'],
    [{ compaction: { thresholdRatio: Number.NaN } }, 'compaction.thresholdRatio', 'wrong_type'],
    [{ compaction: { retainLastTurns: 1.5 } }, 'compaction.retainLastTurns', 'not_integer'],
    [{ compaction: { strategy: 'magic' } }, 'compaction.strategy', 'invalid_value'],
    [{ compaction: { trigger: { reserved: 1 } } }, 'compaction.trigger.type', 'missing_type'],
    [{ compaction: { trigger: { type: 'ratio', reserved: 1 } } }, 'compaction.trigger.reserved', 'unknown_key'],
    [{ compaction: { summaryDirectives: ['ok', 3] } }, 'compaction.summaryDirectives[1]', 'wrong_type'],
    [{ compaction: { summaryDirectives: Array(51).fill('x') } }, 'compaction.summaryDirectives', 'too_many_items'],
    [{ compaction: { summaryPrompt: '' } }, 'compaction.summaryPrompt', 'out_of_range'],
    [{ toolOutput: { truncation: { tokens: 1, bytes: 2 } } }, 'toolOutput.truncation', 'invalid_value'],
    [{ limits: { output: 0 } }, 'limits.output', 'out_of_range'],
    [{ preset: 'claude' }, 'preset', 'invalid_value'],
    [[], '', 'wrong_type'],
    [{ compaction: { constructor: 1 } }, 'compaction.constructor', 'unknown_key'],
    [JSON.parse('{"__proto__": {"compaction": {}}}'), '__proto__', 'unknown_key'],
    [{ compaction: { trigger: { type: 'toString' } } }, 'compaction.trigger.type', 'invalid_value'],
  ])('rejects %j at %s with %s', (input, path, code) => {
    expect(issuesOf(input)).toEqual([{ path, code }]);
  });

  it('accepts the summary record settings: todo tool names and the after-compaction share', () => {
    expect(issuesOf({ compaction: { todoTools: ['my_plan'], maxTokensAfterRatio: 0.4 } })).toEqual([]);
    expect(issuesOf({ compaction: { maxTokensAfterRatio: null } })).toEqual([]);
    expect(issuesOf({ compaction: { maxTokensAfterRatio: 0 } })).toEqual([{ path: 'compaction.maxTokensAfterRatio', code: 'out_of_range' }]);
    expect(issuesOf({ compaction: { todoTools: [1] } })).toEqual([{ path: 'compaction.todoTools[0]', code: 'wrong_type' }]);
  });

  it('accepts the pin budget as a non-negative integer of tokens, and resolves it per session', () => {
    expect(issuesOf({ pins: { maxTokens: 0 } })).toEqual([]);
    expect(issuesOf({ pins: { maxTokens: -1 } })).toEqual([{ path: 'pins.maxTokens', code: 'out_of_range' }]);
    expect(issuesOf({ pins: { maxTokens: 1.5 } })).toEqual([{ path: 'pins.maxTokens', code: 'not_integer' }]);
    expect(issuesOf({ pins: { max: 1 } })).toEqual([{ path: 'pins.max', code: 'unknown_key' }]);
    expect(resolveSessionConfig('codex', { pins: { maxTokens: 8_000 } }, { pins: { maxTokens: 500 } }).pins).toEqual({ maxTokens: 500 });
    expect(resolveSessionConfig('opencode').pins).toEqual({ maxTokens: 4_000 });
  });

  it('reports every issue at once', () => {
    expect(issuesOf({ prune: { enabled: 1, keep: { type: 'input_tokens' } }, archive: { strategy: 'x' } })).toEqual([
      { path: 'prune.enabled', code: 'wrong_type' },
      { path: 'prune.keep.type', code: 'invalid_value' },
      { path: 'archive.strategy', code: 'invalid_value' },
    ]);
  });
});

describe('applyConfigPatch', () => {
  it('deep-merges a patch into the session overrides', () => {
    const overrides = applyConfigPatch({ compaction: { auto: false, thresholdRatio: 0.5 } }, { compaction: { thresholdRatio: 0.6 } });
    expect(overrides).toEqual({ compaction: { auto: false, thresholdRatio: 0.6 } });
  });

  it("keeps a null limit so it still drops the tenant's override", () => {
    const overrides = applyConfigPatch({ limits: { context: 10_000 } }, { limits: { context: null } });
    expect(overrides).toEqual({ limits: { context: null } });
    expect(resolveSessionConfig(null, { limits: { context: 64_000 } }, overrides).limits).toEqual({});
  });

  it('re-bases on a new preset, keeping the overrides', () => {
    const overrides = applyConfigPatch({ compaction: { autoContinue: false } }, { preset: 'opencode' });
    const config = resolveSessionConfig('spec-000', undefined, overrides);
    expect(config.compaction).toMatchObject({ strategy: 'summary-tail', autoContinue: false });
  });

  it('refuses an invalid patch', () => {
    expect(thrown(() => applyConfigPatch({}, { prune: { protectTurns: -1 } }))).toMatchObject({
      code: 'invalid_config',
      details: { source: 'patch', issues: [{ path: 'prune.protectTurns', code: 'out_of_range' }] },
    });
  });
});
