import Anthropic from '@anthropic-ai/sdk';
import type { ProviderEndpoint } from '@app/config';
import { classifyProviderError, SummarizeOptions, Summarizer, SummaryRequest } from './summarizer';

const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** The Messages API through the official SDK; retries are the fallback chain's business. */
export class AnthropicSummarizer implements Summarizer {
  readonly name = 'anthropic';
  private readonly client: Anthropic;

  constructor(endpoint: ProviderEndpoint, timeoutMs: number) {
    // Everything explicit, so the SDK resolves no credentials from the environment or disk.
    this.client = new Anthropic({
      apiKey: endpoint.apiKey ?? 'unused',
      baseURL: endpoint.baseUrl ?? ANTHROPIC_BASE_URL,
      maxRetries: 0,
      timeout: timeoutMs,
    });
  }

  async summarize(request: SummaryRequest, { model, signal }: SummarizeOptions): Promise<string> {
    const { system, messages, maxOutputTokens } = request.prompt;
    try {
      const message = await this.client.messages.create(
        { model, max_tokens: maxOutputTokens, ...(system ? { system } : {}), messages },
        { signal },
      );
      return message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
    } catch (error) {
      throw classifyProviderError(error, signal);
    }
  }
}
