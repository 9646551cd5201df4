import { StoredEvent } from '../events';
import { ArchiveOptions } from './options';
import { ToolPair, toolExchangesInView } from './tool-exchanges';

/** What the archive job should hide now; the digest is made from `pairs` by the chosen strategy. */
export interface ArchiveDecision {
  callIds: string[];
  /** Oldest first. */
  pairs: ToolPair[];
}

/**
 * Seed 001's maybeSummarizeToolResults: above `toolCallCutoff` tool results in
 * the model view (pruned ones still count: their pairs are still there), the
 * oldest are archived until the cutoff is met. Strategy `off` and a cutoff
 * of 0 disable archiving, as in the seed's code.
 */
export function selectArchive(events: readonly StoredEvent[], options: ArchiveOptions): ArchiveDecision | null {
  if (!options.enabled || options.strategy === 'off' || options.toolCallCutoff <= 0) return null;
  const inView = toolExchangesInView(events);
  const excess = inView.length - options.toolCallCutoff;
  if (excess <= 0) return null;
  const pairs = inView.slice(0, excess).map(({ input, result }) => ({ input, result }));
  return { callIds: pairs.map((pair) => pair.result.callId), pairs };
}
