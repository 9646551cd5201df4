// The session row's types and mappers, in a leaf of their own: every store
// that reads or writes session rows imports them from here, not from another
// store.

/** What a session was forked from (kept after that session is deleted). */
export interface ForkedFrom {
  sessionId: string;
  atSeq: number;
}

export const forkedFromOf = (row: Record<string, any>): ForkedFrom | null =>
  row.forked_from === null ? null : { sessionId: row.forked_from, atSeq: Number(row.forked_at_seq) };

export interface SessionRow {
  sessionId: string;
  model: string;
  system: string | null;
  config: Record<string, unknown>;
  metadata: Record<string, unknown>;
  headSeq: number;
  createdAt: Date;
  updatedAt: Date;
  archivedAt: Date | null;
  forkedFrom: ForkedFrom | null;
}

/** A listed session, with its updated_at as text: the list cursor needs its full microsecond precision. */
export type ListedSession = SessionRow & { cursorTs: string };

/**
 * The session columns toSession reads, for every store that inserts or reads
 * session rows. No cast to text here: Citus refuses a function that is not
 * immutable (timestamptz's output) in RETURNING.
 */
export const SESSION_COLUMNS = 'session_id, model, system, config, metadata, head_seq, created_at, updated_at, archived_at, forked_from, forked_at_seq';

export function toSession(row: Record<string, any>): SessionRow {
  return {
    sessionId: row.session_id,
    model: row.model,
    system: row.system,
    config: row.config,
    metadata: row.metadata,
    headSeq: row.head_seq,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    archivedAt: row.archived_at,
    forkedFrom: forkedFromOf(row),
  };
}

/** The session's model, config overrides and its tenant's defaults. */
export interface SessionConfigs {
  model: string;
  config: Record<string, unknown>;
  tenantConfig: Record<string, unknown>;
}
