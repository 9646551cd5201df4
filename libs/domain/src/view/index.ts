export type {
  BuildModelViewInput,
  IgnoredUsage,
  ModelView,
  PairRepairs,
  PendingMode,
  PendingToolCall,
  ViewEntry,
  ViewOptions,
  ViewTokens,
} from './types';
export { buildModelView, latestPivot, viewAt } from './model-view';
export { foldWindow, isAgentVisible } from './fold';
export type { WindowFold } from './fold';
export { normalizePairs } from './normalize';
export type { NormalizedView, NormalizeOptions } from './normalize';
export { defaultContextBudgetTokens, toolOutputTokens, trimToolOutputs } from './trim';
export type { TrimmedView } from './trim';
export { usageTotal, viewTokenBound, viewTokens } from './tokens';
export { requestPointAfter, usageMeasuredSeq } from './usage-measure';
export type { MeasuredUsage } from './usage-measure';
export type { ViewTokensInput } from './tokens';
export * from './render';
export * from './validate';
