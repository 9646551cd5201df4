import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Response } from 'express';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database, sqlState, Tx } from '@app/database';
import { DomainError, ID_PATTERN, invalid, NewEvent, sessionSettings, ToolResultPart } from '@app/domain';
import {
  buildInContextView,
  buildInContextViewFromParts,
  ChunkSplitter,
  chunksNeedingBytes,
  compileGrepPattern,
  decodeOutputParts,
  DEFAULT_CHUNK_BYTES,
  DEFAULT_MAX_LINE_LENGTH,
  DEFAULT_RESULT_MAX_BYTES,
  formatGrepResultText,
  formatReadResultText,
  GrepResult,
  InContextView,
  LineRangeCollector,
  OutputChunk,
  parseToolOutputCall,
  shownRangeLines,
  ToolOutputViewConfig,
  viewConfigOfSettings,
  viewWindowBytes,
  ViewPartsCollector,
} from '@app/domain/tool-output';
import { findSession, readSessionConfigs, SessionConfigs } from '@app/event-store';
import { PRODUCER_REDIS, RedisClient } from '@app/queue';
import {
  attachRefs,
  createStagedContent,
  discardStagedContent,
  finishStagedContent,
  findRef,
  GrepPool,
  GrepThreadStuck,
  insertChunks,
  insertRefs,
  newRefId,
  readChunkData,
  readChunksFrom,
  readEndChunks,
  readRangeChunkMetas,
  refView,
  ContentTotals,
  StoredChunk,
  StoredRef,
  touchStagedContent,
  upsertContents,
} from '@app/tool-output-store';
import { TenantRateLimiter } from '../auth/tenant-rate-limiter';
import { sessionNotFound } from '../sessions/session-view';
import { UploadSlots } from './upload-slots';

export const refNotFound = (refId: string) =>
  new DomainError('not_found', 'output_ref_not_found', `Tool output ${JSON.stringify(refId.slice(0, 200))} does not exist`);
const tooLarge = (maxBytes: number) =>
  new DomainError('too_large', 'tool_output_too_large', `The tool output exceeds ${maxBytes} bytes`, { maxBytes });
/** Its staging rows were collected as abandoned: the request could not touch them for UPLOAD_STAGING_TTL_S (a long database outage). */
const uploadInterrupted = () =>
  new DomainError('unavailable', 'upload_interrupted', 'The upload was interrupted and nothing was stored; upload it again', { retryAfter: 1 });

/** Chunks written per INSERT while an upload streams in, and read per query by grep and raw. */
const CHUNKS_PER_BATCH = 32;
const UPLOAD_BATCH_BYTES = CHUNKS_PER_BATCH * DEFAULT_CHUNK_BYTES;
/** A line read over HTTP returns at most this much numbered text (nextOffset continues). */
export const HTTP_READ_MAX_BYTES = 256 * 1024;

export interface LinePage {
  ref: StoredRef;
  offset: number;
  /** Lines from `offset`, cut at the maximum line length. */
  lines: string[];
  totalLines: number;
}

export interface GrepQuery {
  pattern: string;
  ignoreCase: boolean;
  context: number;
  limit: number;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest();

/** Bytes `[from, to)` of the output, from chunks that cover them. */
function bytesBetween(chunks: readonly StoredChunk[], from: number, to: number): Buffer {
  const parts = chunks
    .filter((c) => c.byteOffset < to && c.byteOffset + c.byteLength > from)
    .map((c) => c.data.subarray(Math.max(0, from - c.byteOffset), Math.min(c.byteLength, to - c.byteOffset)));
  return Buffer.concat(parts);
}

interface ResultAt {
  event: number;
  part: number;
  result: ToolResultPart;
}

/**
 * The tool-output cache: storing outputs at append and upload, the in-context
 * views, line reads, grep (in worker threads), raw streaming, and the
 * model-callable tools.
 */
@Injectable()
export class ToolOutputsService implements OnApplicationShutdown {
  private readonly uploadSlots: UploadSlots;

