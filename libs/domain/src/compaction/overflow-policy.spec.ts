import { CompactionConfig, PRESETS, PresetName } from '../config';
import type { ModelLimits } from '../models/model-registry';
import { boundAfterGrowth, coldCacheMargin, compactionReasonFor, evaluateOverflow, growthThreshold, mayOverflow, OverflowEvaluation, shouldSuppressAutoCompaction } from './overflow-policy';

const compaction = (preset: PresetName, patch: Partial<CompactionConfig> = {}): CompactionConfig => ({
  ...PRESETS[preset].compaction,
  ...patch,
});

const evaluate = (preset: PresetName, limits: ModelLimits, total: number, patch: Partial<CompactionConfig> = {}) =>
  evaluateOverflow({ tokens: { total }, limits, config: compaction(preset, patch) });

describe('evaluateOverflow per preset', () => {
  describe('opencode: reserved = min(20k, max output); usable = input - reserved, or context - max output', () => {
    const limits = { context: 400_000, input: 200_000, output: 32_000 };

    it('limit.input 200,000 and max output 32,000 give usable 180,000', () => {
      expect(evaluate('opencode', limits, 179_999)).toEqual({
        overflow: false,
        reason: 'below_threshold',
        usable: 180_000,
        threshold: 180_000,
        ratio: 179_999 / 180_000,
      });
      expect(evaluate('opencode', limits, 180_000)).toMatchObject({ overflow: true, reason: 'threshold' });
    });

    it('without an input limit subtracts the max output, capped at 32,000', () => {
      expect(evaluate('opencode', { context: 200_000, output: 64_000 }, 0).usable).toBe(168_000);
      expect(evaluate('opencode', { context: 200_000, output: 8_192 }, 0).usable).toBe(191_808);
    });

    it('reserves a smaller output fully, and honours a configured reserve', () => {
      expect(evaluate('opencode', { context: 200_000, input: 150_000, output: 8_000 }, 0).usable).toBe(142_000);
      const trigger = { type: 'reserved' as const, reserved: 5_000, buffer: 20_000, outputCap: 32_000 };
      expect(evaluate('opencode', limits, 0, { trigger }).usable).toBe(195_000);
    });

    it('treats context 0 as unlimited', () => {
      expect(evaluate('opencode', { context: 0, output: 4_096 }, 10_000_000)).toEqual({
        overflow: false,
        reason: 'unlimited',
        usable: null,
        threshold: null,
        ratio: null,
      });
    });
  });

  describe('codex: 90% of the window, at most the configured limit', () => {
    it('uses the input limit as the window', () => {
      expect(evaluate('codex', { context: 400_000, input: 272_000, output: 128_000 }, 244_800)).toMatchObject({
        overflow: true,
        usable: 272_000,
        threshold: 244_800,
      });
      expect(evaluate('codex', { context: 200_000, output: 100_000 }, 179_999)).toMatchObject({ overflow: false, threshold: 180_000 });
    });

    it('takes min(configured, 90%)', () => {
      const trigger = { type: 'ratio' as const, outputReserve: 0, tokenLimit: 150_000 };
      expect(evaluate('codex', { context: 200_000, output: 100_000 }, 150_000, { trigger })).toMatchObject({
        overflow: true,
        threshold: 150_000,
      });
    });
  });

  it('spec-000: contextLimit * 0.8, the limit being max_input_tokens else the window', () => {
    expect(evaluate('spec-000', { context: 200_000, output: 64_000 }, 160_000)).toMatchObject({ overflow: true, threshold: 160_000 });
    expect(evaluate('spec-000', { context: 400_000, input: 272_000, output: 128_000 }, 0).threshold).toBe(217_600);
  });

  describe('spec-001: window - 16,384, else MaxTokens 8,000, else MaxMessages 50', () => {
    it('reserves 16,384 of a known window', () => {
      expect(evaluate('spec-001', { context: 128_000, output: 16_384 }, 111_616)).toMatchObject({ overflow: true, usable: 111_616 });
    });

    it('falls back to 8,000 tokens without a window', () => {
      expect(evaluate('spec-001', { context: 0, output: 4_096 }, 8_000)).toMatchObject({ overflow: true, threshold: 8_000 });
    });

    it('then counts visible messages', () => {
      const trigger = { type: 'reserve-chain' as const, reserveTokens: 16_384, maxTokens: 0, maxMessages: 50 };
      const config = compaction('spec-001', { trigger });
      const limits = { context: 0, output: 4_096 };
      expect(evaluateOverflow({ tokens: { total: 0 }, limits, config, messageCount: 50 })).toEqual({
        overflow: true,
        reason: 'message_count',
        usable: null,
        threshold: 50,
        ratio: 1,
      });
      expect(evaluateOverflow({ tokens: { total: 0 }, limits, config, messageCount: 49 }).overflow).toBe(false);
    });
  });

  it('spec-003: 75% of the window', () => {
    expect(evaluate('spec-003', { context: 64_000, output: 8_000 }, 48_000)).toMatchObject({ overflow: true, threshold: 48_000 });
  });

  it('enabled=false and auto=false stop automatic compaction but keep the figures', () => {
    const limits = { context: 200_000, output: 64_000 };
    expect(evaluate('spec-000', limits, 199_000, { enabled: false })).toMatchObject({
      overflow: false,
      reason: 'disabled',
      threshold: 160_000,
    });
    expect(evaluate('spec-000', limits, 199_000, { auto: false })).toMatchObject({ overflow: false, reason: 'auto_off', usable: 200_000 });
  });
});

