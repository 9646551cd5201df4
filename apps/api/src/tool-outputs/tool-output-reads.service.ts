import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { once } from 'node:events';
import type { Response } from 'express';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database, Tx } from '@app/database';
import { DomainError, ID_PATTERN } from '@app/domain';
import {
  chunksNeedingBytes,
  compileGrepPattern,
  DEFAULT_MAX_LINE_LENGTH,
  DEFAULT_RESULT_MAX_BYTES,
  formatGrepResultText,
  formatReadResultText,
  GrepResult,
  LineRangeCollector,
  parseToolOutputCall,
  shownRangeLines,
  splitIntoChunks,
  StoredChunkMeta,
} from '@app/domain/tool-output';
import { findSession, readInlineOutput } from '@app/event-store';
import { findRef, FoundRef, GrepPool, GrepThreadStuck, InlineRef, readChunkData, readChunksFrom, readRangeChunkMetas, StoredRef } from '@app/tool-output-store';
import { sessionNotFound } from '../sessions/session-state';

export const refNotFound = (refId: string) =>
  new DomainError('not_found', 'output_ref_not_found', `Tool output ${JSON.stringify(refId.slice(0, 200))} does not exist`);

/** Chunks read per query by line reads, grep and raw (and written per INSERT by uploads). */
export const CHUNKS_PER_BATCH = 32;
/** A line read over HTTP returns at most this much numbered text (nextOffset continues). */
export const HTTP_READ_MAX_BYTES = 256 * 1024;

/** A ref's figures, as the API shows them (refView). */
export type RefFigures = Pick<StoredRef, 'refId' | 'byteSize' | 'lineCount' | 'sha256'>;

/** An output a ref names: its figures, and where its bytes are (stored chunks, or the event that keeps it inline). */
export type ReadableOutput = { ref: RefFigures } & ({ contentId: number } | { contentId: null; bytes: Buffer });

/** An inline output, read from the event its ref names, in the caller's transaction. */
export async function readInline(tx: Tx, ref: InlineRef): Promise<{ ref: RefFigures; output: string }> {
  const inline = await readInlineOutput(tx, ref.sessionId, ref.attachedSeq, ref.refId);
  // An inline ref and its event are written together and deleted together (the session's cascade).
  if (!inline) throw new Error(`tool output ${ref.refId}: seq ${ref.attachedSeq} of session ${ref.sessionId} does not hold it`);
  const figures = { refId: ref.refId, byteSize: inline.ref.byte_size, lineCount: inline.ref.line_count, sha256: Buffer.from(inline.ref.sha256 ?? '', 'hex') };
  return { ref: figures, output: inline.output };
}

/** The output of a found ref, in the caller's transaction. */
async function readableOutput(tx: Tx, ref: FoundRef): Promise<ReadableOutput> {
  if (ref.contentId !== null) return { ref, contentId: ref.contentId };
  const inline = await readInline(tx, ref);
  return { ref: inline.ref, contentId: null, bytes: Buffer.from(inline.output, 'utf8') };
}

export interface LinePage {
  ref: RefFigures;
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

/** Reading stored tool outputs: line ranges, grep (in worker threads), the raw bytes, and the model-callable tools over them. */
@Injectable()
export class ToolOutputReads implements OnApplicationShutdown {
  constructor(
    private readonly db: Database,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly grepPool: GrepPool,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.grepPool.close();
  }

  private async outputOr404(tx: Tx, refId: string, sessionId?: string): Promise<ReadableOutput> {
    // Ids are created matching ID_PATTERN; anything else (a NUL, 10 KB) never reaches SQL.
    const ref = ID_PATTERN.test(refId) ? await findRef(tx, refId, sessionId) : undefined;
    if (!ref) throw refNotFound(refId);
    return readableOutput(tx, ref);
  }

