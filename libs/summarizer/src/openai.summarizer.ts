import OpenAI from 'openai';
import type { ProviderEndpoint } from '@app/config';
import { classifyProviderError, SummarizeOptions, Summarizer, SummaryRequest } from './summarizer';

const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * Chat Completions through the official SDK, so any OpenAI-compatible server
 * works by base URL (OpenAI, vLLM, Ollama, LiteLLM). The SDK's own retries
 * are off: the compaction's fallback chain decides about retries.
 */
export class OpenAISummarizer implements Summarizer {
  readonly name = 'openai';
  private readonly client: OpenAI;

  constructor(endpoint: ProviderEndpoint, timeoutMs: number) {
    // Everything explicit, so the SDK reads no environment variable of its own.
    this.client = new OpenAI({
      // Local OpenAI-compatible servers ignore the key, but the SDK wants one.
      apiKey: endpoint.apiKey ?? 'unused',
      baseURL: endpoint.baseUrl ?? OPENAI_BASE_URL,
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: timeoutMs,
    });
  }

  async summarize(request: SummaryRequest, { model, signal }: SummarizeOptions): Promise<string> {
    const { system, messages, maxOutputTokens } = request.prompt;
    try {
      const completion = await this.client.chat.completions.create(
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
