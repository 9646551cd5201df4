// Type-only imports, in a spec: the SDKs' own usage types are accepted as they are, with no cast.
// eslint-disable-next-line no-restricted-imports
import type { Usage as AnthropicSdkUsage } from '@anthropic-ai/sdk/resources/messages';
import type { LanguageModelUsage } from 'ai';
// eslint-disable-next-line no-restricted-imports
import type { CompletionUsage } from 'openai/resources/completions';
// eslint-disable-next-line no-restricted-imports
import type { ResponseUsage } from 'openai/resources/responses/responses';
import { errorOf } from './testing/expect-domain-error';
import { normalizeUsage, usageDialect } from './usage';

describe('normalizeUsage: a provider usage object, passed whole, in the service fields', () => {
  it('keeps the service fields as they are', () => {
    // given the service's own usage
    const usage = { input_tokens: 10, output_tokens: 2, cache_creation_tokens: 3, cache_read_tokens: 5 };
    // when / then
    expect(usageDialect(usage)).toBe('neutral');
    expect(normalizeUsage(usage)).toEqual(usage);
  });

  it('Chat Completions: prompt_tokens counts cache reads and writes, so they leave input_tokens', () => {
    // given a CompletionUsage as the openai SDK returns it
    const usage: CompletionUsage = {
      prompt_tokens: 1830,
      completion_tokens: 41,
      total_tokens: 1871,
      prompt_tokens_details: { cached_tokens: 1536, cache_write_tokens: 200, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    };
    // when
    const normalized = normalizeUsage(usage);
    // then the three input figures add up to what the prompt measured
    expect(usageDialect(usage)).toBe('openai');
    expect(normalized).toEqual({ input_tokens: 94, output_tokens: 41, cache_creation_tokens: 200, cache_read_tokens: 1536 });
    expect(normalized.input_tokens + normalized.cache_read_tokens! + normalized.cache_creation_tokens!).toBe(usage.prompt_tokens);
  });

  it('Chat Completions without details: no cache figures', () => {
    expect(normalizeUsage({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 })).toEqual({ input_tokens: 12, output_tokens: 3 });
  });

  it('Responses: input_tokens counts cache reads and writes, so they leave input_tokens', () => {
    // given a ResponseUsage as the openai SDK returns it
    const usage: ResponseUsage = {
      input_tokens: 2000,
      input_tokens_details: { cached_tokens: 1024, cache_write_tokens: 0 },
      output_tokens: 80,
      output_tokens_details: { reasoning_tokens: 64 },
      total_tokens: 2080,
    };
    // when / then
    expect(usageDialect(usage)).toBe('openai-responses');
    expect(normalizeUsage(usage)).toEqual({ input_tokens: 976, output_tokens: 80, cache_creation_tokens: 0, cache_read_tokens: 1024 });
  });

  it("Anthropic: input_tokens already leaves the cache out; null cache figures are absent", () => {
    // given a Messages API usage as @anthropic-ai/sdk returns it
    const usage: AnthropicSdkUsage = {
      input_tokens: 25,
      output_tokens: 120,
      cache_creation_input_tokens: 1400,
      cache_read_input_tokens: null,
      cache_creation: null,
      inference_geo: null,
      output_tokens_details: null,
      server_tool_use: null,
      service_tier: 'standard',
      speed: null,
    };
    // when / then
    expect(usageDialect(usage)).toBe('anthropic');
    expect(normalizeUsage(usage)).toEqual({ input_tokens: 25, output_tokens: 120, cache_creation_tokens: 1400 });
  });

  it("AI SDK: noCacheTokens when the provider gave it, else inputTokens minus the cache", () => {
    // given LanguageModelUsage objects as `ai` returns them
    const withBreakdown: LanguageModelUsage = {
      inputTokens: 900,
      inputTokenDetails: { noCacheTokens: 100, cacheReadTokens: 800, cacheWriteTokens: undefined },
      outputTokens: 30,
      outputTokenDetails: { textTokens: 30, reasoningTokens: undefined },
      totalTokens: 930,
    };
    const withoutBreakdown: LanguageModelUsage = {
      inputTokens: 900,
      inputTokenDetails: { noCacheTokens: undefined, cacheReadTokens: 600, cacheWriteTokens: 50 },
      outputTokens: 30,
      outputTokenDetails: { textTokens: undefined, reasoningTokens: undefined },
      totalTokens: 930,
    };
    // when / then (JSON drops the undefined figures, as the wire does)
    const wire = (usage: LanguageModelUsage) => JSON.parse(JSON.stringify(usage));
    expect(usageDialect(withBreakdown)).toBe('ai-sdk');
    expect(normalizeUsage(wire(withBreakdown))).toEqual({ input_tokens: 100, output_tokens: 30, cache_read_tokens: 800 });
    expect(normalizeUsage(wire(withoutBreakdown))).toEqual({ input_tokens: 250, output_tokens: 30, cache_creation_tokens: 50, cache_read_tokens: 600 });
  });

  it('AI SDK usage without the input or output figure is refused: a zero would be trusted as the context size', () => {
    // given a provider that reported no input figure
    const usage = { inputTokenDetails: {}, outputTokens: 3, outputTokenDetails: {} };
    // when / then
    const error = errorOf(() => normalizeUsage(usage, '$.events[0].data.usage'));
    expect(error.code).toBe('usage_incomplete');
    expect(error.details).toEqual({ path: '$.events[0].data.usage.inputTokens' });
  });

  it('never gives a negative input figure, whatever the provider reports', () => {
    expect(normalizeUsage({ prompt_tokens: 10, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 12 } }).input_tokens).toBe(0);
  });
});
