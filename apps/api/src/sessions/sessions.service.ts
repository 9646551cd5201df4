import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import { DomainError, invalid, NewEvent } from '@app/domain';
import { deleteSession, findSession, insertEvents, insertOutbox, insertSession, listSessions, OutboxRow } from '@app/event-store';
import { JobName, OutboxRelay, sessionJobId } from '@app/queue';
import { requestFingerprint, runIdempotent } from '../http/idempotency';
import { CreateSessionDto } from './sessions.dto';
import { sessionState } from './session-view';

export const sessionNotFound = (sessionId: string) =>
  new DomainError('not_found', 'session_not_found', `Session ${JSON.stringify(sessionId.slice(0, 200))} does not exist`);

export function payloadHash(event: Pick<NewEvent, 'type' | 'data'>): Buffer {
  return createHash('sha256').update(JSON.stringify([event.type, event.data])).digest();
}

function encodeCursor(row: { cursorTs: string; sessionId: string }): string {
  return Buffer.from(JSON.stringify([row.cursorTs, row.sessionId])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: string; sessionId: string } {
  try {
    const [createdAt, sessionId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof createdAt === 'string' && typeof sessionId === 'string' && !Number.isNaN(Date.parse(createdAt))) {
      return { createdAt, sessionId };
    }
  } catch {
    // fall through
  }
  throw invalid('invalid_cursor', 'cursor is not a cursor this API returned');
}

@Injectable()
export class SessionsService {
  constructor(
    private readonly db: Database,
    private readonly relay: OutboxRelay,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(tenantId: string, dto: CreateSessionDto, idempotencyKey?: string) {
    const sessionId = dto.id ?? randomUUID();
    const created: NewEvent = {
      id: `session-created`,
      type: 'session.created',
      data: { model: dto.model, ...(dto.system !== undefined ? { system: dto.system } : {}), config: dto.config ?? {}, metadata: dto.metadata ?? {} },
    };
    const outbox: OutboxRow[] = [];
    const result = await this.db.tenantTx(tenantId, (tx) =>
      runIdempotent(tx, idempotencyKey, requestFingerprint('POST', '/v1/sessions', dto), this.config.idempotency.ttlHours, async () => {
        const row = await insertSession(tx, tenantId, {
          sessionId,
          model: dto.model,
          system: dto.system ?? null,
          config: dto.config ?? {},
          metadata: dto.metadata ?? {},
        });
        if (!row) throw new DomainError('conflict', 'session_exists', `Session ${sessionId} already exists`);
        row.headSeq = await insertEvents(tx, sessionId, 0, [{ event: created, payloadHash: payloadHash(created), tokens: 0 }]);
        outbox.push(
          ...(await insertOutbox(tx, [
            { jobName: JobName.Noop, jobId: sessionJobId(JobName.Noop, tenantId, sessionId, 'created'), payload: { tenantId, sessionId } },
          ])),
        );
        return { status: 201, body: sessionState(row) };
      }),
    );
    await this.relay.dispatchNow(this.db, outbox);
    return result;
  }

  async get(tenantId: string, sessionId: string) {
    const row = await this.db.tenantTx(tenantId, (tx) => findSession(tx, sessionId));
    if (!row) throw sessionNotFound(sessionId);
    return sessionState(row);
  }

  async list(tenantId: string, limit = 50, cursor?: string) {
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const rows = await this.db.tenantTx(tenantId, (tx) => listSessions(tx, limit + 1, after));
    const page = rows.slice(0, limit);
    return {
      sessions: page.map(sessionState),
      nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null,
    };
  }

  async delete(tenantId: string, sessionId: string): Promise<void> {
    const deleted = await this.db.tenantTx(tenantId, (tx) => deleteSession(tx, sessionId));
    if (!deleted) throw sessionNotFound(sessionId);
  }
}
