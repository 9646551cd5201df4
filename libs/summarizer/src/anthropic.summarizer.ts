import type { ProviderEndpoint } from '@app/config';
import { classifyProviderError, clientOnFirstUse, SummarizeOptions, Summarizer, SummaryRequest } from './summarizer';

const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** The Messages API through the official SDK; retries are the fallback chain's business. */
export class AnthropicSummarizer implements Summarizer {
  readonly name = 'anthropic';
  // Everything explicit, so the SDK resolves no credentials from the environment or disk.
  private readonly client = clientOnFirstUse(async () => {
    const { default: Anthropic } = await import('@anthropic-ai/sdk');
    return new Anthropic({ apiKey: this.endpoint.apiKey ?? 'unused', baseURL: this.endpoint.baseUrl ?? ANTHROPIC_BASE_URL, maxRetries: 0, timeout: this.timeoutMs });
  });

  constructor(
    private readonly endpoint: ProviderEndpoint,
    private readonly timeoutMs: number,
  ) {}

  async summarize(request: SummaryRequest, { model, signal }: SummarizeOptions): Promise<string> {
    const { system, messages, maxOutputTokens } = request.prompt;
    try {
      const message = await (await this.client()).messages.create(
        { model, max_tokens: maxOutputTokens, ...(system ? { system } : {}), messages },
        { signal },
      );
      return message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
    } catch (error) {
      throw classifyProviderError(error, signal);
    }
  }
}
