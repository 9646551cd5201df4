import { MODEL_REGISTRY } from './model-registry';
import { findModel, resolveModelLimits, tokenizerFor } from './resolve-model';

describe('model registry', () => {
  it('lists each id once, in the lowercase form lookups reduce to', () => {
    const ids = MODEL_REGISTRY.flatMap((entry) => entry.ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(findModel(id)?.ids).toContain(id);
  });

  it('keeps input and output within the window', () => {
    for (const { ids, limits } of MODEL_REGISTRY) {
      expect([ids[0], limits.output <= limits.context]).toEqual([ids[0], true]);
      expect([ids[0], (limits.input ?? 0) <= limits.context]).toEqual([ids[0], true]);
    }
  });
});

describe('findModel', () => {
  it.each([
    ['gpt-4o', 'gpt-4o'],
    ['gpt-4o-2024-08-06', 'gpt-4o'],
    ['gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['gpt-3.5-turbo-0125', 'gpt-3.5-turbo'],
    ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
    ['claude-opus-4-20250514', 'claude-opus-4'],
    ['claude-opus-4-1-20250805', 'claude-opus-4-1'],
    ['claude-3-5-sonnet-latest', 'claude-3-5-sonnet'],
    ['anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-sonnet-4-5'],
    ['us.anthropic.claude-haiku-4-5-20251001-v1:0', 'claude-haiku-4-5'],
    ['claude-sonnet-4-5@20250929', 'claude-sonnet-4-5'],
    ['anthropic/claude-sonnet-4.5', 'claude-sonnet-4-5'],
    ['openai/GPT-5', 'gpt-5'],
    ['models/gemini-2.5-pro', 'gemini-2.5-pro'],
    ['gemini-2.5-flash-preview-09-2025', 'gemini-2.5-flash'],
    ['gemini-2.0-flash-001', 'gemini-2.0-flash'],
    ['ft:gpt-4o-mini-2024-07-18:acme::abc123', 'gpt-4o-mini'],
  ])('finds %s as %s', (model, id) => {
    expect(findModel(model)?.ids).toContain(id);
  });

  it.each(['gpt-5.4-mini', 'claude-opus-9', 'llama-3-70b', ''])('does not guess %s from a shorter id', (model) => {
    expect(findModel(model)).toBeUndefined();
  });
});

describe('resolveModelLimits', () => {
  it('gives the registry limits of a known model', () => {
    expect(resolveModelLimits('gpt-4o')).toEqual({ context: 128_000, output: 16_384 });
    expect(resolveModelLimits('gpt-5-2025-08-07')).toEqual({ context: 400_000, input: 272_000, output: 128_000 });
    expect(resolveModelLimits('claude-sonnet-4-5-20250929')).toEqual({ context: 200_000, output: 64_000 });
    expect(resolveModelLimits('gemini-2.5-pro')).toEqual({ context: 1_048_576, output: 65_536 });
  });

  it('is null for an unknown model without limits, which the API turns into a 422', () => {
    expect(resolveModelLimits('my-local-model')).toBeNull();
    expect(resolveModelLimits('my-local-model', { output: 4_000 })).toBeNull();
  });

  it('takes an unknown model from its overrides', () => {
    expect(resolveModelLimits('my-local-model', { context: 32_768 })).toEqual({ context: 32_768, output: 8_192 });
    expect(resolveModelLimits('my-local-model', { context: 500_000 })).toEqual({ context: 500_000, output: 32_000 });
    expect(resolveModelLimits('my-local-model', { input: 10_000, output: 2_000 })).toEqual({
      context: 12_000,
      input: 10_000,
      output: 2_000,
    });
  });

  it('overrides a known model field by field', () => {
    expect(resolveModelLimits('gpt-4o', { output: 4_096 })).toEqual({ context: 128_000, output: 4_096 });
    expect(resolveModelLimits('gpt-5', { input: 100_000 })).toEqual({ context: 400_000, input: 100_000, output: 128_000 });
  });

  it('drops the registry input cap when the session redefines the window', () => {
    expect(resolveModelLimits('gpt-5', { context: 100_000 })).toEqual({ context: 100_000, output: 128_000 });
  });

  it('keeps context 0 as unlimited', () => {
    expect(resolveModelLimits('my-local-model', { context: 0, output: 1_000 })).toEqual({ context: 0, output: 1_000 });
  });
});

describe('tokenizerFor', () => {
  it.each([
    ['gpt-4o', 'o200k_base'],
    ['gpt-4.1-mini', 'o200k_base'],
    ['gpt-5', 'o200k_base'],
    ['o3-2025-04-16', 'o200k_base'],
    ['gpt-4-0613', 'cl100k_base'],
    ['gpt-3.5-turbo', 'cl100k_base'],
    ['claude-sonnet-4-5', 'approx'],
    ['gemini-2.5-flash', 'approx'],
    ['unknown-model', 'approx'],
  ])('%s counts with %s', (model, family) => {
    expect(tokenizerFor(model)).toBe(family);
  });
});
