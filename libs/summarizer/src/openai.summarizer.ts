import type { OpenAI } from 'openai';
import { SdkSummarizer, SummarizeOptions, SummaryRequest } from './summarizer';

const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * Chat Completions through the official SDK, so any OpenAI-compatible server
 * works by base URL (OpenAI, vLLM, Ollama, LiteLLM). The SDK's own retries
 * are off: the compaction's fallback chain decides about retries.
 */
export class OpenAISummarizer extends SdkSummarizer<OpenAI> {
  readonly name = 'openai';

  // Everything explicit, so the SDK reads no environment variable of its own.
  protected async createClient() {
    const { default: OpenAI } = await import('openai');
    return new OpenAI({
      // Local OpenAI-compatible servers ignore the key, but the SDK wants one.
      apiKey: this.endpoint.apiKey ?? 'unused',
      baseURL: this.endpoint.baseUrl ?? OPENAI_BASE_URL,
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: this.timeoutMs,
    });
  }

  protected async complete(client: OpenAI, { system, messages, maxOutputTokens }: SummaryRequest['prompt'], { model, signal }: SummarizeOptions) {
    const completion = await client.chat.completions.create(
      {
        model,
        messages: [...(system ? [{ role: 'system' as const, content: system }] : []), ...messages],
        // OpenAI's current name (its reasoning models refuse max_tokens); vLLM and LiteLLM accept it too.
        max_completion_tokens: maxOutputTokens,
      },
      { signal },
    );
    return completion.choices[0]?.message?.content ?? '';
  }
}
