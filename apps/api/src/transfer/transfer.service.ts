import { Inject, Injectable, Logger } from '@nestjs/common';
import { once } from 'node:events';
import type { Response } from 'express';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database, Tx } from '@app/database';
import { CLIENT_EVENT_TYPES, composeSessionView, decideWrite, DomainError, estimateMessageTokens, EventType, invalid, NewEvent, payloadHash, referencedCallIds, sessionSettings } from '@app/domain';
import {
  atLine,
  chunkLine,
  DeclaredOutput,
  eventLine,
  eventOutputRefs,
  EXPORT_CHUNK_BYTES,
  IMPORT_CHUNK_MAX_BYTES,
  ImportReader,
  LineSplitter,
  outputLine,
  parseJsonLine,
  renameEventRefs,
  sessionLine,
  TransferEvent,
} from '@app/domain/transfer';
import { countUsageApart, findSession, finishImportedSession, insertSession, logWriter, readEvents, readTenantConfig, readWindow, unanswerToolCallsAfter } from '@app/event-store';
import { attachRefs, claimRef, ContentTotals, deleteUnreferencedContents, findRef, newRefId } from '@app/tool-output-store';
import { AppendCommitted } from '@app/use-cases';
import { hasQuota, TenantLimitsService } from '../limits/tenant-limits';
import { requestLogFields } from '../http/request-logging';
import { sessionNotFound, sessionState } from '../sessions/session-state';
import { ToolOutputReads } from '../tool-outputs/tool-output-reads.service';
import { ToolOutputUploads } from '../tool-outputs/tool-output-uploads.service';

/** Events read per page by an export. */
const EXPORT_PAGE = 200;
/** Events decided and written per chunk by an import (with one lock read, one INSERT and one ledger write each). */
const IMPORT_BATCH = 200;

/** Parsed lines of an import body, one at a time, with the number of the last one read. */
class ImportLines {
  lastLine = 0;
  private readonly lines: AsyncGenerator<{ line: number; value: unknown }>;

  constructor(body: AsyncIterable<Buffer>, maxLineBytes: number, maxDepth: number) {
    this.lines = (async function* () {
      const splitter = new LineSplitter(maxLineBytes);
      for await (const piece of body) for (const l of splitter.push(piece)) yield { line: l.line, value: parseJsonLine(l.bytes, l.line, maxDepth) };
      for (const l of splitter.end()) yield { line: l.line, value: parseJsonLine(l.bytes, l.line, maxDepth) };
    })();
  }

  async next(): Promise<{ line: number; value: unknown } | undefined> {
    const next = await this.lines.next();
    if (next.done) return undefined;
    this.lastLine = next.value.line;
    return next.value;
  }
}

/** Runs a check of line `line`, naming the line in what it throws. */
function at<T>(line: number, check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw atLine(line, error);
  }
}

interface PendingEvent {
  line: number;
  event: TransferEvent;
}

/**
 * Session export and import as JSON Lines (the format is in
 * libs/domain/src/transfer). Both stream: an export reads events a page per
 * short transaction and outputs a chunk batch per short transaction, writing
 * with backpressure; an import parses the body line by line, stages each tool
 * output like an upload, and writes the session, its events, tool-call ledger
 * and refs in one transaction that commits after the last line.
 */
@Injectable()
export class TransferService {
  private readonly logger = new Logger(TransferService.name);

  constructor(
    private readonly db: Database,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly outputReads: ToolOutputReads,
    private readonly outputUploads: ToolOutputUploads,
    private readonly tenantLimits: TenantLimitsService,
    private readonly committed: AppendCommitted,
  ) {}

