import { NewEvent, StoredEvent, ToolResultsArchivedData } from '../events';
import { buildDigestMessage } from './digest';
import { ArchiveOptions, PruneOptions } from './options';
import { PruneDecision } from './prune-decision';
import { selectArchive } from './select-archive';
import { selectPrune } from './select-prune';

/** Whether archiving can do anything: strategy `off` and a cutoff of 0 disable it, as in seed 001. */
export function archiveActive(options: ArchiveOptions): boolean {
  return options.enabled && options.strategy !== 'off' && options.toolCallCutoff > 0;
}

/** Whether the prune job has any work to consider for a session (the append path schedules it only then). */
export function maintenanceWanted(config: { prune: PruneOptions; archive: ArchiveOptions }): boolean {
  return config.prune.enabled || archiveActive(config.archive);
}

/**
 * The prune decision once `archivedCallIds` are hidden: archiving runs
 * first, so the prune never marks a pair that is leaving the view anyway,
 * and its tokensFreed counts only what the view still showed.
 */
export function selectPruneAfterArchive(
  events: readonly StoredEvent[],
  archivedCallIds: readonly string[],
  options: PruneOptions,
  currentInputTokens?: number,
): PruneDecision | null {
  if (archivedCallIds.length === 0) return selectPrune(events, options, currentInputTokens);
  const last = events[events.length - 1];
  const archived = {
    seq: (last?.seq ?? 0) + 1,
    id: 'planned-archive',
    type: 'tool_results.archived',
    data: { callIds: [...archivedCallIds], digest: null },
    createdAt: last?.createdAt ?? new Date(0),
    tokens: 0,
  } as StoredEvent<'tool_results.archived'>;
  return selectPrune([...events, archived], options, currentInputTokens);
}

/**
 * Whether an archive planned earlier (its digest made outside the lock) is
 * still right on the fresh log: its pairs are still the oldest ones the
 * fresh selection would archive. Pairs that became archivable since are
 * left to the next run.
 */
export function planStillHolds(planned: readonly string[], fresh: readonly string[] | undefined): boolean {
  return fresh !== undefined && planned.length > 0 && planned.length <= fresh.length && planned.every((id, i) => fresh[i] === id);
}

/** How the digest was made: the strategy asked for, what produced it, and why the LLM was not used when it was asked for. */
export interface DigestProvenance {
  strategy: ArchiveOptions['strategy'];
  digestBy: 'llm' | 'heuristic';
  model?: string;
  fallback?: string;
}

/** Ids follow the log position, like the compaction's: deterministic, and unique per session. */
export const pruneEventId = (seq: number) => `prune-${seq}`;
export const archiveEventId = (seq: number) => `archive-${seq}`;

export function prunedEvent(seq: number, decision: PruneDecision): NewEvent<'tool_outputs.pruned'> {
  return { id: pruneEventId(seq), type: 'tool_outputs.pruned', data: decision };
}

/** Seed 001's archive: the pairs leave the view and one tool_summary message takes their place. */
export function archivedEvent(
  seq: number,
  callIds: readonly string[],
  digest: string,
  provenance: DigestProvenance,
): NewEvent<'tool_results.archived'> {
  const id = archiveEventId(seq);
  const data: ToolResultsArchivedData = { callIds: [...callIds], digest: buildDigestMessage(digest, `${id}-digest`), ...provenance };
  return { id, type: 'tool_results.archived', data };
}

/** Both jobs' decisions on one log, archive first (see selectPruneAfterArchive). */
export function selectMaintenance(
  events: readonly StoredEvent[],
  config: { prune: PruneOptions; archive: ArchiveOptions },
  currentInputTokens?: number,
) {
  const archive = selectArchive(events, config.archive);
  const prune = selectPruneAfterArchive(events, archive?.callIds ?? [], config.prune, currentInputTokens);
  return { archive, prune };
}
