import type { CompactionCompletedData, NewEvent } from '../events';

/**
 * Where an appended batch moves the session's pivot (the compaction a context
 * read starts from). The seq is given as an offset from the head the batch is
 * written at: the store learns that head only inside its write statement.
 */
export interface PivotMove {
  /** The pivot's 1-based position in the batch: its seq is head + offset. */
  offset: number;
  /** The read starts after this seq (the completed compaction's coveredThroughSeq). */
  coveredThroughSeq: number;
}

/**
 * A completed compaction becomes the pivot when it is appended; of several in
 * one batch, the last one wins. Null when the batch leaves the pivot where it is.
 */
export function pivotMovedBy(batch: ReadonlyArray<Pick<NewEvent, 'type' | 'data'>>): PivotMove | null {
  const index = batch.map((event) => event.type).lastIndexOf('compaction.completed');
  if (index < 0) return null;
  return { offset: index + 1, coveredThroughSeq: (batch[index].data as CompactionCompletedData).coveredThroughSeq };
}