  constructor(
    private readonly db: Database,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly grepPool: GrepPool,
    @Inject(PRODUCER_REDIS) redis: RedisClient,
    private readonly tenantLimits: TenantRateLimiter,
  ) {
    this.uploadSlots = new UploadSlots(redis, config.redis.prefix, config.toolOutput.uploadsPerTenant);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.grepPool.close();
  }

  /**
   * Runs inside the append transaction, after the session lock and the
   * tool-call ledger: stores every inline tool output and attaches every
   * uploaded ref, and returns the events as they are written, each result
   * holding its in-context view, `outputRef` and `truncated`. A batch without
   * tool results costs no query. Refs that are unknown, or belong to another
   * session or tenant, are a 400 `unknown_output_ref` (the transaction then
   * writes nothing). `configs` are the session's settings, read with the
   * session lock when the batch carries tool results.
   */
  async prepareAppend(
    tx: Tx,
    sessionId: string,
    headSeq: number,
    events: readonly NewEvent[],
    configs: SessionConfigs | undefined,
  ): Promise<{ events: NewEvent[]; writes: Array<Promise<unknown>> }> {
    const results: ResultAt[] = [];
    events.forEach((event, eventIndex) => {
      if (event.type !== 'message.added') return;
      event.data.message.parts.forEach((part, partIndex) => {
        if (part.type === 'tool_result') results.push({ event: eventIndex, part: partIndex, result: part });
      });
    });
    if (results.length === 0) return { events: [...events], writes: [] };

    if (!configs) throw new Error('prepareAppend: a batch with tool results needs the session settings (lockSessionForAppend withConfigs)');
    const { toolOutput } = sessionSettings(configs).config;
    const viewConfig = viewConfigOfSettings(toolOutput);
    const seqOf = (eventIndex: number) => headSeq + eventIndex + 1;
    const replaced = new Map<ResultAt, ToolResultPart>();
    const writes: Array<Promise<unknown>> = [];

    const byRef = results.filter((r) => r.result.outputRef !== undefined);
    if (byRef.length > 0) {
      const found = new Map(
        (await attachRefs(tx, sessionId, byRef.map((r) => ({ refId: r.result.outputRef!.id, seq: seqOf(r.event) })))).map((ref) => [ref.refId, ref]),
      );
      const missing = byRef.find((r) => !found.has(r.result.outputRef!.id));
      if (missing) {
        throw invalid('unknown_output_ref', `outputRef ${missing.result.outputRef!.id} is not an output uploaded to this session`, {
          path: `$.events[${missing.event}].data.message.parts[${missing.part}].outputRef.id`,
        });
      }
      const views = new Map<string, InContextView>();
      for (const ref of found.values()) views.set(ref.refId, await this.storedView(tx, ref, viewConfig));
      for (const r of byRef) {
        const ref = found.get(r.result.outputRef!.id)!;
        const view = views.get(ref.refId)!;
        replaced.set(r, { ...r.result, output: view.view, outputRef: refView(ref), truncated: view.truncated });
      }
    }

    // A disabled cache keeps inline outputs whole in the event, as the client sent them.
    const inline = toolOutput.enabled ? results.filter((r) => r.result.outputRef === undefined) : [];
    if (inline.length > 0) {
      const stored = inline.map((r) => {
        const bytes = Buffer.from(r.result.output, 'utf8');
        const splitter = new ChunkSplitter();
        const chunks = [...splitter.push(bytes), ...splitter.end()];
        return { r, chunks, refId: newRefId(), totals: { sha256: sha256(bytes), byteSize: bytes.length, lineCount: splitter.totals.lineCount, chunkCount: chunks.length } };
      });
      const distinct = new Map(stored.map((s) => [s.totals.sha256.toString('hex'), s]));
      const contents = await upsertContents(tx, [...distinct.values()].map((s) => s.totals));
      const inserts = [...distinct].filter(([hex]) => contents.get(hex)!.inserted).map(([hex, s]) => insertChunks(tx, contents.get(hex)!.contentId, s.chunks));
      inserts.push(
        insertRefs(
          tx,
          sessionId,
          stored.map((s) => ({ refId: s.refId, contentId: contents.get(s.totals.sha256.toString('hex'))!.contentId, attachedSeq: seqOf(s.r.event) })),
        ),
      );
      writes.push(...inserts);
      for (const s of stored) {
        const view = buildInContextView(s.r.result.output, s.refId, viewConfig);
        replaced.set(s.r, { ...s.r.result, output: view.view, outputRef: refView({ refId: s.refId, ...s.totals }), truncated: view.truncated });
      }
    }

    // Settled on every path: the caller may throw before awaiting them.
    for (const write of writes) write.catch(() => undefined);
    const byPosition = new Map([...replaced].map(([at, part]) => [`${at.event}/${at.part}`, part]));
    const written = events.map((event, eventIndex) => {
      if (event.type !== 'message.added' || !event.data.message.parts.some((_, i) => byPosition.has(`${eventIndex}/${i}`))) return event;
      const parts = event.data.message.parts.map((part, i) => byPosition.get(`${eventIndex}/${i}`) ?? part);
      return { ...event, data: { ...event.data, message: { ...event.data.message, parts } } };
    });
    return { events: written, writes };
  }

