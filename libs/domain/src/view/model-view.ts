import { isEventOfType, StoredEvent } from '../events';
import { estimateMessageTokensAs } from '../tokens';
import { foldPins, pinnedContextMessage } from '../pins/pins';
import { foldWindow, isAgentVisible } from './fold';
import { normalizePairs } from './normalize';
import { viewTokens } from './tokens';
import { trimToolOutputs } from './trim';
import { BuildModelViewInput, ModelView, ViewEntry } from './types';

/**
 * The model view (DESIGN 5): system prompt, the latest pivot's prefix, the
 * pinned context, then the window (events after its coveredThroughSeq)
 * folded, pair-normalized and trimmed. Cost follows the window, not the history.
 */
export function buildModelView(input: BuildModelViewInput): ModelView {
  const { pivot, options } = input;
  const coveredThroughSeq = pivot?.data.coveredThroughSeq ?? 0;
  const events = input.events.filter((event) => event.seq > coveredThroughSeq);
  const window = foldWindow(events);
  const prefix: ViewEntry[] = (pivot?.data.prefix ?? [])
    .filter(isAgentVisible)
    .map((message) => ({ message, seq: coveredThroughSeq, origin: 'prefix' as const }));
  const pins = foldPins(pivot?.data.pins ?? [], events);
  const pinned = pinnedContextMessage(pins);
  const pinnedEntry: ViewEntry[] = pinned ? [{ message: pinned, seq: Math.max(coveredThroughSeq, ...pins.map((pin) => pin.seq)), origin: 'pins' }] : [];

  const normalized = normalizePairs([...prefix, ...pinnedEntry, ...window.entries], {
    pending: options.pending ?? 'abort',
    lastAbortSeq: window.lastAbortSeq,
  });
  const trimmed = trimToolOutputs(normalized.entries, options.contextBudgetTokens, window.prunedCallIds, options.trimStep);
  const tokens = viewTokens({
    entries: trimmed.entries,
    system: input.system,
    systemTokens: input.systemTokens,
    model: input.model,
    usage: window.lastUsage,
    pivotSeq: pivot?.seq ?? 0,
    pivotOverhead: pivot?.data.overhead ?? 0,
    lastRewriteSeq: window.lastRewriteSeq,
    rewrites: window.rewrites,
    measuredEntries: normalized.entries,
    lastStepGrowth: window.lastStepGrowth,
  });

  return {
    system: input.system,
    messages: trimmed.entries.map((entry) => entry.message),
    sources: trimmed.entries.map(({ seq, origin, tokens, message }) => ({ seq, origin, tokens: tokens ?? estimateMessageTokensAs(message, 'approx') })),
    pendingToolCalls: normalized.pendingToolCalls,
    pivotSeq: pivot?.seq ?? null,
    coveredThroughSeq,
    repairs: normalized.repairs,
    trimmedCallIds: trimmed.trimmedCallIds,
    toolOutputTokens: trimmed.keptTokens,
    contextBudgetTokens: options.contextBudgetTokens,
    tokens,
  };
}

/** The newest compaction.completed at or before `atSeq` (events in any order). */
export function latestPivot(
  events: readonly StoredEvent[],
  atSeq = Number.POSITIVE_INFINITY,
): StoredEvent<'compaction.completed'> | null {
  let pivot: StoredEvent<'compaction.completed'> | null = null;
  for (const event of events) {
    if (isEventOfType(event, 'compaction.completed') && event.seq <= atSeq && event.seq > (pivot?.seq ?? 0)) {
      pivot = event;
    }
  }
  return pivot;
}

/**
 * The view as it was at `atSeq`, reading the log the way the store adapter
 * does: the latest pivot at or before atSeq, then only the events after its
 * coveredThroughSeq up to atSeq.
 */
export function viewAt(
  allEvents: readonly StoredEvent[],
  atSeq: number,
  input: Omit<BuildModelViewInput, 'pivot' | 'events'>,
): ModelView {
  const pivot = latestPivot(allEvents, atSeq);
  const after = pivot?.data.coveredThroughSeq ?? 0;
  const events = allEvents.filter((event) => event.seq > after && event.seq <= atSeq);
  return buildModelView({ ...input, pivot, events });
}
