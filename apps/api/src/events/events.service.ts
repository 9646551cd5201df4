import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, AppConfig, TenantQuotas } from '@app/config';
import { Database, ReadDatabase, Tx } from '@app/database';
import {
  AppendBatch,
  AppendCommand,
  AppendDecision,
  appendRows,
  AppendState,
  assumedOpenCalls,
  decideAppend,
  DomainError,
  hasToolResults,
  ledgerRows,
  nativeAppendRequest,
  NewEvent,
  openCallsAfter,
  parseAppendBatch,
  payloadHash,
  referencedCallIds,
} from '@app/domain';
import { isDuplicateEventId, isDuplicateToolCallId, isFailedAppendExpectation, ONE_TRIP_MAX_CHUNKS, OutboxRow, EventJsonRow, readEventPage, logWriter, SessionConfigs } from '@app/event-store';
import { AppendCommitted, AppendWrites } from '@app/use-cases';
import { hasQuota, TenantLimitsService } from '../limits/tenant-limits';
import { boundsWithoutTrigger, triggerAfterAppend } from '../compactions/compaction-trigger';
import { ViewBounds } from '../compactions/view-bounds';
import { requestFingerprint, runIdempotent } from '../http/idempotency';
import { sessionNotFound } from '../sessions/session-state';
import { ToolOutputAppend } from '../tool-outputs/tool-output-append';
import { RecentSessions } from '../sessions/recent-sessions';

/**
 * A use case's own rule (a pin's budget, a rewind's bounds): what it reads
 * under the session lock, the check the decider runs on it in its place
 * among the rules, and the use case's own writes once the batch is decided.
 */
export interface UseCaseRule<L> {
  /** `configs`: the session's and tenant's settings, when the append read them with the lock (withConfigs). */
  read: (tx: Tx, configs: SessionConfigs | undefined) => Promise<L>;
  check: (read: L) => void;
  write?: (tx: Tx, read: L) => Promise<unknown>;
}

/** How a batch is appended besides its events. */
export interface AppendRequest<L = unknown> {
  idempotencyKey?: string;
  /** The request's fingerprint, for Idempotency-Key (computed only when a key is given). */
  fingerprint: () => Buffer;
  rule?: UseCaseRule<L>;
}

/** An append's answer: 201 with the seqs written, or 200 with a replayed batch's. */
export interface AppendResult {
  status: number;
  body: { headSeq: number; events: Array<{ id: string; seq: number }>; compaction?: { pendingMarkerSeq: number } };
}

/** What an append wrote, for AppendCommitted once its transaction commits, and its answer. */
export interface Appended extends AppendWrites {
  result: AppendResult;
}

/** Sessions whose model (fixed for the life of a session row) and settings an append may assume before its lock answers. */
const REMEMBERED_SESSIONS = 50_000;

interface KnownSession {
  model: string;
  configs?: SessionConfigs;
  /** Calls this process saw issued and not yet answered, by id with their names: what a result in one round trip answers. */
  openCalls?: ReadonlyMap<string, string>;
}

/** Open calls remembered per session, the oldest going first beyond it: an agent runs a few at a time, and 50,000 sessions at most hold 800,000 (~80 MB). */
const OPEN_CALLS = 16;

/** The decision on an assumed state, or undefined where that state refuses: the ordinary path then decides on the real one. */
function decideOrUndefined(state: AppendState, command: AppendCommand): AppendDecision | undefined {
  try {
    return decideAppend(state, command);
  } catch (error) {
    if (error instanceof DomainError) return undefined;
    throw error;
  }
}

/** A speculative insert rested on an assumption the lock's answer refuted: the attempt rolls back and runs again without it. */
class SpeculationMissed extends Error {}

/** What the first, optimistic attempt answers when the batch may be a retry of a committed one. */
const ANSWERS_OF_A_RETRY = new Set(['version_conflict', 'duplicate_tool_call_id', 'duplicate_tool_result']);

@Injectable()
export class EventsService {
  /**
   * Each session's model, and settings when read, as its last append's lock
   * read them: what a speculative insert's token estimate and an append in
   * one round trip's tool-output views are built from.
   */
  private readonly sessions = new RecentSessions<KnownSession>(REMEMBERED_SESSIONS);