  /** The view of a stored output from its first and last chunks only. */
  private async storedView(tx: Tx, ref: StoredRef, viewConfig: ToolOutputViewConfig): Promise<InContextView> {
    const windows = viewWindowBytes(viewConfig);
    const whole = ref.byteSize <= windows.head + windows.tail;
    const headEnd = whole ? ref.byteSize : windows.head;
    const tailStart = whole ? ref.byteSize : ref.byteSize - windows.tail;
    const chunks = await readEndChunks(tx, ref.contentId, headEnd, tailStart, DEFAULT_CHUNK_BYTES);
    const parts = decodeOutputParts({
      head: bytesBetween(chunks, 0, headEnd),
      tail: whole ? null : bytesBetween(chunks, tailStart, ref.byteSize),
      totalBytes: ref.byteSize,
      totalLines: ref.lineCount,
    });
    return buildInContextViewFromParts(parts, ref.refId, viewConfig);
  }

  /**
   * Streams an upload into the store holding nothing while the client is
   * slow: a staging content is committed first, each batch of chunks is
   * written in its own short transaction (one in flight while the next batch
   * is read), and a last transaction finishes the content (or swaps it for an
   * identical stored one), inserts the ref and checks the tenant's storage
   * quota (413 `quota_exceeded`, nothing kept). Between batches the upload
   * holds no connection and no transaction, only a slot of its tenant's
   * upload cap and two batches of memory (one being written). Readers reach
   * contents through refs only, so a staging content is never visible. On
   * any error the staging rows are deleted; if the process dies instead, the
   * request stops touching them and the GC collects them after
   * UPLOAD_STAGING_TTL_S.
   */
  async upload(tenantId: string, sessionId: string, body: AsyncIterable<Buffer>, declaredBytes?: number) {
    const maxBytes = this.config.toolOutput.maxUploadBytes;
    if (declaredBytes !== undefined && declaredBytes > maxBytes) throw tooLarge(maxBytes);
    const { quotas } = await this.tenantLimits.policyOf(tenantId);
    const releaseSlot = await this.uploadSlots.acquire(tenantId);
    try {
      const { viewConfig, stagedId } = await this.db.tenantTx(tenantId, async (tx) => {
        const facts = await readSessionConfigs(tx, sessionId);
        if (!facts) throw sessionNotFound(sessionId);
        return { viewConfig: viewConfigOfSettings(sessionSettings(facts).config.toolOutput), stagedId: await createStagedContent(tx) };
      });
      return await this.withStaged(tenantId, stagedId, async () => {
        const { totals, parts } = await this.receive(tenantId, stagedId, body, viewConfig);
        const refId = newRefId();
        await this.db.tenantTx(tenantId, async (tx) => {
          const contentId = await finishStagedContent(tx, stagedId, totals);
          if (contentId === undefined) throw uploadInterrupted();
          await insertRefs(tx, sessionId, [{ refId, contentId, attachedSeq: null }]);
          await this.tenantLimits.assertWithinQuotas(tx, quotas);
        });
        const view = buildInContextViewFromParts(parts!, refId, viewConfig);
        return { ref: refView({ refId, ...totals }), view: view.view, truncated: view.truncated };
      }).catch((error: unknown) => {
        // The ref's session was deleted meanwhile (a chunk's staging row collected is mapped by withStaged).
        throw sqlState(error) === '23503' && (error as { table?: string }).table === 'tool_output_refs' ? sessionNotFound(sessionId) : error;
      });
    } finally {
      await releaseSlot();
    }
  }

