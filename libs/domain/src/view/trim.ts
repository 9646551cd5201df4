import { ToolResultPart } from '../events';
import { MEDIA_TOKENS } from '../tokens';
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
 * View-time trim (seed 000, 1.7): the newest outputs are kept while their
 * total fits the budget; older ones become the trim placeholder. The newest
 * output always stays: it is what the model is about to read. Only logged
 * window results are candidates; the pivot's prefix is shown as built, and
 * pruned results are placeholders.
 *
 * A fold over the candidates in log order: the kept run's start only moves
 * forward, when the run exceeds the budget. With `step` 0 it moves as little
 * as it must (the longest newest run that fits: seed 000's rule); with a
 * step it jumps until the run holds at most (1 - step) of the budget, so
 * the prefix is rewritten once per step's worth of output, not at almost
 * every result. Every read of the same log agrees on the start.
 */
export function trimToolOutputs(
  entries: readonly ViewEntry[],
  budget: number,
  pruned: ReadonlyMap<string, boolean>,
  step = 0,
): TrimmedView {
  const candidates = entries
    .filter((entry) => entry.origin === 'log' && entry.message.role === 'tool')
    .flatMap((entry) => entry.message.parts)
    .filter((part): part is ToolResultPart => part.type === 'tool_result' && !pruned.has(part.callId));

  const costs = candidates.map(toolOutputTokens);
  const refill = budget * (1 - step);
  let start = 0;
  let keptTokens = 0;
  costs.forEach((cost, i) => {
    keptTokens += cost;
    if (keptTokens <= budget) return;
    while (start < i && keptTokens > refill) keptTokens -= costs[start++];
  });
  if (start === 0) return { entries: [...entries], trimmedCallIds: [], keptTokens };

  const trimmed = new Set(candidates.slice(0, start).map((part) => part.callId));
  return {
    entries: entries.map((entry) => trimEntry(entry, trimmed)),
    trimmedCallIds: [...trimmed],
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
