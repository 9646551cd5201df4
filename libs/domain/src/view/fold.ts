import { Message, Part, StoredEvent, ToolResultPart } from '../events';
import { CLEARED_TOOL_INPUT, prunedPlaceholder } from '../placeholders';
import { ViewEntry } from './types';
import { withoutRewound } from './rewind';
import { MeasuredUsage, requestPointAfter, usageMeasuredSeq } from './usage-measure';

/** The window folded: visible messages with prune and archive applied, plus what token accounting needs. */
export interface WindowFold {
  entries: ViewEntry[];
  /** Pruned call ids; `true` when their inputs were cleared too. */
  prunedCallIds: ReadonlyMap<string, boolean>;
  /** The newest turn.aborted (0 if none): calls before it are aborted, not pending. */
  lastAbortSeq: number;
  /** The newest step.finished of the window, with the seq of the view it measured. */
  lastUsage: MeasuredUsage | null;
  /** The newest prune or archive: usage reported before it counted outputs the view no longer shows. */
  lastRewriteSeq: number;
  /** The stored estimates of the messages between the two newest steps, the second one's own included: one step's growth of the view; null before a second step. */
  lastStepGrowth: number | null;
  /** What each prune or archive took out of an entry, so the view a usage measured before it can be rebuilt in figures. */
  rewrites: EntryRewrite[];
}

/** An entry with a stored estimate that a prune or an archive rewrote, and that estimate. */
export interface EntryRewrite {
  /** The rewritten entry's seq. */
  seq: number;
  /** The newest prune or archive that changed it. */
  rewriteSeq: number;
  /** Its stored estimate before the rewrite. */
  tokensBefore: number;
}

/** Unset means visible (seed 001's routing flags). */
export function isAgentVisible(message: Message): boolean {
  return message.metadata?.agentVisible !== false;
}

/** A result's output replaced by a placeholder; attachments go too, the placeholder stands for all of it. */
export function replaceOutput(part: ToolResultPart, output: string): ToolResultPart {
  const replaced: ToolResultPart = { ...part, output };
  delete replaced.attachments;
  return replaced;
}

/**
 * Folds window events (seq order) into view entries. Prune and archive apply
 * to the whole window; a rewind takes out what clients appended in its range
 * (withoutRewound) and, like a prune, makes a usage measured before it stale.
 */
export function foldWindow(allEvents: readonly StoredEvent[]): WindowFold {
  const events = withoutRewound(allEvents);
  const entries: ViewEntry[] = [];
  const pruned = new Map<string, boolean>();
  const archived = new Set<string>();
  // The seq of the newest prune or archive of each call, for EntryRewrite.
  const rewrittenAt = new Map<string, number>();
  let lastAbortSeq = 0;
  let lastUsage: MeasuredUsage | null = null;
  let lastRewriteSeq = 0;
  let requestPoint = 0;
  let lastStepGrowth: number | null = null;
  let sinceStep: number | null = null;

  const show = (message: Message | null, seq: number, tokens: number) => {
    // Archive events store 0 when they carry no digest; 0 also means "not computed".
    if (!message || !isAgentVisible(message)) return;
    entries.push({ message, seq, tokens: tokens || undefined, origin: 'log' });
    if (sinceStep !== null) sinceStep += tokens;
  };

  for (const event of events) {
    switch (event.type) {
      case 'message.added':
        show(event.data.message, event.seq, event.tokens);
        break;
      case 'tool_outputs.pruned':
        for (const callId of event.data.callIds) {
          pruned.set(callId, (pruned.get(callId) ?? false) || !!event.data.clearInputs);
          rewrittenAt.set(callId, event.seq);
        }
        lastRewriteSeq = event.seq;
        break;
      case 'tool_results.archived':
        for (const callId of event.data.callIds) {
          archived.add(callId);
          rewrittenAt.set(callId, event.seq);
        }
        show(event.data.digest, event.seq, event.tokens);
        lastRewriteSeq = event.seq;
        break;
      case 'turn.aborted':
        lastAbortSeq = event.seq;
        break;
      case 'step.finished':
        lastUsage = { step: event, measuredSeq: usageMeasuredSeq(event, requestPoint) };
        if (sinceStep !== null) lastStepGrowth = sinceStep;
        sinceStep = 0;
        break;
      case 'session.rewound':
        // What the usage before it measured is gone from the view; the step growth it saw too.
        lastRewriteSeq = event.seq;
        lastStepGrowth = null;
        sinceStep = null;
        break;
      case 'session.created':
      case 'context.overflowed':
      case 'compaction.requested':
      case 'compaction.completed':
      case 'compaction.failed':
      case 'session.config_changed':
      case 'record.added':
      // Pins are folded apart (foldPins): the view shows them after the prefix, not in the window's order.
      case 'pin.added':
      case 'pin.removed':
        break;
      default: {
        // Exhaustive at compile time; at run time a type from a newer deploy (rolling upgrade) is skipped, not fatal.
        const _newer: never = event;
      }
    }
    requestPoint = requestPointAfter(requestPoint, event);
  }

  const rewrite = (part: Part) => rewritePart(part, pruned, archived);
  const rewrites: EntryRewrite[] = [];
  const folded = entries.flatMap((entry) => {
    const out = rewriteEntry(entry, rewrite);
    if (out[0] !== entry && entry.tokens !== undefined) {
      const rewriteSeq = Math.max(...entry.message.parts.map((part) => ('callId' in part ? (rewrittenAt.get(part.callId) ?? 0) : 0)));
      rewrites.push({ seq: entry.seq, rewriteSeq, tokensBefore: entry.tokens });
    }
    return out;
  });
  return { entries: folded, prunedCallIds: pruned, lastAbortSeq, lastUsage, lastRewriteSeq, lastStepGrowth, rewrites };
}

function rewritePart(part: Part, pruned: ReadonlyMap<string, boolean>, archived: ReadonlySet<string>): Part | null {
  if (part.type !== 'tool_call' && part.type !== 'tool_result') return part;
  if (archived.has(part.callId)) return null;
  if (!pruned.has(part.callId)) return part;
  if (part.type === 'tool_result') return replaceOutput(part, prunedPlaceholder(part.outputRef?.id));
  return pruned.get(part.callId) ? { ...part, input: CLEARED_TOOL_INPUT } : part;
}

/** The entry as is when nothing changed (keeping its stored tokens), rebuilt when a part did, gone when emptied. */
function rewriteEntry(entry: ViewEntry, rewrite: (part: Part) => Part | null): ViewEntry[] {
  const parts = entry.message.parts.map(rewrite);
  if (parts.every((part, i) => part === entry.message.parts[i])) return [entry];
  const kept = parts.filter((part): part is Part => part !== null);
  if (kept.length === 0) return [];
  return [{ message: { ...entry.message, parts: kept }, seq: entry.seq, origin: entry.origin }];
}