  /**
   * Stores a body as a content of the tenant with no ref, staged and
   * finished as an upload is: the session import inserts the refs in its
   * own transaction. `verify` sees the totals before the content is
   * finished; whatever it or the body throws, nothing stays. Returns the
   * content's id (an identical stored content's, deduplicated).
   */
  async storeContent(tenantId: string, body: AsyncIterable<Buffer>, verify: (totals: ContentTotals) => void): Promise<number> {
    const stagedId = await this.db.tenantTx(tenantId, (tx) => createStagedContent(tx));
    return this.withStaged(tenantId, stagedId, async () => {
      const { totals } = await this.receive(tenantId, stagedId, body);
      verify(totals);
      const contentId = await this.db.tenantTx(tenantId, (tx) => finishStagedContent(tx, stagedId, totals));
      if (contentId === undefined) throw uploadInterrupted();
      return contentId;
    });
  }

  /** Runs `work` on a staging content: touched while it runs, deleted when it throws. */
  private async withStaged<T>(tenantId: string, stagedId: number, work: () => Promise<T>): Promise<T> {
    const stopTouching = this.keepStaged(tenantId, stagedId);
    try {
      return await work();
    } catch (error) {
      // Best effort: when the database cannot take it now, the GC collects the staging rows later.
      await this.db.tenantTx(tenantId, (tx) => discardStagedContent(tx, stagedId)).catch(() => undefined);
      // A chunk's staging row was collected (23503 on the chunks); the caller maps its own tables.
      if (sqlState(error) === '23503' && (error as { table?: string }).table !== 'tool_output_refs') throw uploadInterrupted();
      throw error;
    } finally {
      stopTouching();
    }
  }

  /** Touches the staging row while the upload runs, so the GC never takes a live upload for an abandoned one. */
  private keepStaged(tenantId: string, stagedId: number): () => void {
    let touching = false;
    const timer = setInterval(() => {
      if (touching) return;
      touching = true;
      void this.db
        .tenantTx(tenantId, (tx) => touchStagedContent(tx, stagedId))
        .catch(() => undefined)
        .finally(() => (touching = false));
    }, (this.config.toolOutput.uploadStagingTtlSeconds * 1000) / 3).unref();
    return () => clearInterval(timer);
  }