  /**
   * Lines `offset ..` (1-based), at most `limit` and about `maxBytes` of
   * numbered text; only the chunks holding them are read, and of a very long
   * line only its start and end.
   */
  async readLines(tenantId: string, refId: string, offset: number, limit: number, maxBytes: number, sessionId?: string): Promise<LinePage> {
    return this.db.tenantTx(tenantId, async (tx) => {
      if (sessionId !== undefined && !(await findSession(tx, sessionId))) throw sessionNotFound(sessionId);
      const output = await this.outputOr404(tx, refId, sessionId);
      const { ref } = output;
      const page: LinePage = { ref, offset, lines: [], totalLines: ref.lineCount };
      if (offset > ref.lineCount) return page;
      // An inline output is at most a chunk or a few: cut in memory as the store cuts it, the collector skips lines before the range.
      const inline = output.contentId === null ? splitIntoChunks(output.bytes) : undefined;
      const metas: StoredChunkMeta[] = inline ?? (await readRangeChunkMetas(tx, output.contentId!, offset, offset + limit - 1));
      const needed = chunksNeedingBytes(metas, DEFAULT_MAX_LINE_LENGTH);
      const collector = new LineRangeCollector(offset, limit, DEFAULT_MAX_LINE_LENGTH, maxBytes);
      const readData = async (offsets: number[]): Promise<Map<number, Uint8Array>> =>
        inline ? new Map(inline.map((c) => [c.byteOffset, c.bytes])) : readChunkData(tx, output.contentId!, offsets);
      let more = true;
      for (let start = 0; more && start < metas.length; ) {
        let end = start;
        const offsets: number[] = [];
        for (; end < metas.length && offsets.length < CHUNKS_PER_BATCH; end++) if (needed[end]) offsets.push(metas[end].byteOffset);
        const data = offsets.length > 0 ? await readData(offsets) : new Map<number, Uint8Array>();
        for (let i = start; more && i < end; i++) more = collector.push(metas[i], needed[i] ? data.get(metas[i].byteOffset)! : null);
        start = end;
      }
      page.lines = shownRangeLines(collector.finish(), DEFAULT_MAX_LINE_LENGTH);
      return page;
    });
  }

  /** The output's bytes in order, a batch of chunks per short transaction (raw, grep, export); an inline output's in one batch. */
  async *chunkBatches(tenantId: string, output: ReadableOutput): AsyncGenerator<Buffer> {
    if (output.contentId === null) {
      // As a stored empty output, which has no chunk: no batch.
      if (output.bytes.length > 0) yield output.bytes;
      return;
    }
    const { contentId } = output;
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
  async grep(tenantId: string, refId: string, query: GrepQuery, sessionId?: string): Promise<{ ref: RefFigures; result: GrepResult }> {
    const deadline = Date.now() + this.config.toolOutput.grepTimeLimitMs;
    compileGrepPattern(query.pattern, { ignoreCase: query.ignoreCase });
    const output = await this.db.tenantTx(tenantId, async (tx) => {
      if (sessionId !== undefined && !(await findSession(tx, sessionId))) throw sessionNotFound(sessionId);
      return this.outputOr404(tx, refId, sessionId);
    });
    try {
      const result = await this.grepPool.run(
        { ...query, maxScanBytes: this.config.toolOutput.grepMaxScanBytes, deadline },
        this.chunkBatches(tenantId, output),
      );
      return { ref: output.ref, result };
    } catch (error) {
      if (error instanceof GrepThreadStuck) throw new DomainError('unavailable', 'grep_unavailable', 'The search did not finish; try again');
      throw error;
    }
  }

  /** Streams the original bytes; a client that stops reading holds one batch at most. */
  async streamRaw(tenantId: string, refId: string, res: Response): Promise<void> {
    const output = await this.db.tenantTx(tenantId, (tx) => this.outputOr404(tx, refId));
    const { ref } = output;
    res.status(200);
    res.setHeader('content-type', 'application/octet-stream');
    res.setHeader('content-length', String(ref.byteSize));
    res.setHeader('etag', `"${ref.sha256.toString('hex')}"`);
    let sent = 0;
    for await (const batch of this.chunkBatches(tenantId, output)) {
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
