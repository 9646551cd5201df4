export type {
  BuildModelViewInput,
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
export { usageTotal, viewTokens } from './tokens';
export type { ViewTokensInput } from './tokens';
export * from './render';
export * from './validate';
