import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, AppConfig, TenantQuotas } from '@app/config';
import { Database, ReadDatabase, Tx } from '@app/database';
import {
  AppendBatch,
  applyToolCallLedger,
  classifyAppendRetry,
  DomainError,
  eventTokens,
  hasToolResults,
  nativeAppendRequest,
  NewEvent,
  parseAppendBatch,
  payloadHash,
  referencedCallIds,
  samePayload,
  versionConflict,
} from '@app/domain';
import { findToolCalls, insertEvents, insertEventsIfUnchanged, isDuplicateEventId, lockSessionForAppend, OutboxRow, EventJsonRow, readEventPage, recordToolCalls } from '@app/event-store';
import { OutboxRelay } from '@app/queue';
import { TenantLimitsService } from '../limits/tenant-limits';
import { boundsWithoutTrigger, triggerAfterAppend } from '../compactions/compaction-trigger';
import { ViewBounds } from '../compactions/view-bounds';
import { requestFingerprint, runIdempotent } from '../http/idempotency';
import { PruneScheduler } from '../prune/prune-scheduler';
import { sessionArchived, sessionNotFound } from '../sessions/session-state';
import { Metrics } from '../metrics/metrics';
import { ToolOutputAppend } from '../tool-outputs/tool-output-append';
import { SessionHeads } from './events-stream.heads';
import { storedEventOf } from '@app/domain/tool-output';
import { RecentSessions } from '../sessions/recent-sessions';

/** How a batch is appended besides its events. */
export interface AppendRequest {
  idempotencyKey?: string;
  /** The request's fingerprint, for Idempotency-Key (computed only when a key is given). */
  fingerprint: () => Buffer;
  /** A use case's own rule, run under the session lock before anything is written; it throws to refuse the batch. */
  check?: (tx: Tx) => Promise<void>;
}

/** Sessions whose model (fixed for the life of a session row) an append may assume before its lock answers. */
const REMEMBERED_MODELS = 50_000;

/** A speculative insert rested on an assumption the lock's answer refuted: the attempt rolls back and runs again without it. */
class SpeculationMissed extends Error {}

/** What the first, optimistic attempt answers when the batch may be a retry of a committed one. */
const ANSWERS_OF_A_RETRY = new Set(['version_conflict', 'duplicate_tool_call_id', 'duplicate_tool_result']);

@Injectable()
export class EventsService {
  /** Each session's model as its last append's lock read it: the token estimate of a speculative insert. */
  private readonly models = new RecentSessions<string>(REMEMBERED_MODELS);

  constructor(
    private readonly db: Database,
    private readonly reads: ReadDatabase,
    private readonly relay: OutboxRelay,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly toolOutputs: ToolOutputAppend,
    private readonly pruneScheduler: PruneScheduler,
    private readonly metrics: Metrics,
    private readonly tenantLimits: TenantLimitsService,
    private readonly viewBounds: ViewBounds,
    private readonly heads: SessionHeads,
  ) {}

  /** The stored rows of a batch: each event with its payload hash and token estimate. */
  private rowsOf(events: readonly NewEvent[], hashes: readonly Buffer[], model: string) {
    return events.map((event, i) => ({ event, payloadHash: hashes[i], tokens: eventTokens(event, model) }));
  }

  /** Appends a client batch (POST .../events): the domain validates it strictly, then appendBatch. */
  async append(tenantId: string, sessionId: string, body: unknown, idempotencyKey?: string) {
    return this.appendRequest(tenantId, sessionId, 'events', body, body, idempotencyKey);
  }

  /** Appends a provider's messages and response object (POST .../messages) as the batch they stand for. */
  async appendNative(tenantId: string, sessionId: string, body: unknown, idempotencyKey?: string) {
    return this.appendRequest(tenantId, sessionId, 'messages', body, nativeAppendRequest(body), idempotencyKey);
  }

