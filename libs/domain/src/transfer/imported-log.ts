import { invalid } from '../errors';
import type { CompactionCompletedData, EventDataByType, EventType, Message, Pin, StoredEvent } from '../events';
import { foldPins } from '../pins/pins';
import { usageTotal } from '../view/tokens';

/** An event as the import reads it: seq, type and data (its shape already checked). */
export type ImportedEvent = { [T in EventType]: { seq: number; type: T; data: EventDataByType[T] } }[EventType];

const logError = (message: string, details?: Record<string, unknown>) => invalid('invalid_log', message, details);

/** Pins compared as the pivot carries them (absent = none), in order. */
const samePins = (a: readonly Pin[], b: readonly Pin[]) =>
  a.length === b.length && a.every((pin, i) => pin.pinId === b[i].pinId && pin.text === b[i].text && pin.seq === b[i].seq);

/** A prefix carries tool calls only as pairs, each result right after its call's message (protected tools): a provider refuses anything else. */
function assertPairedCalls(prefix: readonly Message[]): void {
  let open = new Set<string>();
  for (const message of prefix) {
    const results = message.parts.flatMap((part) => (part.type === 'tool_result' ? [part.callId] : []));
    if (results.some((callId) => !open.delete(callId))) throw logError('data.prefix holds a tool result that does not answer the call just before it');
    if (open.size > 0) throw logError('data.prefix holds a tool call its next message does not answer');
    open = new Set(message.parts.flatMap((part) => (part.type === 'tool_call' ? [part.callId] : [])));
  }
  if (open.size > 0) throw logError('data.prefix ends with an unanswered tool call');
}

/**
 * The records the service writes about a log, checked against the log they
 * claim to describe as an import reads it in seq order (each event's shape is
 * the schemas' to check first). A genuine export always passes: these are the
 * rules by which the service itself writes them.
 *
 * - A compaction.completed answers a compaction.requested before it, later
 *   than the one the previous pivot answered; its prefix holds tool calls
 *   only as answered pairs; it covers at least what that
 *   pivot covered and no further than its marker; it carries exactly the pins
 *   in force at its cut; the overhead it carries is part of a provider's count
 *   the log holds (no step: none).
 * - A compaction.failed names a marker of the log.
 * - A prune or archive names only tool calls answered before it.
 * - A pin is removed only while in force, added only under a free id.
 * - A step's contextSeq is a seq before it.
 * - A rewind's toSeq is a seq before it, not inside the range the pivot
 *   before it covers.
 *
 * Held state is linear in the log: answered calls, markers, pin events.
 */
export class ImportedLogCheck {
  private readonly markers = new Set<number>();
  private readonly answered = new Set<string>();
  private readonly pinEvents: ImportedEvent[] = [];
  /** Pins in force at the latest pivot's cut, and how many pin events that fold has taken in. */
  private pinsAtCut: Pin[] = [];
  private pinEventsFolded = 0;
  private pinsNow = new Set<string>();
  private pivot: { markerSeq: number; coveredThroughSeq: number } | null = null;
  private largestUsage = 0;

  /** Checks the next event (seq order) against those before it; throws 400 invalid_log naming what is wrong. */
  check(event: ImportedEvent): void {
    switch (event.type) {
      case 'message.added':
        for (const part of event.data.message.parts) if (part.type === 'tool_result') this.answered.add(part.callId);
        return;
      case 'step.finished': {
        const { contextSeq, usage } = event.data;
        if (contextSeq !== undefined && contextSeq >= event.seq) throw logError(`data.contextSeq ${contextSeq} is not a seq before this step's`);
        this.largestUsage = Math.max(this.largestUsage, usageTotal(usage));
        return;
      }
      case 'compaction.requested':
        this.markers.add(event.seq);
        return;
      case 'compaction.completed':
        return this.checkPivot(event.data);
      case 'compaction.failed':
        if (!this.markers.has(event.data.markerSeq)) throw logError(`data.markerSeq ${event.data.markerSeq} is not a compaction.requested of this log`);
        return;
      case 'tool_outputs.pruned':
      case 'tool_results.archived': {
        const unknown = event.data.callIds.find((callId) => !this.answered.has(callId));
        if (unknown !== undefined) throw logError(`data.callIds names ${JSON.stringify(unknown)}, a tool call not answered before it`);
        return;
      }
      case 'pin.added':
        if (this.pinsNow.has(event.data.pinId)) throw logError(`pin ${JSON.stringify(event.data.pinId)} is already in force`);
        this.pinsNow.add(event.data.pinId);
        this.pinEvents.push(event);
        return;
      case 'pin.removed':
        if (!this.pinsNow.delete(event.data.pinId)) throw logError(`pin ${JSON.stringify(event.data.pinId)} is not in force`);
        this.pinEvents.push(event);
        return;
      case 'session.rewound': {
        const { toSeq } = event.data;
        if (toSeq < 1 || toSeq >= event.seq) throw logError(`data.toSeq ${toSeq} is not a seq before this rewind's`);
        if (this.pivot && toSeq < this.pivot.coveredThroughSeq) {
          throw logError(`data.toSeq ${toSeq} is inside the range the pivot before it covers (through seq ${this.pivot.coveredThroughSeq})`);
        }
        return;
      }
      default:
        return;
    }
  }

  private checkPivot(data: CompactionCompletedData): void {
    const { markerSeq, coveredThroughSeq } = data;
    if (!this.markers.has(markerSeq)) throw logError(`data.markerSeq ${markerSeq} is not a compaction.requested before it`);
    if (this.pivot && markerSeq <= this.pivot.markerSeq) throw logError(`data.markerSeq ${markerSeq} was answered by an earlier compaction`);
    const from = this.pivot?.coveredThroughSeq ?? 0;
    if (coveredThroughSeq < from || coveredThroughSeq > markerSeq) {
      throw logError(`data.coveredThroughSeq ${coveredThroughSeq} must lie between the previous pivot's ${from} and the marker ${markerSeq}`);
    }
    assertPairedCalls(data.prefix);
    // The cut only moves forward, so the pin events up to it fold in once each.
    let folded = this.pinEventsFolded;
    while (folded < this.pinEvents.length && this.pinEvents[folded].seq <= coveredThroughSeq) folded++;
    const atCut = foldPins(this.pinsAtCut, this.pinEvents.slice(this.pinEventsFolded, folded) as StoredEvent[]);
    if (!samePins(data.pins ?? [], atCut)) throw logError('data.pins are not the pins in force at data.coveredThroughSeq');
    if ((data.overhead ?? 0) > this.largestUsage) {
      throw logError(`data.overhead ${data.overhead} exceeds every provider count in the log before it (${this.largestUsage})`);
    }
    this.pinsAtCut = atCut;
    this.pinEventsFolded = folded;
    this.pivot = { markerSeq, coveredThroughSeq };
  }
}