describe('compactionReasonFor', () => {
  const below: OverflowEvaluation = { overflow: false, reason: 'below_threshold', usable: 1, threshold: 1, ratio: 0 };
  const step = (finishReason?: string) => ({ type: 'step.finished', data: { usage: { input_tokens: 1, output_tokens: 1 }, finishReason } });

  it('maps the triggering event to threshold, finish_length or overflow', () => {
    expect(compactionReasonFor(step(), { ...below, overflow: true, reason: 'threshold' })).toBe('threshold');
    expect(compactionReasonFor(step('length'), below)).toBe('finish_length');
    expect(compactionReasonFor(step('max_tokens'), below)).toBe('finish_length');
    expect(compactionReasonFor(step('max_output_tokens'), below)).toBe('finish_length');
    expect(compactionReasonFor({ type: 'context.overflowed', data: {} }, below)).toBe('overflow');
    expect(compactionReasonFor(step('stop'), below)).toBeNull();
    expect(compactionReasonFor({ type: 'message.added', data: {} }, below)).toBeNull();
  });

  it('given a view over the threshold, when an append grows it (a message, a pin), then it asks for a compaction too', () => {
    const over: OverflowEvaluation = { ...below, overflow: true, reason: 'threshold' };
    expect(compactionReasonFor({ type: 'message.added', data: {} }, over)).toBe('threshold');
    expect(compactionReasonFor({ type: 'pin.added', data: {} }, over)).toBe('threshold');
    expect(compactionReasonFor({ type: 'turn.aborted', data: {} }, over)).toBeNull();
    expect(compactionReasonFor({ type: 'pin.removed', data: {} }, over)).toBeNull();
  });

  it('forces compaction with auto=false, never with enabled=false', () => {
    expect(compactionReasonFor({ type: 'context.overflowed', data: {} }, { ...below, reason: 'auto_off' })).toBe('overflow');
    expect(compactionReasonFor({ type: 'context.overflowed', data: {} }, { ...below, reason: 'disabled' })).toBeNull();
    expect(compactionReasonFor(step('length'), { ...below, reason: 'disabled' })).toBeNull();
  });
});

