import { SessionRow } from '@app/event-store';

/** The session state as the API shows it. */
export function sessionState(row: SessionRow) {
  return {
    id: row.sessionId,
    model: row.model,
    system: row.system,
    config: row.config,
    metadata: row.metadata,
    headSeq: row.headSeq,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
