/**
 * What a step's usage measured. The provider counted the context
 * the call was sent with, which is not the log at the step's seq: a pivot,
 * a prune or an archive may have landed while the call ran. A step says
 * which context it measured with `data.contextSeq` (the headSeq of the
 * context it read). Without it, the seq is inferred as the last event the
 * client itself appended before the step's own assistant messages (a user
 * or tool message, or its previous step): the client reads the context after
 * those, and cannot be assumed to have seen what the service appended since
 * (a pivot, a prune, the auto-continue message). Usage measured before the
 * latest pivot or rewrite is stale.
 */
import type { StoredEvent } from '../events';
import { AUTO_CONTINUE_KIND } from '../placeholders';

/** A step's usage and the seq of the view it measured. */
export interface MeasuredUsage {
  step: StoredEvent<'step.finished'>;
  measuredSeq: number;
}

/** The latest point the client certainly read the context at, after `event`; folded over the log in seq order from 0. */
export function requestPointAfter(point: number, event: StoredEvent): number {
  // A rewind is asked by the client, which reads the context after it.
  if (event.type === 'step.finished' || event.type === 'session.rewound') return event.seq;
  if (event.type !== 'message.added') return point;
  const { message } = event.data;
  return message.role === 'assistant' || message.metadata?.kind === AUTO_CONTINUE_KIND ? point : event.seq;
}

/** The seq of the view a step's usage measured: its contextSeq when given (never past the step), else the request point before it. */
export function usageMeasuredSeq(step: StoredEvent<'step.finished'>, point: number): number {
  const given = step.data.contextSeq;
  return given === undefined ? point : Math.min(given, step.seq - 1);
}
