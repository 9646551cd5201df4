import type { Anthropic } from '@anthropic-ai/sdk';
import { SdkSummarizer, SummarizeOptions, SummaryRequest } from './summarizer';

const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** The Messages API through the official SDK; retries are the fallback chain's business. */
export class AnthropicSummarizer extends SdkSummarizer<Anthropic> {
  readonly name = 'anthropic';

  // Everything explicit, so the SDK resolves no credentials from the environment or disk.
  protected async createClient() {
    const { default: Anthropic } = await import('@anthropic-ai/sdk');
    return new Anthropic({ apiKey: this.endpoint.apiKey ?? 'unused', baseURL: this.endpoint.baseUrl ?? ANTHROPIC_BASE_URL, maxRetries: 0, timeout: this.timeoutMs });
  }

  protected async complete(client: Anthropic, { system, messages, maxOutputTokens }: SummaryRequest['prompt'], { model, signal }: SummarizeOptions) {
    const message = await client.messages.create({ model, max_tokens: maxOutputTokens, ...(system ? { system } : {}), messages }, { signal });
    return message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
  }
}
