export type {
  BuildModelViewInput,
  IgnoredUsage,
  ModelView,
  PairRepairs,
  PendingMode,
  PendingToolCall,
  ViewEntry,
  ViewOptions,
  ViewSource,
  ViewTokens,
} from './types';
export { FITTED_NOTICE_KIND, fittedNotice, fitView } from './fit';
export type { FittedView, ViewFit } from './fit';
export { buildModelView, latestPivot, viewAt } from './model-view';
export { foldWindow, isAgentVisible } from './fold';
export { assertRewindable, rewoundRanges, sessionRewoundEvent, withoutRewound } from './rewind';
export type { RewindTarget } from './rewind';
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
export * from './parse';
export * from './validate';
export { CACHE_PRICES, cacheReport, cacheTraceOf, costsOfCommitted, rewritePrice, windowCacheRatios } from './cache-cost';
export type { CacheRatios, CacheReport, CacheTraceEvent, RewriteCacheCost, RewriteKind } from './cache-cost';