  /** An Idempotency-Key's fingerprint is the body as sent, whichever shape it had. */
  private appendRequest(tenantId: string, sessionId: string, route: string, body: unknown, request: unknown, idempotencyKey?: string) {
    const batch = parseAppendBatch(request, randomUUID, this.config.limits.maxEventsPerAppend);
    const fingerprint = () => requestFingerprint('POST', `/v1/sessions/${sessionId}/${route}`, body);
    return this.appendBatch(tenantId, sessionId, batch, { idempotencyKey, fingerprint });
  }

  /**
   * Appends a batch under the session row lock: gap-free seqs, expectedSeq
   * checked, repeated event ids answered with their original seqs,
   * tool-call pairing enforced, the request's own `check`; all or nothing.
   * A batch that crosses the compaction trigger also gets its marker,
   * enqueued after commit. Client batches and the service's own (pins) take
   * this one path.
   *
   * Optimistic about event ids: the first attempt inserts without looking
   * them up (the unique index backs it). Only when it meets a stored id, a
   * head other than expectedSeq or an already issued tool call, as a retry
   * of a committed batch does, a second transaction looks the ids up and
   * answers replay, 422, 409 or 400.
   *
   * Pipelined: a batch without tool results or `check`, of a session whose
   * model this process knows, is inserted right behind the lock, its seqs
   * taken from the locked row in the statement itself; the lock's answer
   * still decides, and a refusal rolls the insert back.
   */
  async appendBatch(tenantId: string, sessionId: string, batch: AppendBatch, request: AppendRequest) {
    const hashes = batch.events.map(payloadHash);
    const { quotas } = await this.tenantLimits.policyOf(tenantId);
    const attempt = (lookupIds: boolean, speculate: boolean) => this.commitBatch(tenantId, sessionId, batch, hashes, { ...request, lookupIds, speculate, quotas });
    const optimistic = (speculate: boolean): ReturnType<typeof attempt> =>
      attempt(false, speculate).catch((error: unknown) => {
        if (error instanceof SpeculationMissed) return optimistic(false);
        const retried = isDuplicateEventId(error) || (error instanceof DomainError && ANSWERS_OF_A_RETRY.has(error.code));
        if (retried) return attempt(true, false);
        throw error;
      });
    const oneTrip = await this.appendInOneTrip(tenantId, sessionId, batch, hashes, request, quotas).catch((error: unknown) => {
      // An event id already stored: a retry of a committed batch, which only the lookup answers.
      if (isDuplicateEventId(error)) return attempt(true, false);
      throw error;
    });
    const committed = oneTrip ?? (await optimistic(true));
    if (committed.result.status === 201) this.metrics.appendedEvents.inc(batch.events.length);
    if (committed.headSeq !== null) this.heads.publish({ tenantId, sessionId, headSeq: committed.headSeq });
    await this.relay.dispatchNow(this.db, committed.outbox);
    if (committed.pruneAfterSeq !== null) await this.pruneScheduler.afterStep(tenantId, sessionId, committed.pruneAfterSeq);
    return committed.result;
  }

  /**
   * A batch the ordinary path would only insert, written in one round trip:
   * BEGIN, a conditional insert and COMMIT go out together
   * (insertEventsIfUnchanged, Database.tenantOneTrip). For a batch with no
   * tool call or result, expectedSeq, Idempotency-Key, check or quota, of a
   * session whose model and view bound this process knows, that certainly
   * stays below the compaction trigger. The statement's conditions (the same
   * row at the bound's head, not archived, not a fork) stand for the lock's
   * checks; when they do not hold it writes nothing and the ordinary path
   * runs and answers. An event id already stored fails the statement (its
   * COMMIT rolls back) and throws, for the lookup to answer. Undefined:
   * nothing was written.
   */
  private async appendInOneTrip(tenantId: string, sessionId: string, batch: AppendBatch, hashes: Buffer[], request: AppendRequest, quotas: TenantQuotas) {
    if (request.idempotencyKey !== undefined || request.check || batch.expectedSeq !== undefined) return undefined;
    if (quotas.eventBytes > 0 || quotas.toolOutputBytes > 0 || referencedCallIds(batch.events).length > 0) return undefined;
    const model = this.models.get(tenantId, sessionId);
    if (model === undefined) return undefined;
    const rows = this.rowsOf(batch.events, hashes, model);
    const bounds = boundsWithoutTrigger(
      this.viewBounds,
      tenantId,
      sessionId,
      batch.events,
      rows.reduce((sum, row) => sum + row.tokens, 0),
    );
    if (!bounds) return undefined;
    const expected = { headSeq: bounds.known.seq, model, createdAt: bounds.known.createdAt };
    const headSeq = await this.db.tenantOneTrip(tenantId, (tx) => insertEventsIfUnchanged(tx, sessionId, expected, rows));
    if (headSeq === undefined) return undefined;
    this.viewBounds.set(tenantId, sessionId, bounds.next);
    const result = { status: 201, body: { headSeq, events: batch.events.map((e, i) => ({ id: e.id, seq: expected.headSeq + i + 1 })) } };
    return { result, outbox: [] as OutboxRow[], pruneAfterSeq: null, headSeq };
  }

