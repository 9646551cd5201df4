import { ToolResultPart } from '../events';
import { MEDIA_TOKENS } from '../models';
import { trimmedPlaceholder } from '../placeholders';
import { replaceOutput } from './fold';
import { ViewEntry } from './types';

/** Seed 000 (1.3): the tool-output budget when none is configured. */
export function defaultContextBudgetTokens(contextWindow: number): number {
  return Math.min(60_000, Math.max(20_000, Math.floor(contextWindow * 0.25)));
}

/** The budget's measure of one output: ceil(chars / 4) (seed 000 allows it), so a read never re-tokenizes. */
export function toolOutputTokens(part: ToolResultPart): number {
  return Math.ceil(part.output.length / 4) + (part.attachments?.length ?? 0) * MEDIA_TOKENS;
}

export interface TrimmedView {
  entries: ViewEntry[];
  trimmedCallIds: string[];
  /** Estimated tool output kept in full. */
  keptTokens: number;
}

/**
 * View-time trim (seed 000, 1.7): walking from the newest result, outputs are
 * kept while their total fits the budget; that first misfit and everything
 * older become the trim placeholder. The newest output always stays: it is
 * what the model is about to read. Only logged window results are candidates;
 * the pivot's prefix is shown as built, and pruned results are placeholders.
 */
export function trimToolOutputs(
  entries: readonly ViewEntry[],
  budget: number,
  pruned: ReadonlyMap<string, boolean>,
): TrimmedView {
  const candidates = entries
    .filter((entry) => entry.origin === 'log' && entry.message.role === 'tool')
    .flatMap((entry) => entry.message.parts)
    .filter((part): part is ToolResultPart => part.type === 'tool_result' && !pruned.has(part.callId));

  const trimmed = new Set<string>();
  let keptTokens = 0;
  for (let i = candidates.length - 1; i >= 0; i--) {
    const cost = toolOutputTokens(candidates[i]);
    const isNewest = i === candidates.length - 1;
    if (trimmed.size === 0 && (isNewest || keptTokens + cost <= budget)) keptTokens += cost;
    else trimmed.add(candidates[i].callId);
  }
  if (trimmed.size === 0) return { entries: [...entries], trimmedCallIds: [], keptTokens };

  return {
    entries: entries.map((entry) => trimEntry(entry, trimmed)),
    trimmedCallIds: candidates.filter((part) => trimmed.has(part.callId)).map((part) => part.callId),
    keptTokens,
  };
}

function trimEntry(entry: ViewEntry, trimmed: ReadonlySet<string>): ViewEntry {
  if (entry.origin !== 'log' || !entry.message.parts.some((p) => p.type === 'tool_result' && trimmed.has(p.callId))) {
    return entry;
  }
  const parts = entry.message.parts.map((part) =>
    part.type === 'tool_result' && trimmed.has(part.callId)
      ? replaceOutput(part, trimmedPlaceholder(part.outputRef?.id))
      : part,
  );
  return { message: { ...entry.message, parts }, seq: entry.seq, origin: entry.origin };
}
