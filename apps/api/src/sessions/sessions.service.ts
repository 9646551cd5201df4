import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, AppConfig, TenantQuotas } from '@app/config';
import { Database, sqlState, Tx } from '@app/database';
import { applyConfigPatch, checkForkSeq, DomainError, estimateMessageTokens, invalid, NewEvent, payloadHash, readModelOf, sessionSettings, windowCacheRatios } from '@app/domain';
import { findSession, insertEvents, insertOutbox, insertFork, insertSession, listSessions, lockForkSource, OutboxRow, SessionConfigs, SessionCursor, readTenantConfig, readWindow, setSessionArchived, updateSessionConfig } from '@app/event-store';
import { OutboxRelay } from '@app/queue';
import { AppendCommitted, deleteSessionWithOutputs } from '@app/use-cases';
import { CacheInvalidation } from '../auth/cache-invalidation';
import { requestFingerprint, runIdempotent } from '../http/idempotency';
import { CreateSessionDto, ForkSessionDto, ListSessionsQuery, UpdateSessionDto } from './sessions.dto';
import { ContextService, tokenFigures } from '../context/context.service';
import { compactMessage } from '../compactions/compaction-trigger';
import { decodeCursor, encodeCursor, invalidCursor } from '../http/cursor';
import { sessionNotFound, sessionState } from './session-state';
import { EventsService } from '../events/events.service';
import { TenantLimitsService } from '../limits/tenant-limits';

/** A listing cursor: the last row's sort keys. */
const readSessionCursor = ([updatedAt, sessionId]: unknown[]): SessionCursor | undefined =>
  typeof updatedAt === 'string' && typeof sessionId === 'string' && !Number.isNaN(Date.parse(updatedAt)) ? { updatedAt, sessionId } : undefined;

@Injectable()
export class SessionsService {
  constructor(
    private readonly db: Database,
    private readonly relay: OutboxRelay,
    private readonly contexts: ContextService,
    private readonly invalidation: CacheInvalidation,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: EventsService,
    private readonly committed: AppendCommitted,
    private readonly tenantLimits: TenantLimitsService,
  ) {}

  async create(tenantId: string, dto: CreateSessionDto, idempotencyKey?: string) {
    const sessionId = dto.id ?? randomUUID();
    const systemTokens = dto.system ? estimateMessageTokens({ id: 'system', role: 'system', parts: [{ type: 'text', text: dto.system }] }, dto.model) : 0;
    const created: NewEvent = {
      id: `session-created`,
      type: 'session.created',
      data: { model: dto.model, ...(dto.system !== undefined ? { system: dto.system } : {}), config: dto.config ?? {}, metadata: dto.metadata ?? {} },
    };
    return this.db.tenantTx(tenantId, (tx) =>
      runIdempotent(tx, idempotencyKey, () => requestFingerprint('POST', '/v1/sessions', dto), this.config.idempotency.ttlHours, async () => {
        // Refuses a bad config (400) or an unknown model without limits (422) before anything is written.
        sessionSettings({ model: dto.model, config: dto.config ?? {}, tenantConfig: (await readTenantConfig(tx)) ?? {} });
        const row = await insertSession(tx, tenantId, {
          sessionId,
          model: dto.model,
          system: dto.system ?? null,
          systemTokens,
          config: dto.config ?? {},
          metadata: dto.metadata ?? {},
        });
        if (!row) throw new DomainError('conflict', 'session_exists', `Session ${sessionId} already exists`);
        row.headSeq = await insertEvents(tx, sessionId, 0, [{ event: created, payloadHash: payloadHash(created), tokens: 0 }]);
        return { status: 201, body: sessionState(row) };
      }),
    );
  }

  /**
   * POST .../forks: a new session that reads the source's log up to atSeq
   * (no event copied) and starts from its view there: the pivot then in
   * force, pins, pruning, tool-output refs, the tool-call ledger; its own
   * appends follow at atSeq+1. A compaction pending at atSeq is pending in
   * the fork too and gets the fork's own job.
   */
  async fork(tenantId: string, sourceId: string, dto: ForkSessionDto, idempotencyKey?: string) {
    const forkId = dto.id ?? randomUUID();
    const outbox: OutboxRow[] = [];
    const fingerprint = () => requestFingerprint('POST', `/v1/sessions/${sourceId}/forks`, dto);
    const result = await this.db.tenantTx(tenantId, (tx) =>
      runIdempotent(tx, idempotencyKey, fingerprint, this.config.idempotency.ttlHours, async () => {
        const source = await lockForkSource(tx, sourceId);
        if (!source) throw sessionNotFound(sourceId);
        const atSeq = dto.atSeq ?? source.headSeq;
        checkForkSeq(atSeq, source.headSeq);
        const row = await insertFork(tx, source, { forkId, sourceId, atSeq, metadata: dto.metadata ?? source.metadata });
        if (!row) throw new DomainError('conflict', 'session_exists', `Session ${forkId} already exists`);
        const read = (await readWindow(tx, forkId))!;
        const { pendingMarkerSeq } = readModelOf(read).compaction;
        if (pendingMarkerSeq !== null) outbox.push(...(await insertOutbox(tx, [compactMessage(tenantId, forkId, pendingMarkerSeq)])));
        return { status: 201, body: sessionState(row) };
      }),
    );
    await this.relay.dispatchNow(this.db, outbox);
    return result;
  }