  private async commitBatch(
    tenantId: string,
    sessionId: string,
    batch: AppendBatch,
    hashes: Buffer[],
    options: AppendRequest & { lookupIds: boolean; speculate: boolean; quotas: TenantQuotas },
  ) {
    const outbox: OutboxRow[] = [];
    let pruneAfterSeq: number | null = null;
    /** Set when this attempt wrote events: the head the live event streams are woken for. */
    let appendedHeadSeq: number | null = null;
    const result = await this.db.tenantTx(tenantId, (tx) =>
      runIdempotent(tx, options.idempotencyKey, options.fingerprint, this.config.idempotency.ttlHours, async () => {
        const ids = batch.events.map((e) => e.id);
        const withToolResults = hasToolResults(batch.events);
        // Even the optimistic attempt looks ids up among a fork's inherited events: no unique index spans them.
        // A batch with tool results needs the session's settings (the tool-output view): read with the lock, not after it.
        const locking = lockSessionForAppend(tx, sessionId, {
          eventIds: ids,
          lookup: options.lookupIds ? 'log' : 'inherited',
          withConfigs: withToolResults,
        });
        const callIds = referencedCallIds(batch.events);
        const knownCalls = callIds.length > 0 ? findToolCalls(tx, sessionId, callIds) : Promise.resolve([]);
        // A batch whose rows do not depend on the lock's answer goes out right behind the lock: one round trip
        // less. Every check below still runs before COMMIT, and a refusal rolls it back.
        const model = options.speculate && !withToolResults && !options.check ? this.models.get(tenantId, sessionId) : undefined;
        const speculated = model === undefined ? undefined : this.rowsOf(batch.events, hashes, model);
        const inserting = speculated && insertEvents(tx, sessionId, null, speculated);
        // Settled on every path: a refusal below leaves them unawaited.
        void knownCalls.catch(() => undefined);
        void inserting?.catch(() => undefined);
        const locked = await locking;
        if (!locked) throw sessionNotFound(sessionId);
        this.models.set(tenantId, sessionId, locked.model);
        // Written on the wrong assumptions (another session under this id, an event id a fork inherited): roll back, go again.
        if (speculated && (locked.model !== model || locked.existing.length > 0)) throw new SpeculationMissed();
        const indexById = new Map(ids.map((id, i) => [id, i]));
        const sameBody = (stored: Buffer, i: number) => samePayload(stored, batch.events[i], hashes[i]);
        const retry = classifyAppendRetry(
          ids,
          locked.existing.map((e) => ({ id: e.id, seq: e.seq, sameBody: sameBody(e.payloadHash, indexById.get(e.id)!) })),
        );
        if (retry.kind === 'replay') return { status: 200, body: { headSeq: locked.headSeq, events: retry.events } };
        if (locked.archived) throw sessionArchived(sessionId);
        if (batch.expectedSeq !== undefined && batch.expectedSeq !== locked.headSeq) {
          throw versionConflict(batch.expectedSeq, locked.headSeq);
        }
        await options.check?.(tx);
        const ledger = applyToolCallLedger(batch.events, await knownCalls);
        // Tool outputs go to the store; events keep their in-context views (hashes stay those of the client's events).
        // Tokens are the views'; each row keeps a view only where the tool-output store does not hold it (storedEventOf).
        const prepared = speculated ? undefined : await this.toolOutputs.prepareAppend(tx, sessionId, locked.headSeq, batch.events, locked.configs);
        const rows =
          speculated ?? this.rowsOf(prepared!.events, hashes, locked.model).map((row, i) => ({ ...row, event: storedEventOf(row.event, batch.events[i]) }));
        const seqOf = (index: number) => locked.headSeq + index + 1;
        // The tool-output inserts, the events and the tool calls go out in one burst (pipelined, still in this order);
        // the first refusal among them is the one that rejects.
        const [headSeq] = await Promise.all([
          inserting ?? insertEvents(tx, sessionId, locked.headSeq, rows),
          recordToolCalls(
            tx,
            sessionId,
            ledger.issued.map((c) => ({ callId: c.callId, name: c.name, seq: seqOf(c.eventIndex) })),
            ledger.answered.map((a) => ({ callId: a.callId, seq: seqOf(a.eventIndex) })),
          ),
          ...(prepared?.writes ?? []),
        ]);
        const appended = { firstSeq: seqOf(0), events: batch.events, tokens: rows.reduce((sum, row) => sum + row.tokens, 0) };
        const trigger = await triggerAfterAppend(tx, tenantId, sessionId, appended, this.viewBounds);
        outbox.push(...(trigger?.outbox ?? []));
        const compaction = trigger?.pendingMarkerSeq ? { compaction: { pendingMarkerSeq: trigger.pendingMarkerSeq } } : {};
        if (trigger?.pruneScheduled) pruneAfterSeq = trigger.headSeq;
        // After every write of the batch (events, inline tool outputs, a marker): over a quota, all of it rolls back.
        await this.tenantLimits.assertWithinQuotas(tx, options.quotas);
        appendedHeadSeq = trigger?.headSeq ?? headSeq;
        return {
          status: 201,
          body: { headSeq: trigger?.headSeq ?? headSeq, events: batch.events.map((e, i) => ({ id: e.id, seq: seqOf(i) })), ...compaction },
        };
      }),
    );
    return { result, outbox, pruneAfterSeq, headSeq: appendedHeadSeq };
  }