describe('shouldSuppressAutoCompaction (loop guard)', () => {
  const stalled = { seq: 9, markerSeq: 7, auto: true, tokensBefore: 100_000, tokensAfter: 97_000 };

  it('suppresses an automatic compaction that left tokens at or above 95% of the figure before', () => {
    expect(shouldSuppressAutoCompaction(stalled, 96_000, 0.95)).toBe(
      'automatic compaction suspended: the compaction for marker 7 left 96000 tokens, not below 95% of the 100000 before it; compact manually to resume',
    );
    expect(shouldSuppressAutoCompaction(stalled, null, 0.95)).toContain('left 97000 tokens');
  });

  it('lets it run again when the tokens fell below 95%', () => {
    expect(shouldSuppressAutoCompaction(stalled, 94_999, 0.95)).toBeNull();
    expect(shouldSuppressAutoCompaction({ ...stalled, tokensAfter: 30_000 }, null, 0.95)).toBeNull();
  });

  it('is not tripped by a step that ran on the old context while the pivot landed', () => {
    expect(shouldSuppressAutoCompaction({ ...stalled, tokensAfter: 30_000 }, 99_000, 0.95)).toBeNull();
  });

  it('ignores manual compactions and sessions never compacted', () => {
    expect(shouldSuppressAutoCompaction({ ...stalled, auto: false }, 99_000, 0.95)).toBeNull();
    expect(shouldSuppressAutoCompaction(null, 99_000, 0.95)).toBeNull();
  });

  describe('given it tripped with 96,000 tokens measured after the pivot, in a 128,000-token window (it re-arms by itself)', () => {
    const usable = 128_000;

    it('when the view has grown by less than a tenth of the window, then it stays suspended and says when it resumes', () => {
      expect(shouldSuppressAutoCompaction(stalled, 96_000, 0.95, { tokens: 108_799, usable })).toBe(
        'automatic compaction suspended: the compaction for marker 7 left 96000 tokens, not below 95% of the 100000 before it; ' +
          'it resumes once the context reaches 108800 tokens, or compact manually',
      );
    });

    it('when the view has grown by a tenth of the window, then automatic compaction runs again', () => {
      expect(shouldSuppressAutoCompaction(stalled, 96_000, 0.95, { tokens: 108_800, usable })).toBeNull();
    });

    it('when the window is unlimited, then only a manual compaction resumes it', () => {
      expect(shouldSuppressAutoCompaction(stalled, 96_000, 0.95, { tokens: 10_000_000, usable: null })).toContain('compact manually to resume');
    });
  });
});

describe('boundAfterGrowth, growthThreshold and mayOverflow (the cheap check before an append that only grows the view reads the window)', () => {
  const config = PRESETS['spec-000'].compaction;
  const limits = { context: 10_000, output: 1_000 };
  const threshold = growthThreshold(limits, config);

  it('given a bound of 6,000 and 1,999 tokens stored since, then the view is certainly below the threshold (8,000)', () => {
    expect(threshold).toBe(8_000);
    const bound = boundAfterGrowth(6_000, { tokens: 1_999, lastUsage: null });
    expect(bound).toBe(7_999);
    expect(mayOverflow(bound, threshold)).toBe(false);
  });

  it('given growth to the threshold, then it may be over: the window is read', () => {
    expect(mayOverflow(boundAfterGrowth(6_000, { tokens: 2_000, lastUsage: null }), threshold)).toBe(true);
  });

  it('given a step since whose usage plus what came after it is larger, then that is the bound (its usage may be trusted)', () => {
    expect(boundAfterGrowth(3_000, { tokens: 500, lastUsage: { total: 7_800, tokensAfter: 300 } })).toBe(8_100);
    expect(boundAfterGrowth(3_000, { tokens: 500, lastUsage: { total: 1_000, tokensAfter: 300 } })).toBe(3_500);
  });

  it('given a trigger that counts messages, then tokens cannot tell; with compaction or auto off, or no window limit, growth never triggers', () => {
    const messages = { ...PRESETS['spec-001'].compaction, trigger: { type: 'reserve-chain' as const, reserveTokens: 0, maxTokens: 0, maxMessages: 50 } };
    expect(growthThreshold({ context: 0, output: 0 }, messages)).toBeNull();
    expect(mayOverflow(0, null)).toBe(true);
    expect(growthThreshold(limits, { ...config, enabled: false })).toBe(Number.POSITIVE_INFINITY);
    expect(growthThreshold(limits, { ...config, auto: false })).toBe(Number.POSITIVE_INFINITY);
    expect(growthThreshold({ context: 0, output: 0 }, config)).toBe(Number.POSITIVE_INFINITY);
    expect(mayOverflow(10_000_000, Number.POSITIVE_INFINITY)).toBe(false);
  });
});