  /**
   * Streams the session up to its head at the start. A 404 is answered
   * before anything is written; a failure after that cuts the response (an
   * import of a cut export fails: events are missing).
   */
  async export(tenantId: string, sessionId: string, res: Response): Promise<void> {
    const session = await this.db.tenantTx(tenantId, (tx) => findSession(tx, sessionId));
    if (!session) throw sessionNotFound(sessionId);
    res.status(200);
    res.setHeader('content-type', 'application/x-ndjson; charset=utf-8');
    res.setHeader('content-disposition', `attachment; filename="${sessionId}.jsonl"`);
    // False once the client is gone: nothing more to write.
    const write = async (text: string): Promise<boolean> => {
      if (res.destroyed) return false;
      if (!res.write(text)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      return !res.destroyed;
    };
    try {
      const { sessionId: id, model, system, config, metadata, headSeq } = session;
      await write(sessionLine({ id, model, system, config, metadata, headSeq, createdAt: session.createdAt.toISOString() }));
      const exported = new Set<string>();
      for (let after = 0; after < headSeq; ) {
        const events = await this.db.tenantTx(tenantId, (tx) => readEvents(tx, sessionId, after, Math.min(EXPORT_PAGE, headSeq - after)));
        if (events.length === 0) throw new Error(`session ${sessionId}: the log ends at seq ${after}, before its head ${headSeq} (deleted meanwhile?)`);
        for (const event of events) {
          for (const ref of eventOutputRefs(event)) {
            if (exported.has(ref.id)) continue;
            exported.add(ref.id);
            if (!(await this.exportOutput(tenantId, ref.id, write))) return;
          }
          const { seq, id: eventId, type, data } = event;
          if (!(await write(eventLine({ seq, id: eventId, type, data: data as Record<string, unknown>, createdAt: event.createdAt.toISOString() })))) return;
          after = seq;
        }
      }
      res.end();
    } catch (error) {
      this.logger.warn({ ...requestLogFields(res.req), msg: `export of session ${sessionId} cut: ${(error as Error).message}` });
      res.destroy();
    }
  }

  private async exportOutput(tenantId: string, refId: string, write: (text: string) => Promise<boolean>): Promise<boolean> {
    const ref = await this.db.tenantTx(tenantId, (tx) => findRef(tx, refId));
    if (!ref) throw new Error(`tool output ${refId} is cited but not stored`);
    // An inline output goes out with the event that holds it.
    if (ref.contentId === null) return true;
    if (!(await write(outputLine({ ref: refId, byteSize: ref.byteSize, lineCount: ref.lineCount, sha256: ref.sha256.toString('hex') })))) return false;
    let offset = 0;
    for await (const batch of this.outputReads.chunkBatches(tenantId, { ref, contentId: ref.contentId })) {
      for (let at = 0; at < batch.length; at += EXPORT_CHUNK_BYTES) {
        const piece = batch.subarray(at, at + EXPORT_CHUNK_BYTES);
        if (!(await write(chunkLine(refId, offset, piece.toString('base64'))))) return false;
        offset += piece.length;
      }
    }
    if (offset !== ref.byteSize) throw new Error(`tool output ${refId} ended after ${offset} of ${ref.byteSize} bytes (deleted meanwhile?)`);
    return true;
  }

  /**
   * Imports an export into a new session `targetId` (else the exported id).
   * The session row is inserted first, in the transaction that ends after
   * the last line, so a taken id is a 409 before the body is read and no
   * reader sees a partial session. Tool outputs are staged and finished in
   * short transactions as they stream in (deduplicated like uploads); a ref
   * id the tenant already uses is renamed, everywhere the log cites it.
   * Events keep their seqs, ids and times; they are written in chunks
   * through the append's decider (mode `import`) and store port, which
   * rebuild the tool-call ledger and the head by the append's own rules;
   * the refs' first uses and the pivot are rebuilt from them too. Any bad
   * line rolls everything back (400 naming the line); contents stored for
   * it that nothing references are deleted. After commit, AppendCommitted.
   */
  async import(tenantId: string, body: AsyncIterable<Buffer>, targetId?: string) {
    // A chunk line holds IMPORT_CHUNK_MAX_BYTES as base64; an event line, what an append body may.
    const maxLineBytes = Math.max(this.config.http.maxBodyBytes, Math.ceil(IMPORT_CHUNK_MAX_BYTES / 3) * 4 + 1024);
    const lines = new ImportLines(body, maxLineBytes, this.config.http.maxJsonDepth);
    const reader = new ImportReader();
    const first = await lines.next();
    if (!first) throw invalid('empty_import', 'The body holds no line; the first line is the session header');
    const header = at(first.line, () => reader.header(first.value));
    const sessionId = targetId ?? header.id;
    const { quotas } = await this.tenantLimits.policyOf(tenantId);
    const stored: number[] = [];
    try {
      const imported = await this.db.tenantTx(tenantId, async (tx) => {
        await countUsageApart(tx);
        // Refuses a config or model this tenant cannot run (400, 422), as session creation does.
        const tenantConfig = (await readTenantConfig(tx)) ?? {};
        at(first.line, () => sessionSettings({ model: header.model, config: header.config, tenantConfig }));
        const systemTokens = header.system ? estimateMessageTokens({ id: 'system', role: 'system', parts: [{ type: 'text', text: header.system }] }, header.model) : 0;
        const inserted = await insertSession(tx, tenantId, { ...header, sessionId, systemTokens });
        if (!inserted) throw new DomainError('conflict', 'session_exists', `Session ${sessionId} already exists`);

        const refs = new Map<string, { contentId: number; attachedSeq: number | null }>();
        const renamed = new Map<string, string>();
        const serviceEvents: Array<{ seq: number; line: number }> = [];
        let batch: PendingEvent[] = [];
        // Whether a decision asked for the quota check: once, after the last chunk, it covers them all.
        let quotaCheck = false;
        const writeBatch = async () => {
          quotaCheck = (await this.writeEvents(tx, sessionId, batch, hasQuota(quotas))) || quotaCheck;
          batch = [];
        };
        for (let next = await lines.next(); next; next = await lines.next()) {
          const { line, value } = next;
          const step = at(line, () => reader.next(value));
          if (step.kind === 'output') {
            const contentId = await this.outputUploads.storeContent(tenantId, this.outputBytes(lines, reader, step.output), (totals) =>
              at(line, () => checkTotals(step.output, totals)),
            );
            stored.push(contentId);
            // The ref now, not at the end: it keeps the content from a concurrent delete, and a
            // ref id the tenant holds (even in another import still running) is renamed.
            await this.claimRef(tx, sessionId, step.output.ref, { contentId }, renamed);
            refs.set(step.output.ref, { contentId, attachedSeq: null });
          } else if (step.kind === 'event') {
            if (!CLIENT_EVENT_TYPES.includes(step.event.type as EventType)) serviceEvents.push({ seq: step.event.seq, line });
            // An output the event holds inline: its ref names the event.
            for (const refId of step.inlineRefs) await this.claimRef(tx, sessionId, refId, { contentId: null, inlineSeq: step.event.seq }, renamed);
            for (const ref of eventOutputRefs(step.event as NewEvent)) {
              const stored = refs.get(ref.id);
              if (stored) stored.attachedSeq ??= step.event.seq;
            }
            batch.push({ line, event: renameEventRefs(step.event, renamed, reader.inline) });
            if (batch.length >= IMPORT_BATCH) await writeBatch();
          }
          // A chunk line outside an output was refused by the reader; inside one, outputBytes consumed it.
        }
        await writeBatch();
        at(lines.lastLine, () => reader.finish());
        await attachRefs(
          tx,
          sessionId,
          [...refs].flatMap(([ref, r]) => (r.attachedSeq === null ? [] : [{ refId: renamed.get(ref) ?? ref, seq: r.attachedSeq }])),
        );
        await finishImportedSession(tx, sessionId, { pivot: reader.pivot, createdAt: header.createdAt });
        await this.assertComposes(tx, sessionId, [{ seq: undefined, line: lines.lastLine }, ...serviceEvents]);
        if (quotaCheck) await this.tenantLimits.assertWithinQuotas(tx, quotas);
        return {
          session: sessionState((await findSession(tx, sessionId))!),
          events: header.headSeq,
          toolOutputs: refs.size + reader.inline.size,
          renamedRefs: Object.fromEntries(renamed),
        };
      });
      await this.committed.after({ tenantId, sessionId, appended: header.headSeq, headSeq: header.headSeq, outbox: [], pruneAfterSeq: null });
      return imported;
    } catch (error) {
      // Contents shared with other sessions keep their refs; only what this import alone stored goes.
      if (stored.length > 0) await this.db.tenantTx(tenantId, (tx) => deleteUnreferencedContents(tx, stored)).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Gives the imported session ref `refId` (held as `claimRef` says), under
   * a new id when the tenant already has that one (even in another import
   * still running), which `renamed` records for the events citing it.
   */
  private async claimRef(tx: Tx, sessionId: string, refId: string, held: Parameters<typeof claimRef>[3], renamed: Map<string, string>): Promise<void> {
    let claimed = refId;
    while (!(await claimRef(tx, sessionId, claimed, held))) claimed = newRefId();
    if (claimed !== refId) renamed.set(refId, claimed);
  }

  /** The bytes of the output just declared, from its chunk lines; ends when its declared size is reached. */
  private async *outputBytes(lines: ImportLines, reader: ImportReader, output: DeclaredOutput): AsyncGenerator<Buffer> {
    if (output.byteSize === 0) return;
    for (;;) {
      const next = await lines.next();
      if (!next) return at(lines.lastLine, () => reader.finish());
      const step = at(next.line, () => reader.next(next.value));
      if (step.kind !== 'chunk') throw new Error('the reader yields only chunks while an output is open');
      yield Buffer.from(step.base64, 'base64');
      if (step.last) return;
    }
  }

  /**
   * Writes a chunk of events under the session lock (logWriter.lock), as the
   * decider decides them in mode `import` (ids new to the session, seqs from
   * its head, the tool-call ledger, rows as exported), through the store
   * port (logWriter.writeImported). A refusal names the line of the event
   * it names. Returns whether the decision asks for the quota check.
   */
  private async writeEvents(tx: Tx, sessionId: string, batch: readonly PendingEvent[], quotas: boolean): Promise<boolean> {
    if (batch.length === 0) return false;
    // A rewind changes the ledger (its calls answered after toSeq are open again) before the events after it are checked.
    const rewindAt = batch.findIndex(({ event }) => event.type === 'session.rewound');
    if (rewindAt !== -1 && rewindAt < batch.length - 1) {
      const before = await this.writeEvents(tx, sessionId, batch.slice(0, rewindAt + 1), quotas);
      return (await this.writeEvents(tx, sessionId, batch.slice(rewindAt + 1), quotas)) || before;
    }
    const events = batch.map((b) => ({ id: b.event.id, type: b.event.type, data: b.event.data }) as NewEvent);
    // The session row is this transaction's own: the lock is granted at once, its reads are the decider's state.
    const locked = await logWriter.lock(tx, sessionId, { eventIds: events.map((e) => e.id), lookup: 'log', callIds: referencedCallIds(events), withConfigs: false });
    let decision: ReturnType<typeof decideWrite>;
    try {
      decision = decideWrite(locked!.state, { mode: 'import', events, hashes: events.map(payloadHash), seqs: batch.map((b) => b.event.seq), quotas });
    } catch (error) {
      const index = /^\$\.events\[(\d+)\]/.exec(String((error as DomainError).details?.path ?? ''));
      throw index ? atLine(batch[Number(index[1])].line, error) : error;
    }
    await logWriter.writeImported(tx, sessionId, decision, batch.map((b) => b.event.createdAt));
    const last = batch[batch.length - 1].event;
    if (last.type === 'session.rewound') await unanswerToolCallsAfter(tx, sessionId, (last.data as { toSeq: number }).toSeq);
    return decision.afterWrite.quotaCheck;
  }

  /**
   * The imported log must fold into a view, as every context read will:
   * service events are checked by the code that reads them. At the head, and
   * at each service event's seq (a view there still folds it in: a later
   * pivot would hide a malformed one from the head's view, not from `atSeq`).
   */
  private async assertComposes(tx: Tx, sessionId: string, points: ReadonlyArray<{ seq: number | undefined; line: number }>): Promise<void> {
    for (const { seq: atSeq, line } of points) {
      const read = (await readWindow(tx, sessionId, atSeq))!;
      try {
        composeSessionView(read.session, read);
      } catch (error) {
        if (error instanceof DomainError) throw atLine(line, error);
        const where = atSeq === undefined ? '' : ` at seq ${atSeq}`;
        throw atLine(line, invalid('invalid_log', `The imported events do not fold into a model view${where}: ${(error as Error).message}`));
      }
    }
  }
}

function checkTotals(output: DeclaredOutput, totals: ContentTotals): void {
  if (totals.sha256.toString('hex') !== output.sha256 || totals.lineCount !== output.lineCount || totals.byteSize !== output.byteSize) {
    throw invalid('output_mismatch', `tool output ${output.ref}: its bytes do not match the declared sha256, size or line count`, { ref: output.ref });
  }
}
