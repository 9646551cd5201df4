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

export const sessionNotFound = (sessionId: string) =>
  new DomainError('not_found', 'session_not_found', `Session ${JSON.stringify(sessionId.slice(0, 200))} does not exist`);