  constructor(
    private readonly db: Database,
    private readonly reads: ReadDatabase,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly toolOutputs: ToolOutputAppend,
    private readonly tenantLimits: TenantLimitsService,
    private readonly viewBounds: ViewBounds,
    private readonly committed: AppendCommitted,
  ) {}

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
   * Appends a batch: load the state under the session row lock
   * (logWriter.lock), decide (decideAppend: the rules and their order),
   * write (logWriter.write), then the after-write steps the decision
   * names, all in one transaction; after commit, AppendCommitted. Client
   * batches and the service's own (pins, rewind) take this one path.
   *
   * Optimistic about event ids: the first attempt inserts without looking
   * them up (the unique index backs it). Only when it meets a stored id, a
   * head other than expectedSeq or an already issued tool call, as a retry
   * of a committed batch does, a second transaction looks the ids up and
   * the decider answers replay, 422, 409 or 400.
   *
   * Pipelined: a batch without tool results or a use case's rule, of a
   * session whose model this process knows, is written right behind the
   * lock (logWriter.writeAhead); the decision still decides, and a refusal
   * rolls the insert back.
   */
  async appendBatch<L>(tenantId: string, sessionId: string, batch: AppendBatch, request: AppendRequest<L>) {
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
      // An event or call id already stored: a retry of a committed batch (or a reused id), which only the lookup answers.
      if (isDuplicateEventId(error) || isDuplicateToolCallId(error)) return attempt(true, false);
      // A call it answered was no longer open: the ordinary path reads the ledger and answers.
      if (isFailedAppendExpectation(error)) return optimistic(true);
      throw error;
    });
    const committed = oneTrip ?? (await optimistic(true));
    await this.committed.after({
      tenantId,
      sessionId,
      appended: committed.result.status === 201 ? batch.events.length : 0,
      headSeq: committed.headSeq,
      outbox: committed.outbox,
      pruneAfterSeq: committed.pruneAfterSeq,
    });
    return committed.result;
  }

  /**
   * A batch the ordinary path would only insert, written in one round trip:
   * BEGIN, one conditional statement and COMMIT go out together
   * (logWriter.writeIfUnchanged, Database.tenantOneTrip). For a batch with no
   * expectedSeq, Idempotency-Key, rule or quota, of a session whose model
   * (and, for tool results, settings) and view bound this process knows,
   * that certainly stays below the compaction trigger, whose tool results
   * answer calls it issues itself or calls assumed open (named by the result,
   * or seen issued by this process: assumedOpenCalls), and whose outputs were sent in it (ToolOutputAppend.placeSent:
   * kept whole in their events, or stored with their chunks by the same
   * statement). It is decided on the state this process
   * knows (the head of the bound, no stored id, the open calls it saw, not
   * archived); the statement's conditions (the same row at that head with
   * the same settings, not archived, not a fork) stand for the lock's read
   * of it: when they do not hold it writes nothing and the ordinary path
   * runs and answers. An event or call id already stored, or a call answered
   * meanwhile, fails the statement (its COMMIT rolls back) and throws, for
   * the lookup or the ordinary path to answer. Undefined: nothing was written.
   */
  private async appendInOneTrip<L>(tenantId: string, sessionId: string, batch: AppendBatch, hashes: Buffer[], request: AppendRequest<L>, quotas: TenantQuotas) {
    if (request.idempotencyKey !== undefined || request.rule || batch.expectedSeq !== undefined || hasQuota(quotas)) return undefined;
    const { events } = batch;
    const withCalls = referencedCallIds(events).length > 0;
    const known = this.sessions.get(tenantId, sessionId);
    const head = this.viewBounds.get(tenantId, sessionId)?.seq;
    // On Citus the calls and refs go in statements of their own (the ordinary path).
    if (!known || head === undefined || (withCalls && this.config.database.citus)) return undefined;
    const { model, configs, openCalls } = known;
    const knownCalls = assumedOpenCalls(events, (callId) => openCalls?.get(callId));
    if (!knownCalls) return undefined;
    const assumed = { sessionId, headSeq: head, model, archived: false, stored: [], knownCalls };
    const decision = decideOrUndefined(assumed, { events, hashes, quotas: false });
    if (decision?.kind !== 'write') return undefined;
    const placed = decision.rows ? undefined : configs && this.toolOutputs.placeSent(head, events, configs);
    const rows = decision.rows ?? (placed && appendRows(placed.events, events, hashes, model));
    if (!rows || (placed && placed.storedOutputs.reduce((sum, o) => sum + o.chunks.length, 0) > ONE_TRIP_MAX_CHUNKS)) return undefined;
    const bounds = boundsWithoutTrigger(this.viewBounds, tenantId, sessionId, events, rows.reduce((sum, row) => sum + row.tokens, 0));
    if (!bounds || bounds.known.seq !== head) return undefined;
    const alongside = withCalls
      ? { ...ledgerRows(decision.ledger), inlineRefs: placed?.inlineRefs ?? [], storedOutputs: placed?.storedOutputs ?? [] }
      : undefined;
    const expected = { headSeq: head, model, createdAt: bounds.known.createdAt, ...(placed ? { configs } : {}) };
    const headSeq = await this.db.tenantOneTrip(tenantId, (tx) => logWriter.writeIfUnchanged(tx, sessionId, expected, rows, alongside));
    if (headSeq === undefined) return undefined;
    this.viewBounds.set(tenantId, sessionId, bounds.next);
    if (withCalls) this.sessions.set(tenantId, sessionId, { ...known, openCalls: openCallsAfter(openCalls, decision.ledger, OPEN_CALLS) });
    return { result: decision.response, outbox: [] as OutboxRow[], pruneAfterSeq: null, headSeq };
  }

  /** One attempt in its own transaction, Idempotency-Key honoured; all or nothing. */
  private async commitBatch<L>(
    tenantId: string,
    sessionId: string,
    batch: AppendBatch,
    hashes: Buffer[],
    options: AppendRequest<L> & { lookupIds: boolean; speculate: boolean; quotas: TenantQuotas },
  ) {
    let appended: Appended | undefined;
    const result = await this.db.tenantTx(tenantId, (tx) =>
      runIdempotent(tx, options.idempotencyKey, options.fingerprint, this.config.idempotency.ttlHours, async () => {
        appended = await this.appendIn(tx, tenantId, sessionId, { ...batch, hashes }, options);
        return appended.result;
      }),
    );
    // A replayed Idempotency-Key ran nothing.
    return { result, outbox: appended?.outbox ?? [], pruneAfterSeq: appended?.pruneAfterSeq ?? null, headSeq: appended?.headSeq ?? null };
  }

  /**
   * The service's own events (a config change, a manual marker), appended in
   * the caller's transaction with the caller's other writes: built from the
   * locked state (their ids from its head, so never a retry of stored ones),
   * then the same decision, writes and after-write steps as a client batch.
   * `quotas`: the tenant's (TenantLimitsService.policyOf), resolved before
   * the transaction opened, since loading them takes a connection of its
   * own. The caller hands the result to AppendCommitted once it commits.
   */
  async appendOwn<L>(
    tx: Tx,
    tenantId: string,
    sessionId: string,
    build: (state: AppendState) => NewEvent[],
    options: { quotas: TenantQuotas; rule?: UseCaseRule<L>; withConfigs?: boolean },
  ): Promise<Appended> {
    return this.appendIn(tx, tenantId, sessionId, build, { ...options, lookupIds: false, speculate: false });
  }

  /** Lock and read the state, decide, write, the after-write steps, in `tx`. */
  private async appendIn<L>(
    tx: Tx,
    tenantId: string,
    sessionId: string,
    batch: (AppendBatch & { hashes: Buffer[] }) | ((state: AppendState) => NewEvent[]),
    options: { rule?: UseCaseRule<L>; withConfigs?: boolean; lookupIds: boolean; speculate: boolean; quotas: TenantQuotas },
  ): Promise<Appended> {
    const sent = typeof batch === 'function' ? undefined : batch;
    const withToolResults = sent !== undefined && hasToolResults(sent.events);
    // Even the optimistic attempt looks ids up among a fork's inherited events: no unique index spans them.
    // A batch with tool results needs the session's settings (the tool-output view): read with the lock, not after it.
    const locking = logWriter.lock(tx, sessionId, {
      eventIds: sent?.events.map((e) => e.id) ?? [],
      lookup: options.lookupIds ? 'log' : 'inherited',
      callIds: sent ? referencedCallIds(sent.events) : [],
      withConfigs: withToolResults || options.withConfigs === true,
    });
    // A batch whose rows do not depend on the lock's answer goes out right behind the lock: one round trip
    // less. The decision still runs before COMMIT, and a refusal rolls it back.
    const model = sent && options.speculate && !withToolResults && !options.rule ? this.sessions.get(tenantId, sessionId)?.model : undefined;
    const speculated = model === undefined ? undefined : { model, rows: appendRows(sent!.events, sent!.events, sent!.hashes, model) };
    const written = speculated && logWriter.writeAhead(tx, sessionId, speculated.rows);
    // Settled on every path: a refusal below leaves it unawaited.
    void written?.catch(() => undefined);
    const locked = await locking;
    if (!locked) throw sessionNotFound(sessionId);
    const { state, configs } = locked;
    const known = this.sessions.get(tenantId, sessionId);
    const knownConfigs = configs ?? known?.configs;
    this.sessions.set(tenantId, sessionId, { ...known, model: state.model, ...(knownConfigs ? { configs: knownConfigs } : {}) });
    // Written on the wrong assumptions (another session under this id, an event id a fork inherited): roll back, go again.
    if (speculated && (state.model !== model || state.stored.length > 0)) throw new SpeculationMissed();
    const events = sent?.events ?? (batch as (state: AppendState) => NewEvent[])(state);
    const hashes = sent?.hashes ?? events.map(payloadHash);
    const { rule } = options;
    const read = rule && (await rule.read(tx, configs));
    const decision = decideAppend(state, {
      events,
      hashes,
      expectedSeq: sent?.expectedSeq,
      check: rule && (() => rule.check(read as L)),
      quotas: hasQuota(options.quotas),
      prebuilt: speculated,
    });
    if (decision.kind === 'replay') return { result: decision.response, outbox: [], pruneAfterSeq: null, headSeq: null, appended: 0 };
    await rule?.write?.(tx, read as L);
    // Tool outputs go to the store; events keep their in-context views (hashes stay those of the client's events).
    const prepared = decision.rows ? undefined : await this.toolOutputs.prepareAppend(tx, sessionId, state.headSeq, events, configs);
    const rows = decision.rows ?? appendRows(prepared!.events, events, hashes, state.model);
    const headSeq = await logWriter.write(tx, sessionId, { ...decision, rows }, { written, alongside: prepared?.writes });
    const { ledger } = decision;
    if (ledger.issued.length + ledger.answered.length > 0) {
      const known = this.sessions.get(tenantId, sessionId) ?? { model: state.model };
      this.sessions.set(tenantId, sessionId, { ...known, openCalls: openCallsAfter(known.openCalls, ledger, OPEN_CALLS) });
    }
    const batchWritten = { firstSeq: decision.firstSeq, events, tokens: rows.reduce((sum, row) => sum + row.tokens, 0) };
    const { afterWrite } = decision;
    const trigger = afterWrite.compactionTrigger ? await triggerAfterAppend(tx, tenantId, sessionId, batchWritten, this.viewBounds, afterWrite.pruneScheduling) : null;
    const compaction = trigger?.pendingMarkerSeq ? { compaction: { pendingMarkerSeq: trigger.pendingMarkerSeq } } : {};
    // After every write of the batch (events, inline tool outputs, a marker): over a quota, all of it rolls back.
    if (afterWrite.quotaCheck) await this.tenantLimits.assertWithinQuotas(tx, options.quotas);
    const head = trigger?.headSeq ?? headSeq;
    return {
      result: { status: 201, body: { ...decision.response.body, headSeq: head, ...compaction } },
      outbox: trigger?.outbox ?? [],
      pruneAfterSeq: trigger?.pruneScheduled ? trigger.headSeq : null,
      headSeq: head,
      appended: events.length,
    };
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
