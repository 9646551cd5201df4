export * from './prompts';
export { compactionWindow, settledCutChecker } from './window';
export type { WindowMessage, WindowView } from './window';
export {
  boundAfterGrowth,
  coldCacheMargin,
  compactionReasonFor,
  evaluateOverflow,
  growthThreshold,
  LOOP_GUARD_REARM_SHARE,
  loopGuardHold,
  mayOverflow,
  shouldSuppressAutoCompaction,
  VIEW_GROWTH_TYPES,
} from './overflow-policy';
export type { GrowthSince, LoopGuardCompletion, LoopGuardHold, OverflowEvaluation, OverflowInput, OverflowReason } from './overflow-policy';
export { MIN_SUMMARY_BUDGET, planCompaction, SUMMARY_SHARE_OF_AFTER, summaryBudgetTokens, tailBudgetTokens } from './plan';
export type { CompactionPlan, NothingToCompact, PlanInput, TailInfo } from './plan';
export {
  buildSummarizerRequest,
  formatHeadForSummarizer,
  HISTORY_OPENER,
  stripUnansweredToolCalls,
  summaryInstruction,
  trimSummarizerInputForOverflow,
} from './summarizer-input';
export type { InstructionInput, SummarizerInput, SummarizerMessage, SummarizerRequest, TrimmedHead } from './summarizer-input';
export { parseSummaryResponse } from './summary-parse';
export type { ParsedSummary, SummaryError, SummaryParseResult } from './summary-parse';
export { heuristicSummary, summarizeHeuristically } from './heuristic/heuristic-summarizer';
export type { HeuristicInput, HeuristicResult, HeuristicSummaryInput } from './heuristic/heuristic-summarizer';
export { DEFAULT_TODO_TOOLS, readHead } from './heuristic/head-record';
export type { HeadReading, HeadReadOptions, ToolOutputs } from './heuristic/head-record';
export { digestToolOutput, isToolOutputDigest, locationIn, ToolOutputScanner } from './heuristic/output-digest';
export type { OutputError, ToolOutputDigest } from './heuristic/output-digest';
export { emptyRecord, parseSummaryRecord, RECORD_SECTIONS, recordSize, SUMMARY_RECORD_VERSION } from './heuristic/summary-record';
export type {
  CommandItem,
  ConstraintItem,
  ErrorItem,
  ExcerptItem,
  FileAction,
  FileItem,
  RecordItem,
  RecordSection,
  SummaryRecord,
  TodoItem,
  ValueItem,
} from './heuristic/summary-record';
export { renderRecord, SUMMARY_TEMPLATE_NAMES, SUMMARY_TEMPLATES, templateForStrategy } from './heuristic/summary-template';
export type { SummaryTemplate, SummaryTemplateName, TemplateSection } from './heuristic/summary-template';
export { evictionReceipt, evictionTier, fitRecord } from './heuristic/summary-eviction';
export type { EvictedItem } from './heuristic/summary-eviction';
export { recordFromSummaryText } from './heuristic/record-from-text';
export {
  CARRIED_FORWARD_HEADING,
  checkRetention,
  criticalFactsOf,
  hiddenOutputFacts,
  messageText,
  prefixWithRetention,
  textsAfterPivot,
} from './fact-retention';
export type { CriticalFact, PrefixWithRetentionInput, Retention, RetentionInput, RetentionResult } from './fact-retention';
export { isFiller, structuralOf, todoListOf, checklistOf } from './heuristic/extract';
export type { Structural, TodoEntry, TodoStatus } from './heuristic/extract';
export { isRealUserText } from './heuristic/user-text';
export { buildKeepLastTurnsFallback, buildPrefix, codexApproxTokens, PREFIX_KINDS, selectUserMessages } from './strategies';
export type { PrefixInput } from './strategies';
export {
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
export { pivotMovedBy } from './pivot';
export type { PivotMove } from './pivot';
export { COMPACTION_TRIGGER_TYPES, compactionFactsOf, decideTrigger, growsViewOnly, growthThresholdAfterCheck, markerEvent } from './trigger';
export type { TriggerDecision } from './trigger';
