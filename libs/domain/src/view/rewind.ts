import { DomainError, invalid } from '../errors';
import { CLIENT_EVENT_TYPES, EventType, NewEvent, StoredEvent } from '../events';

/**
 * Rewind (POST .../rewind {toSeq}): a `session.rewound` event at seq R with
 * `toSeq` T takes out of the view what clients appended in (T, R): their
 * messages, steps, aborts and requests. The service's own events there
 * (pins, prunes, archives, configuration changes, compactions) stay in
 * force: they are not turns, and a pin or a configuration change is not
 * undone by going back in the conversation. The log keeps everything; a view
 * at an earlier seq (`atSeq`, a fork taken there) does not hold the rewind
 * event, so it still shows them.
 */

const CLIENT_TYPES: ReadonlySet<EventType> = new Set(CLIENT_EVENT_TYPES);

/** The (T, R) ranges of the rewinds among `events`. */
export function rewoundRanges(events: readonly StoredEvent[]): Array<{ after: number; before: number }> {
  const ranges: Array<{ after: number; before: number }> = [];
  for (const event of events) if (event.type === 'session.rewound') ranges.push({ after: event.data.toSeq, before: event.seq });
  return ranges;
}

/**
 * The events without those a rewind among them took out of the view (client
 * events in one of its ranges). Returns the same array when there is no
 * rewind, so the common path copies nothing.
 */
export function withoutRewound<E extends StoredEvent>(events: readonly E[]): readonly E[] {
  const ranges = rewoundRanges(events);
  if (ranges.length === 0) return events;
  return events.filter((event) => !CLIENT_TYPES.has(event.type) || !ranges.some((range) => event.seq > range.after && event.seq < range.before));
}

export interface RewindTarget {
  toSeq: number;
  headSeq: number;
  /** The pivot in force: events up to here are summarized in its prefix, which a rewind cannot take apart. */
  coveredThroughSeq: number;
}

/**
 * Checks a rewind against the session as it stands (under its lock): toSeq
 * below the head (at or above 1, session.created), and not inside the range
 * the latest compaction summarized: its prefix holds those turns, and
 * rebuilding the view from an older pivot would re-read what it replaced.
 * A fork at `atSeq` reaches any point of the history instead.
 */
export function assertRewindable({ toSeq, headSeq, coveredThroughSeq }: RewindTarget): void {
  if (!Number.isSafeInteger(toSeq) || toSeq < 1 || toSeq >= headSeq) {
    throw invalid('invalid_rewind_seq', `toSeq ${toSeq} must be at least 1 and below the head ${headSeq}`, { path: '$.toSeq', headSeq });
  }
  if (toSeq < coveredThroughSeq) {
    throw new DomainError(
      'conflict',
      'rewind_behind_pivot',
      `toSeq ${toSeq} is inside the compacted range (through seq ${coveredThroughSeq}): rewind to ${coveredThroughSeq} or later, or fork at atSeq ${toSeq}`,
      { toSeq, coveredThroughSeq },
    );
  }
}

/** The rewind's event; its id is the caller's (unique per request). */
export function sessionRewoundEvent(id: string, toSeq: number): NewEvent<'session.rewound'> {
  return { id, type: 'session.rewound', data: { toSeq } };
}
