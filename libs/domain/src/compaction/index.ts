export * from './prompts';
export { readWindow, settledCutChecker } from './window';
export type { WindowMessage, WindowView } from './window';
export {
  compactionReasonFor,
  evaluateOverflow,
  shouldSuppressAutoCompaction,
} from './overflow-policy';
export type { LoopGuardCompletion, OverflowEvaluation, OverflowInput, OverflowReason } from './overflow-policy';
export { planCompaction, tailBudgetTokens } from './plan';
export type { CompactionPlan, NothingToCompact, PlanInput, TailInfo } from './plan';
export {
  buildSummarizerRequest,
  formatHeadForSummarizer,
  HISTORY_OPENER,
  stripUnansweredToolCalls,
  summaryInstruction,
  trimSummarizerInputForOverflow,
} from './summarizer-input';
export type { SummarizerInput, SummarizerMessage, SummarizerRequest, TrimmedHead } from './summarizer-input';
export { parseSummaryResponse } from './summary-parse';
export type { ParsedSummary, SummaryError, SummaryParseResult } from './summary-parse';
export { heuristicSummary } from './heuristic-summarizer';
export type { HeuristicSummaryInput } from './heuristic-summarizer';
export { buildKeepLastTurnsFallback, buildPrefix, PREFIX_KINDS, selectUserMessages } from './strategies';
export type { PrefixInput } from './strategies';
export {
  AUTO_CONTINUE_KIND,
  autoContinueEvent,
  buildCompletedData,
  decideAfterFailure,
  decideCompletion,
  deriveCompactionState,
  evolveCompactionFacts,
  exceedsTarget,
  INITIAL_COMPACTION_FACTS,
  KEEP_LAST_TURNS,
  nothingToCompactEvent,
  summarySources,
} from './decide';
export type {
  CommitState,
  CompactionCompletion,
  CompactionFacts,
  CompactionState,
  CompactionStateName,
  CompletionInput,
  FailureDecision,
  FailureInput,
  SummaryFailureKind,
  SummarySource,
} from './decide';
export { COMPACTION_TRIGGER_TYPES, compactionFactsOf, decideTrigger, markerEvent } from './trigger';
export type { TriggerDecision } from './trigger';
