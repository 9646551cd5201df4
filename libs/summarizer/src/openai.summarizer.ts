import type { ProviderEndpoint } from '@app/config';
import { classifyProviderError, clientOnFirstUse, SummarizeOptions, Summarizer, SummaryRequest } from './summarizer';

const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * Chat Completions through the official SDK, so any OpenAI-compatible server
 * works by base URL (OpenAI, vLLM, Ollama, LiteLLM). The SDK's own retries
 * are off: the compaction's fallback chain decides about retries.
 */
export class OpenAISummarizer implements Summarizer {
  readonly name = 'openai';
  // Everything explicit, so the SDK reads no environment variable of its own.
  private readonly client = clientOnFirstUse(async () => {
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
  });

  constructor(
    private readonly endpoint: ProviderEndpoint,
    private readonly timeoutMs: number,
  ) {}

  async summarize(request: SummaryRequest, { model, signal }: SummarizeOptions): Promise<string> {
    const { system, messages, maxOutputTokens } = request.prompt;
    try {
      const completion = await (await this.client()).chat.completions.create(
        {
          model,
          messages: [...(system ? [{ role: 'system' as const, content: system }] : []), ...messages],
          // OpenAI's current name (its reasoning models refuse max_tokens); vLLM and LiteLLM accept it too.
          max_completion_tokens: maxOutputTokens,
        },
        { signal },
      );
      return completion.choices[0]?.message?.content ?? '';
    } catch (error) {
      throw classifyProviderError(error, signal);
    }
  }
}