  /**
   * Reads the body into the staging content: the sha256, totals and view
   * ends are computed on the way, and nothing is kept beyond a batch.
   */
  private async receive(tenantId: string, stagedId: number, body: AsyncIterable<Buffer>, viewConfig?: ToolOutputViewConfig) {
    const maxBytes = this.config.toolOutput.maxUploadBytes;
    const splitter = new ChunkSplitter();
    // The view's ends, when the caller makes a view.
    const ends = viewConfig && new ViewPartsCollector(viewConfig);
    const hash = createHash('sha256');
    let byteSize = 0;
    let chunkCount = 0;
    let batch: OutputChunk[] = [];
    let batchBytes = 0;
    let writing: Promise<void> = Promise.resolve();
    const flush = async () => {
      await writing;
      const rows = batch;
      batch = [];
      batchBytes = 0;
      if (rows.length === 0) return;
      writing = this.db.tenantTx(tenantId, (tx) => insertChunks(tx, stagedId, rows));
      // Awaited by the next flush; until then a failure must not count as unhandled.
      writing.catch(() => undefined);
    };
    const add = (chunks: OutputChunk[]) => {
      for (const chunk of chunks) batch.push(chunk);
      chunkCount += chunks.length;
      batchBytes += chunks.reduce((sum, c) => sum + c.byteLength, 0);
    };
    try {
      for await (const piece of body) {
        byteSize += piece.length;
        if (byteSize > maxBytes) throw tooLarge(maxBytes);
        hash.update(piece);
        ends?.push(piece);
        add(splitter.push(piece));
        if (batchBytes >= UPLOAD_BATCH_BYTES) await flush();
      }
      add(splitter.end());
      await flush();
      await writing;
    } catch (error) {
      // The staging rows are discarded next: no write of this upload may still be in flight then.
      await writing.catch(() => undefined);
      throw error;
    }
    return { totals: { sha256: hash.digest(), byteSize, lineCount: splitter.totals.lineCount, chunkCount }, parts: ends?.finish() };
  }

  private async refOr404(tx: Tx, refId: string, sessionId?: string): Promise<StoredRef> {
    // Ids are created matching ID_PATTERN; anything else (a NUL, 10 KB) never reaches SQL.
    const ref = ID_PATTERN.test(refId) ? await findRef(tx, refId, sessionId) : undefined;
    if (!ref) throw refNotFound(refId);
    return ref;
  }

  /**
   * Lines `offset ..` (1-based), at most `limit` and about `maxBytes` of
   * numbered text; only the chunks holding them are read, and of a very long
   * line only its start and end.
   */
  async readLines(tenantId: string, refId: string, offset: number, limit: number, maxBytes: number, sessionId?: string): Promise<LinePage> {
    return this.db.tenantTx(tenantId, async (tx) => {
      if (sessionId !== undefined && !(await findSession(tx, sessionId))) throw sessionNotFound(sessionId);
      const ref = await this.refOr404(tx, refId, sessionId);
      const page: LinePage = { ref, offset, lines: [], totalLines: ref.lineCount };
      if (offset > ref.lineCount) return page;
      const metas = await readRangeChunkMetas(tx, ref.contentId, offset, offset + limit - 1);
      const needed = chunksNeedingBytes(metas, DEFAULT_MAX_LINE_LENGTH);
      const collector = new LineRangeCollector(offset, limit, DEFAULT_MAX_LINE_LENGTH, maxBytes);
      let more = true;
      for (let start = 0; more && start < metas.length; ) {
        let end = start;
        const offsets: number[] = [];
        for (; end < metas.length && offsets.length < CHUNKS_PER_BATCH; end++) if (needed[end]) offsets.push(metas[end].byteOffset);
        const data = offsets.length > 0 ? await readChunkData(tx, ref.contentId, offsets) : new Map<number, Buffer>();
        for (let i = start; more && i < end; i++) more = collector.push(metas[i], needed[i] ? data.get(metas[i].byteOffset)! : null);
        start = end;
      }
      page.lines = shownRangeLines(collector.finish(), DEFAULT_MAX_LINE_LENGTH);
      return page;
    });
  }

