import { DomainError } from '@app/domain';
import { SessionRow } from '@app/event-store';

type SessionFields = Pick<SessionRow, 'sessionId' | 'model' | 'system' | 'config' | 'metadata' | 'headSeq' | 'createdAt' | 'updatedAt' | 'archivedAt' | 'forkedFrom'>;

/** The session state as the API shows it. */
export function sessionState(row: SessionFields) {
  return {
    id: row.sessionId,
    model: row.model,
    system: row.system,
    config: row.config,
    metadata: row.metadata,
    headSeq: row.headSeq,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    archivedAt: row.archivedAt?.toISOString() ?? null,
    // Only on a fork: what it was taken from, kept after that session is deleted.
    ...(row.forkedFrom ? { forkedFrom: row.forkedFrom } : {}),
  };
}

/** Client appends to an archived session are refused until it is unarchived (PATCH {archived: false}). */
export const sessionArchived = (sessionId: string) =>
  new DomainError('conflict', 'session_archived', `Session ${JSON.stringify(sessionId.slice(0, 200))} is archived; unarchive it (PATCH {"archived": false}) to append`);

export const sessionNotFound = (sessionId: string) =>
  new DomainError('not_found', 'session_not_found', `Session ${JSON.stringify(sessionId.slice(0, 200))} does not exist`);
