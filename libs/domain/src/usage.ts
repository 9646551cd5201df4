import { invalid } from './errors';
import { Usage } from './events';

/**
 * A `step.finished` usage as a client may send it: the service's own fields,
 * or a provider's usage object passed whole, in the provider's names, as its
 * SDK returns it. The log stores the service's fields only (normalizeUsage),
 * so every reader sees one shape whichever a client wrote.
 */

/** Chat Completions' `CompletionUsage`: `prompt_tokens` counts cached and cache-written tokens too. */
export interface OpenAIChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
}

/** The Responses API's `ResponseUsage`: `input_tokens` counts cached and cache-written tokens too. */
export interface OpenAIResponsesUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens?: number;
  input_tokens_details: { cached_tokens?: number; cache_write_tokens?: number };
}

/** The Messages API's `Usage`: `input_tokens` leaves out cache reads and writes, as the service's fields do. */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
}

/** The AI SDK's `LanguageModelUsage`: `inputTokens` counts cache reads and writes too; any figure may be missing. */
export interface AiSdkUsage {
  inputTokens?: number;
  outputTokens?: number;
  inputTokenDetails: { noCacheTokens?: number; cacheReadTokens?: number; cacheWriteTokens?: number };
  outputTokenDetails?: Record<string, unknown>;
  totalTokens?: number;
  /** Deprecated in `ai` 7, still sent: cache reads. */
  cachedInputTokens?: number;
}

export type ProviderUsage = OpenAIChatUsage | OpenAIResponsesUsage | AnthropicUsage | AiSdkUsage;
export type UsageDialect = 'neutral' | 'openai' | 'openai-responses' | 'anthropic' | 'ai-sdk';

const has = (value: object, key: string) => Object.prototype.hasOwnProperty.call(value, key);

/**
 * Which shape a usage has, by the fields only that shape has (the NewUsage
 * schema's variants require them): Chat's `prompt_tokens`, Responses'
 * `input_tokens_details`, Anthropic's `cache_*_input_tokens`, the AI SDK's
 * `inputTokenDetails`; else the service's own.
 */
export function usageDialect(usage: Usage | ProviderUsage): UsageDialect {
  if (has(usage, 'prompt_tokens')) return 'openai';
  if (has(usage, 'input_tokens_details')) return 'openai-responses';
  if (has(usage, 'cache_creation_input_tokens') || has(usage, 'cache_read_input_tokens')) return 'anthropic';
  if (has(usage, 'inputTokenDetails')) return 'ai-sdk';
  return 'neutral';
}

/** The service's fields, in their fixed key order (the payload hash depends on it); cache figures only when there are some. */
function usage(input: number, output: number, cacheWrite: number | undefined | null, cacheRead: number | undefined | null): Usage {
  return {
    input_tokens: Math.max(0, input),
    output_tokens: output,
    ...(cacheWrite != null ? { cache_creation_tokens: cacheWrite } : {}),
    ...(cacheRead != null ? { cache_read_tokens: cacheRead } : {}),
  };
}

/**
 * A usage in the service's fields: `input_tokens` the prompt tokens neither
 * read from nor written to the cache (Anthropic's count), so that input +
 * cache read + cache write is what the call's prompt measured.
 */
export function normalizeUsage(raw: Usage | ProviderUsage, path = '$.usage'): Usage {
  switch (usageDialect(raw)) {
    case 'neutral': {
      const u = raw as Usage;
      return usage(u.input_tokens, u.output_tokens, u.cache_creation_tokens, u.cache_read_tokens);
    }
    case 'openai': {
      const u = raw as OpenAIChatUsage;
      const read = u.prompt_tokens_details?.cached_tokens;
      const write = u.prompt_tokens_details?.cache_write_tokens;
      return usage(u.prompt_tokens - (read ?? 0) - (write ?? 0), u.completion_tokens, write, read);
    }
    case 'openai-responses': {
      const u = raw as OpenAIResponsesUsage;
      const read = u.input_tokens_details.cached_tokens;
      const write = u.input_tokens_details.cache_write_tokens;
      return usage(u.input_tokens - (read ?? 0) - (write ?? 0), u.output_tokens, write, read);
    }
    case 'anthropic': {
      const u = raw as AnthropicUsage;
      return usage(u.input_tokens, u.output_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens);
    }
    case 'ai-sdk': {
      const u = raw as AiSdkUsage;
      // A provider that reported no figure: a zero would be trusted as the context's size, so the step is refused.
      for (const key of ['inputTokens', 'outputTokens'] as const) {
        if (u[key] === undefined) {
          throw invalid('usage_incomplete', `${path}.${key} is missing (the provider reported none): step.finished needs the input and output token counts`, {
            path: `${path}.${key}`,
          });
        }
      }
      const read = u.inputTokenDetails.cacheReadTokens ?? u.cachedInputTokens;
      const write = u.inputTokenDetails.cacheWriteTokens;
      const input = u.inputTokenDetails.noCacheTokens ?? u.inputTokens! - (read ?? 0) - (write ?? 0);
      return usage(input, u.outputTokens!, write, read);
    }
  }
}