  /** The output's bytes in order, a batch of chunks per short transaction (raw, grep, export). */
  async *chunkBatches(tenantId: string, contentId: number): AsyncGenerator<Buffer> {
    let from = 0;
    for (;;) {
      const chunks = await this.db.tenantTx(tenantId, (tx) => readChunksFrom(tx, contentId, from, CHUNKS_PER_BATCH));
      if (chunks.length === 0) return;
      yield Buffer.concat(chunks.map((c) => c.data));
      const last = chunks[chunks.length - 1];
      from = last.byteOffset + last.byteLength;
      if (chunks.length < CHUNKS_PER_BATCH) return;
    }
  }

  /**
   * Greps a stored output in a worker thread, the main thread reading chunk
   * batches meanwhile. The time cap counts from here, waiting for a thread
   * included; an invalid or oversized pattern is a 400 before anything is read.
   */
  async grep(tenantId: string, refId: string, query: GrepQuery, sessionId?: string): Promise<{ ref: StoredRef; result: GrepResult }> {
    const deadline = Date.now() + this.config.toolOutput.grepTimeLimitMs;
    compileGrepPattern(query.pattern, { ignoreCase: query.ignoreCase });
    const ref = await this.db.tenantTx(tenantId, async (tx) => {
      if (sessionId !== undefined && !(await findSession(tx, sessionId))) throw sessionNotFound(sessionId);
      return this.refOr404(tx, refId, sessionId);
    });
    try {
      const result = await this.grepPool.run(
        { ...query, maxScanBytes: this.config.toolOutput.grepMaxScanBytes, deadline },
        this.chunkBatches(tenantId, ref.contentId),
      );
      return { ref, result };
    } catch (error) {
      if (error instanceof GrepThreadStuck) throw new DomainError('unavailable', 'grep_unavailable', 'The search did not finish; try again');
      throw error;
    }
  }

  /** Streams the original bytes; a client that stops reading holds one batch at most. */
  async streamRaw(tenantId: string, refId: string, res: Response): Promise<void> {
    const ref = await this.db.tenantTx(tenantId, (tx) => this.refOr404(tx, refId));
    res.status(200);
    res.setHeader('content-type', 'application/octet-stream');
    res.setHeader('content-length', String(ref.byteSize));
    res.setHeader('etag', `"${ref.sha256.toString('hex')}"`);
    let sent = 0;
    for await (const batch of this.chunkBatches(tenantId, ref.contentId)) {
      if (res.destroyed) return;
      sent += batch.length;
      if (!res.write(batch)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
    }
    // The content went away mid-stream (its session was deleted): cut the response rather than end it short.
    if (sent !== ref.byteSize) res.destroy();
    else res.end();
  }

  /**
   * Executes a model's call of `tool_output_cache` or `tool_output_cache_grep`
   * for refs of this session. What the model can fix (bad arguments, an
   * unknown ref, an invalid pattern) comes back as an error result for it to
   * read; a tool name that is not ours is the caller's mistake (400).
   */
  async callTool(tenantId: string, sessionId: string, name: string, args: unknown): Promise<{ output: string; isError: boolean }> {
    if (!(await this.db.tenantTx(tenantId, (tx) => findSession(tx, sessionId)))) throw sessionNotFound(sessionId);
    try {
      const command = parseToolOutputCall(name, args);
      if (command.kind === 'read') {
        const page = await this.readLines(tenantId, command.refId, command.offset, command.limit, DEFAULT_RESULT_MAX_BYTES, sessionId);
        const { text } = formatReadResultText(page, { maxLineLength: Infinity });
        return { output: text, isError: false };
      }
      const { result } = await this.grep(tenantId, command.refId, command, sessionId);
      return { output: formatGrepResultText(result, { pattern: command.pattern, ignoreCase: command.ignoreCase }), isError: false };
    } catch (error) {
      const callersMistake = error instanceof DomainError && ['unknown_tool', 'session_not_found'].includes(error.code);
      if (!(error instanceof DomainError) || callersMistake || error.kind === 'unavailable') throw error;
      return { output: `Error: ${error.message}`, isError: true };
    }
  }
}

