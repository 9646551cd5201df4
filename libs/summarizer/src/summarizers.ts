import type { SummarizerSettings } from '@app/config';
import type { SummarizerKind } from '@app/domain';
import { AnthropicSummarizer } from './anthropic.summarizer';
import { HeuristicSummarizer } from './heuristic.summarizer';
import { OpenAISummarizer } from './openai.summarizer';
import { Summarizer, SummarizerLookup } from './summarizer';

/** The summarizers this process can use: the built-in one always, each LLM provider when configured. */
export class Summarizers implements SummarizerLookup {
  readonly heuristic = new HeuristicSummarizer();
  private readonly llms: Partial<Record<SummarizerKind, Summarizer>>;

  constructor(settings: SummarizerSettings) {
    this.llms = {
      ...(settings.openai ? { openai: new OpenAISummarizer(settings.openai, settings.timeoutMs) } : {}),
      ...(settings.anthropic ? { anthropic: new AnthropicSummarizer(settings.anthropic, settings.timeoutMs) } : {}),
    };
  }

  get(kind: SummarizerKind): Summarizer | null {
    return kind === 'heuristic' ? this.heuristic : (this.llms[kind] ?? null);
  }
}
