import { CompactionStrategy, HeuristicResult, summarizeHeuristically, SummaryRecord, ToolOutputs } from '@app/domain';
import { Summarizer, SummaryRequest } from './summarizer';

/**
 * What the built-in summarizer can use beyond the port's request: the
 * previous record, the full tool outputs, the template, and a result the
 * summary chain already computed (it needs the record and the critical facts
 * whatever summarizer answers, so it summarizes once and hands it over).
 */
export interface HeuristicRequestExtras {
  precomputed?: HeuristicResult;
  previousRecord?: SummaryRecord | null;
  outputs?: ToolOutputs;
  strategy?: CompactionStrategy;
  todoTools?: readonly string[];
}

/** The built-in summarizer: deterministic, no network; reads the head itself rather than the prompt. */
export class HeuristicSummarizer implements Summarizer {
  readonly name = 'heuristic';

  async summarize(request: SummaryRequest & HeuristicRequestExtras): Promise<string> {
    if (request.precomputed) return request.precomputed.text;
    return summarizeHeuristically({
      head: request.head,
      previous: request.previousRecord,
      previousSummary: request.previousSummary,
      outputs: request.outputs,
      budgetTokens: request.maxTokens,
      strategy: request.strategy,
      retain: request.retain,
      instructions: request.instructions,
      todoTools: request.todoTools,
    }).text;
  }
}
