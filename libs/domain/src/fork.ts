import { invalid } from './errors';

/**
 * One inherited range of a fork's log: seqs afterSeq+1..throughSeq are read
 * from the rows of `source` and were first appended to `origin` (the two
 * differ once a deleted source's rows were copied to a session that reads
 * them). A fork's own rows follow its last segment.
 */
export interface LineageSegment {
  source: string;
  origin: string;
  afterSeq: number;
  throughSeq: number;
}

/** A seq range (afterSeq, throughSeq] of one session's rows. */
export interface SeqRange {
  afterSeq: number;
  throughSeq: number;
}

/**
 * A fork starts from an event of its source: 1 (its session.created) up to
 * its head. Every log begins with session.created, so 0 is refused too.
 */
export function checkForkSeq(atSeq: number, headSeq: number): void {
  if (!Number.isSafeInteger(atSeq) || atSeq < 1 || atSeq > headSeq) {
    throw invalid('invalid_fork_seq', `atSeq must be between 1 and the source's head (${headSeq})`, { headSeq });
  }
}

/**
 * The lineage of a fork taken at `atSeq` of `parentId`: the parent's own
 * segments clipped at atSeq, then the parent's own rows up to atSeq, so a
 * fork of a fork still reads each event where it is stored (flat, no chain
 * to walk).
 */
export function forkLineage(parentId: string, parentLineage: readonly LineageSegment[] | null, atSeq: number): LineageSegment[] {
  const inherited = (parentLineage ?? []).filter((s) => s.afterSeq < atSeq).map((s) => ({ ...s, throughSeq: Math.min(s.throughSeq, atSeq) }));
  const ownFrom = parentLineage?.at(-1)?.throughSeq ?? 0;
  return atSeq > ownFrom ? [...inherited, { source: parentId, origin: parentId, afterSeq: ownFrom, throughSeq: atSeq }] : inherited;
}

/**
 * What deleting `deleted` does to a session whose lineage reads from it
 * (copy on delete): the ranges of the deleted session's rows to copy into
 * `self`, and the lineage that then reads them from `self`. Origins stay, so
 * the events still report where they were first appended.
 */
export function adoptSegments(lineage: readonly LineageSegment[], deleted: string, self: string): { copy: SeqRange[]; lineage: LineageSegment[] } {
  return {
    copy: lineage.filter((s) => s.source === deleted).map(({ afterSeq, throughSeq }) => ({ afterSeq, throughSeq })),
    lineage: lineage.map((s) => (s.source === deleted ? { ...s, source: self } : s)),
  };
}
