export { clipRunes } from './clip-runes';
export {
  buildDigestMessage,
  buildDigestPrompt,
  DIGEST_KIND,
  DIGEST_PREFIX,
  finishLlmDigest,
  heuristicDigest,
} from './digest';
export { ANTHROPIC_PRUNE_DEFAULTS, pruneMode } from './options';
export type { ArchiveOptions, ArchiveStrategy, PruneKeep, PruneMode, PruneOptions, PruneTrigger } from './options';
export type { AnthropicPrunePolicy, OpenCodePrunePolicy, PruneDecision, PrunePolicy } from './prune-decision';
export { selectArchive } from './select-archive';
export type { ArchiveDecision } from './select-archive';
export { selectPrune } from './select-prune';
export { isUserTurn } from './tool-exchanges';
export type { ToolPair } from './tool-exchanges';
export {
  archiveActive,
  archivedEvent,
  archiveEventId,
  maintenanceWanted,
  planStillHolds,
  prunedEvent,
  pruneEventId,
  selectMaintenance,
  selectPruneAfterArchive,
} from './maintenance';
export type { DigestProvenance } from './maintenance';
export { judgeRewrite, planRewrite, REWRITE_DEFERRALS, rewroteSincePivot } from './rewrite-policy';
export type { PlannedRewrite, RewriteDeferral, RewriteMoment, RewriteVerdict } from './rewrite-policy';
