import type Anthropic from '@anthropic-ai/sdk';
import type { ProviderEndpoint } from '@app/config';
import { classifyProviderError, SummarizeOptions, Summarizer, SummaryRequest } from './summarizer';

const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** The Messages API through the official SDK; retries are the fallback chain's business. */
export class AnthropicSummarizer implements Summarizer {
  readonly name = 'anthropic';
  private client?: Promise<Anthropic>;

  constructor(
    private readonly endpoint: ProviderEndpoint,
    private readonly timeoutMs: number,
  ) {}

  /** The SDK is loaded on the first call, not at boot: it weighs ~15 MB in every process that never summarizes. */
  private clientOf(): Promise<Anthropic> {
    this.client ??= import('@anthropic-ai/sdk').then(
      ({ default: Anthropic }) =>
        // Everything explicit, so the SDK resolves no credentials from the environment or disk.
        new Anthropic({
          apiKey: this.endpoint.apiKey ?? 'unused',
          baseURL: this.endpoint.baseUrl ?? ANTHROPIC_BASE_URL,
          maxRetries: 0,
          timeout: this.timeoutMs,
        }),
    );
    return this.client;
  }

  async summarize(request: SummaryRequest, { model, signal }: SummarizeOptions): Promise<string> {
    const { system, messages, maxOutputTokens } = request.prompt;
    try {
      const message = await (await this.clientOf()).messages.create(
        { model, max_tokens: maxOutputTokens, ...(system ? { system } : {}), messages },
        { signal },
      );
      return message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
    } catch (error) {
      throw classifyProviderError(error, signal);
    }
  }
}