  /**
   * PATCH, in one transaction: unarchives first (so a config change in the
   * same request applies), changes the config, archives last.
   */
  async update(tenantId: string, sessionId: string, { config, archived }: UpdateSessionDto) {
    if (config === undefined && archived === undefined) {
      // An unknown session (another tenant's included) is a 404 whatever the body.
      if (!(await this.db.tenantTx(tenantId, (tx) => findSession(tx, sessionId)))) throw sessionNotFound(sessionId);
      throw invalid('validation_failed', 'Nothing to change: give config or archived', { fields: [] });
    }
    const { quotas } = await this.tenantLimits.policyOf(tenantId);
    const changed = await this.db.tenantTx(tenantId, async (tx) => {
      if (archived === false && !(await setSessionArchived(tx, sessionId, false))) throw sessionNotFound(sessionId);
      const appended = config === undefined ? undefined : await this.changeConfig(tx, tenantId, sessionId, config, quotas);
      if (archived === true && !(await setSessionArchived(tx, sessionId, true))) throw sessionNotFound(sessionId);
      return appended;
    });
    if (changed) await this.committed.after({ tenantId, sessionId, ...changed });
    // Nothing more is appended to an archived session: its live streams, on every replica, end.
    if (archived === true) this.invalidation.publish({ kind: 'sessions', tenantId, sessionIds: [sessionId] });
    return this.get(tenantId, sessionId);
  }

  /**
   * Merges a config patch into the session's overrides under the session
   * lock, validated against the resolved config (a patch that leaves an
   * unknown model without limits is refused), and records it in the log as
   * session.config_changed, through the append path.
   */
  private changeConfig(tx: Tx, tenantId: string, sessionId: string, patch: Record<string, unknown>, quotas: TenantQuotas) {
    // The settings the lock read (withConfigs) with the patch applied: checked by the rule, written after the decision.
    const patched = (configs: SessionConfigs) => ({ ...configs, config: applyConfigPatch(configs.config, patch) as Record<string, unknown> });
    return this.events.appendOwn(tx, tenantId, sessionId, (state) => [{ id: `config-changed-${state.headSeq + 1}`, type: 'session.config_changed', data: { patch } }], {
      quotas,
      withConfigs: true,
      rule: {
        read: async (_tx, configs) => configs!,
        check: (configs) => {
          sessionSettings(patched(configs));
        },
        write: (tx, configs) => updateSessionConfig(tx, sessionId, patched(configs).config),
      },
    });
  }

  /** State plus the same token figures the context endpoint reports. */
  async get(tenantId: string, sessionId: string) {
    const { read, composed } = await this.contexts.view(tenantId, sessionId);
    return {
      ...sessionState(read.session),
      pivotSeq: composed.view.pivotSeq,
      coveredThroughSeq: read.session.coveredThroughSeq,
      preset: composed.config.preset,
      tokens: tokenFigures(composed),
      compaction: composed.compaction,
      cache: windowCacheRatios(composed.view.pivotSeq, read.events),
    };
  }

  /** A page of the tenant's sessions matching the query's filters, by last activity, newest first. */
  async list(tenantId: string, { limit = 50, cursor, ...search }: ListSessionsQuery) {
    const after = cursor === undefined ? undefined : decodeCursor(cursor, readSessionCursor);
    const rows = await this.db.tenantTx(tenantId, (tx) => listSessions(tx, limit + 1, search, after)).catch((error: unknown) => {
      // A forged cursor, or a filter, can carry values PostgreSQL refuses (a bad timestamp, a NUL): SQLSTATE class 22.
      if (sqlState(error)?.startsWith('22')) throw after ? invalidCursor() : invalid('invalid_search', 'A filter holds a value the database refuses');
      throw error;
    });
    const page = rows.slice(0, limit);
    return {
      sessions: page.map(sessionState),
      nextCursor: rows.length > limit ? encodeCursor([page[page.length - 1].cursorTs, page[page.length - 1].sessionId]) : null,
    };
  }

  async delete(tenantId: string, sessionId: string): Promise<void> {
    const deleted = await this.db.tenantTx(tenantId, (tx) => deleteSessionWithOutputs(tx, sessionId));
    if (!deleted) throw sessionNotFound(sessionId);
    // Its live streams, on every replica, end.
    this.invalidation.publish({ kind: 'sessions', tenantId, sessionIds: [sessionId] });
  }
}
