import { heuristicSummary } from '@app/domain';
import { Summarizer, SummaryRequest } from './summarizer';

/** The built-in summarizer: deterministic, no network; reads the head itself rather than the prompt. */
export class HeuristicSummarizer implements Summarizer {
  readonly name = 'heuristic';

  async summarize(request: SummaryRequest): Promise<string> {
    return heuristicSummary({
      head: request.head,
      previousSummary: request.previousSummary,
      maxTokens: request.maxTokens,
      retain: request.retain,
      instructions: request.instructions,
    });
  }
}