describe('anticipating the next step', () => {
  const limits = { context: 100_000, output: 10_000 };

  it("given a view below the threshold whose next step's expected growth would cross it, then a compaction is asked for now", () => {
    const config = compaction('opencode');
    const { threshold } = evaluateOverflow({ tokens: { total: 0 }, limits, config });
    expect(evaluateOverflow({ tokens: { total: threshold! - 5_000, expectedGrowth: 5_000 }, limits, config })).toMatchObject({ overflow: true, reason: 'threshold' });
    expect(evaluateOverflow({ tokens: { total: threshold! - 5_001, expectedGrowth: 5_000 }, limits, config }).overflow).toBe(false);
  });

  it('given a huge last step, then at most a quarter of the usable window counts as growth', () => {
    const config = compaction('opencode');
    const { threshold, usable } = evaluateOverflow({ tokens: { total: 0 }, limits, config });
    const total = threshold! - usable! / 4 - 1;
    expect(evaluateOverflow({ tokens: { total, expectedGrowth: 1_000_000 }, limits, config }).overflow).toBe(false);
  });

  it('given anticipateGrowth off, then only the figure itself counts (OpenCode isOverflow)', () => {
    const config = compaction('opencode', { anticipateGrowth: false });
    const { threshold } = evaluateOverflow({ tokens: { total: 0 }, limits, config });
    expect(evaluateOverflow({ tokens: { total: threshold! - 1, expectedGrowth: 5_000 }, limits, config }).overflow).toBe(false);
  });

  it('reports the ratio of the figure itself, not of the anticipated one', () => {
    const config = compaction('opencode');
    expect(evaluateOverflow({ tokens: { total: 45_000, expectedGrowth: 5_000 }, limits, config }).ratio).toBe(45_000 / 90_000);
  });
});

describe('cache-aware timing', () => {
  const cache = { timing: 'cache-aware' as const, lifetimeSeconds: 300, coldMargin: 0.1 };
  const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
  const limits = { context: 100_000, output: 8_000 };

  describe('coldCacheMargin', () => {
    it('gives the margin after a silence longer than the cache lifetime, and nothing within it', () => {
      expect(coldCacheMargin(cache, at(0), at(301))).toBe(0.1);
      expect(coldCacheMargin(cache, at(0), at(300))).toBe(0);
    });

    it('gives nothing with threshold timing or without an earlier event', () => {
      expect(coldCacheMargin({ ...cache, timing: 'threshold' }, at(0), at(3_600))).toBe(0);
      expect(coldCacheMargin(cache, null, at(3_600))).toBe(0);
    });
  });

  it('given a cold cache, a view within the margin below the threshold overflows with reason cache_cold', () => {
    // spec-000: threshold 80,000; the margin 0.1 opens at 72,000 (expected growth counted)
    const cold = (total: number, expectedGrowth = 0) =>
      evaluateOverflow({ tokens: { total, expectedGrowth }, limits, config: compaction('spec-000'), coldMargin: 0.1 });
    expect(cold(71_999)).toMatchObject({ overflow: false, reason: 'below_threshold' });
    expect(cold(72_000)).toMatchObject({ overflow: true, reason: 'cache_cold', threshold: 80_000 });
    expect(cold(70_000, 2_000)).toMatchObject({ overflow: true, reason: 'cache_cold' });
    expect(cold(80_000)).toMatchObject({ overflow: true, reason: 'threshold' });
  });

  it('when the cache is warm the same view waits for the threshold', () => {
    expect(evaluate('spec-000', limits, 79_000)).toMatchObject({ overflow: false, reason: 'below_threshold' });
  });

  it('a cold view asks for a compaction with reason cache_cold, not with auto=false', () => {
    const cold = evaluateOverflow({ tokens: { total: 75_000 }, limits, config: compaction('spec-000'), coldMargin: 0.1 });
    expect(compactionReasonFor({ type: 'message.added', data: {} }, cold)).toBe('cache_cold');
    const autoOff = evaluateOverflow({ tokens: { total: 75_000 }, limits, config: compaction('spec-000', { auto: false }), coldMargin: 0.1 });
    expect(compactionReasonFor({ type: 'message.added', data: {} }, autoOff)).toBeNull();
  });
});
