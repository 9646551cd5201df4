import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import { DomainError } from '@app/domain';
import { readStreamAccess, StreamAccessState } from '@app/event-store';
import { Invalidation } from '@app/queue';
import { CacheInvalidation } from '../auth/cache-invalidation';
import { sessionNotFound } from '../sessions/session-state';

/** Why a live event stream ended for good: its final `end` event's `reason`. */
export type StreamEndReason = 'key_revoked' | 'tenant_suspended' | 'tenant_deleted' | 'session_deleted' | 'session_archived';

/** An open stream as StreamAccess sees it: what it was opened with, and how it is paused and ended. */
export interface WatchedStream {
  readonly tenantId: string;
  readonly keyId: string;
  readonly sessionId: string;
  /** Its access may have changed: it sends nothing until the matching settle. */
  hold(): void;
  /** The answer to a hold: a reason ends the stream, null lets it go on once no other hold is pending. */
  settle(reason: StreamEndReason | null): void;
}

function concerns(message: Invalidation, stream: WatchedStream): boolean {
  switch (message.kind) {
    case 'api-key':
      return stream.keyId === message.keyId;
    case 'tenant-keys':
      return stream.tenantId === message.tenantId;
    case 'sessions':
      return stream.tenantId === message.tenantId && message.sessionIds.includes(stream.sessionId);
    case 'tenant-policy':
      return false;
    case 'all':
      return true;
  }
}

function reasonOf(state: StreamAccessState | null, stream: Pick<WatchedStream, 'keyId' | 'sessionId'>): StreamEndReason | null {
  if (!state) return 'tenant_deleted';
  if (state.suspended) return 'tenant_suspended';
  if (!state.liveKeyIds.has(stream.keyId)) return 'key_revoked';
  const archived = state.archivedBySession.get(stream.sessionId);
  if (archived === undefined) return 'session_deleted';
  return archived ? 'session_archived' : null;
}

/**
 * Ends live event streams whose access went: a key revoked, a tenant
 * suspended or deleted, a session deleted or archived. It rides on the
 * cache-invalidation messages (CacheInvalidation), so a change made on any
 * replica, or by the worker's retention, reaches every replica's streams.
 * A message only says which streams to look at: they stop sending at once,
 * their state is read from PostgreSQL (one transaction per tenant), and
 * each ends with the reason found or goes on. So a reinstatement that
 * overtook its suspension ends nothing, and `all` (the subscription came
 * back after a gap) checks every stream rather than ending them.
 */
@Injectable()
export class StreamAccess {
  private readonly logger = new Logger(StreamAccess.name);
  private readonly streams = new Set<WatchedStream>();
  private readonly retryMs: number;

  constructor(
    private readonly db: Database,
    invalidation: CacheInvalidation,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.retryMs = config.sse.heartbeatMs;
    invalidation.onInvalidation((message) => this.check([...this.streams].filter((stream) => concerns(message, stream))));
  }

  /** Registers an open stream; the returned function removes it. */
  watch(stream: WatchedStream): () => void {
    this.streams.add(stream);
    return () => this.streams.delete(stream);
  }

  /** The stream's state now, read from PostgreSQL: why it must end, or null. */
  async reasonToEnd(tenantId: string, keyId: string, sessionId: string): Promise<StreamEndReason | null> {
    return reasonOf(await this.db.tenantRead(tenantId, (tx) => readStreamAccess(tx, [keyId], [sessionId])), { keyId, sessionId });
  }

  /** What a stream about to open answers instead when its access went meanwhile, as the guard or GET .../events would have. */
  refusal(reason: StreamEndReason, sessionId: string): DomainError {
    switch (reason) {
      case 'key_revoked':
      case 'tenant_deleted':
        return new DomainError('unauthorized', 'invalid_api_key', 'Missing, malformed, unknown or revoked API key');
      case 'tenant_suspended':
        return new DomainError('forbidden', 'tenant_suspended', 'This tenant is suspended; its API keys are refused until an administrator reinstates it');
      case 'session_deleted':
        return sessionNotFound(sessionId);
      case 'session_archived':
        return new DomainError('conflict', 'session_archived', 'The session is archived: nothing more is appended, so it has no live stream; read it with GET .../events');
    }
  }

  /** Holds the streams and settles each once its state is read. */
  private check(streams: WatchedStream[]): void {
    const byTenant = new Map<string, WatchedStream[]>();
    for (const stream of streams) {
      stream.hold();
      byTenant.set(stream.tenantId, [...(byTenant.get(stream.tenantId) ?? []), stream]);
    }
    for (const [tenantId, group] of byTenant) void this.settle(tenantId, group);
  }

  private async settle(tenantId: string, group: WatchedStream[]): Promise<void> {
    try {
      const keyIds = [...new Set(group.map((stream) => stream.keyId))];
      const sessionIds = [...new Set(group.map((stream) => stream.sessionId))];
      const state = await this.db.tenantRead(tenantId, (tx) => readStreamAccess(tx, keyIds, sessionIds));
      for (const stream of group) stream.settle(reasonOf(state, stream));
    } catch (error) {
      // Still held, so nothing is sent that access may no longer allow; read again after a heartbeat (a read failure's bound anyway).
      this.logger.warn(`live streams of tenant ${tenantId}: access check failed, retrying: ${error instanceof Error ? error.message : String(error)}`);
      setTimeout(() => {
        const open = group.filter((stream) => this.streams.has(stream));
        if (open.length > 0) void this.settle(tenantId, open);
      }, this.retryMs).unref();
    }
  }
}