  /**
   * A page of the raw log (of `types` only, when given); on the read replica
   * when one is configured and holds the session up to `minSeq`. Each event
   * comes as JSON text written by PostgreSQL and goes out as it is (pageJson);
   * only an event whose tool output is restored from the store is parsed.
   */
  async read(tenantId: string, sessionId: string, { afterSeq = 0, limit = 100, minSeq = 0, types }: { afterSeq?: number; limit?: number; minSeq?: number; types?: readonly string[] }): Promise<EventPage> {
    const pageSize = Math.min(limit, this.config.limits.maxPageSize);
    const read = await this.reads.tenantRead(
      tenantId,
      (tx) => readEventPage(tx, sessionId, afterSeq, pageSize, types),
      (p) => p !== undefined && p.headSeq >= minSeq,
    );
    if (!read) throw sessionNotFound(sessionId);
    const { headSeq, events } = read;
    const last = events.length > 0 ? events[events.length - 1].seq : afterSeq;
    // A filtered page short of the limit is the last one.
    const more = types ? events.length === pageSize : last < headSeq;
    return { headSeq, events, nextAfterSeq: more ? last : null };
  }
}

/** A page of the raw log, each event already JSON text. */
export interface EventPage {
  headSeq: number;
  events: EventJsonRow[];
  nextAfterSeq: number | null;
}

/** The response body of GET .../events, in pieces (sendJsonPieces): each event's JSON as read. */
export function pageJson(page: EventPage): string[] {
  const pieces = [`{"headSeq":${page.headSeq},"events":[`];
  page.events.forEach((e, i) => (i === 0 ? pieces.push(...e.json) : pieces.push(',', ...e.json)));
  pieces.push(`],"nextAfterSeq":${page.nextAfterSeq}}`);
  return pieces;
}
