/**
 * Token limits of the models we know, as published by the providers (mirrored
 * by models.dev, which OpenCode reads), checked 2026-11. Sessions can override
 * any figure; a model missing here needs overrides (see resolveModelLimits).
 */

export type Provider = 'openai' | 'anthropic' | 'google';

/** How tokens are counted: a real BPE where the model's is public, else ceil(chars / 4). */
export type TokenizerFamily = 'o200k_base' | 'cl100k_base' | 'approx';

export interface ModelLimits {
  /** The whole window, input plus output; 0 = unlimited. */
  context: number;
  /** Set only where the provider caps input below `context - output` (OpenAI's GPT-5 family). */
  input?: number;
  /** Largest completion the model can produce. */
  output: number;
}

export interface ModelEntry {
  /** Model ids, without provider prefixes or date suffixes; ids of one row share these limits. */
  ids: readonly string[];
  provider: Provider;
  tokenizer: TokenizerFamily;
  limits: ModelLimits;
}

const GPT_1M = { context: 1_050_000, input: 922_000, output: 128_000 };
const GPT_400K = { context: 400_000, input: 272_000, output: 128_000 };
const O_SERIES = { context: 200_000, output: 100_000 };
const CLAUDE_1M_128K = { context: 1_000_000, output: 128_000 };
const GEMINI_1M_64K = { context: 1_048_576, output: 65_536 };
const GEMINI_1M_8K = { context: 1_048_576, output: 8_192 };

// GPT-4o and later, the o-series and gpt-oss use o200k_base; OpenAI has not
// published another encoding for GPT-5/6, so o200k_base is our estimate there.
const openai = (ids: string[], limits: ModelLimits, tokenizer: TokenizerFamily = 'o200k_base'): ModelEntry => ({
  ids,
  provider: 'openai',
  tokenizer,
  limits,
});
// Anthropic and Google publish no local tokenizer: estimates are chars / 4.
const anthropic = (ids: string[], limits: ModelLimits): ModelEntry => ({
  ids,
  provider: 'anthropic',
  tokenizer: 'approx',
  limits,
});
const google = (ids: string[], limits: ModelLimits): ModelEntry => ({ ids, provider: 'google', tokenizer: 'approx', limits });

export const MODEL_REGISTRY: readonly ModelEntry[] = [
  openai(['gpt-6-astra', 'gpt-6-sol', 'gpt-6-luna'], GPT_1M),
  openai(['gpt-5.6', 'gpt-5.6-sol', 'gpt-5.6-terra', 'gpt-5.6-luna', 'gpt-5.5', 'gpt-5.4'], GPT_1M),
  openai(['gpt-5.3-codex', 'gpt-5.2', 'gpt-5.2-codex', 'gpt-5.1', 'gpt-5.1-codex', 'gpt-5.1-codex-mini'], GPT_400K),
  openai(['gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'gpt-5-codex'], GPT_400K),
  openai(['gpt-5-chat-latest', 'gpt-5.1-chat-latest', 'gpt-5.2-chat-latest'], { context: 128_000, output: 16_384 }),
  openai(['gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano'], { context: 1_047_576, output: 32_768 }),
  openai(['gpt-4o', 'gpt-4o-mini', 'chatgpt-4o-latest'], { context: 128_000, output: 16_384 }),
  openai(['o3', 'o3-pro', 'o3-mini', 'o4-mini', 'o1', 'o1-pro'], O_SERIES),
  openai(['o1-mini'], { context: 128_000, output: 65_536 }),
  openai(['gpt-oss-120b', 'gpt-oss-20b'], { context: 131_072, output: 32_768 }),
  openai(['gpt-4-turbo'], { context: 128_000, output: 4_096 }, 'cl100k_base'),
  openai(['gpt-4'], { context: 8_192, output: 8_192 }, 'cl100k_base'),
  openai(['gpt-3.5-turbo'], { context: 16_385, output: 4_096 }, 'cl100k_base'),

  anthropic(['claude-fable-5-1', 'claude-fable-5', 'claude-mythos-5'], CLAUDE_1M_128K),
  anthropic(['claude-opus-5-5', 'claude-opus-5', 'claude-opus-4-8', 'claude-opus-4-7', 'claude-opus-4-6'], CLAUDE_1M_128K),
  anthropic(['claude-sonnet-5-5', 'claude-sonnet-5', 'claude-haiku-5-5'], CLAUDE_1M_128K),
  anthropic(['claude-sonnet-4-6'], { context: 1_000_000, output: 64_000 }),
  anthropic(['claude-opus-4-5', 'claude-sonnet-4-5', 'claude-haiku-4-5'], { context: 200_000, output: 64_000 }),
  anthropic(['claude-sonnet-4', 'claude-sonnet-4-0', 'claude-3-7-sonnet'], { context: 200_000, output: 64_000 }),
  anthropic(['claude-opus-4-1', 'claude-opus-4', 'claude-opus-4-0'], { context: 200_000, output: 32_000 }),
  anthropic(['claude-3-5-sonnet', 'claude-3-5-haiku'], { context: 200_000, output: 8_192 }),
  anthropic(['claude-3-opus', 'claude-3-haiku'], { context: 200_000, output: 4_096 }),

  google(['gemini-3.8-flash', 'gemini-3.5-flash', 'gemini-3-flash-preview', 'gemini-3.1-flash-lite'], GEMINI_1M_64K),
  google(['gemini-3.1-pro-preview', 'gemini-3-pro-preview'], GEMINI_1M_64K),
  google(['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite'], GEMINI_1M_64K),
  google(['gemini-2.0-flash', 'gemini-2.0-flash-lite'], GEMINI_1M_8K),
];
