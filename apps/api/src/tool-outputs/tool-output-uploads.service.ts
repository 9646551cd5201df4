import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database, sqlState } from '@app/database';
import { DomainError, sessionSettings } from '@app/domain';
import { buildInContextViewFromParts, ChunkSplitter, DEFAULT_CHUNK_BYTES, OutputChunk, ToolOutputViewConfig, viewConfigOfSettings, ViewPartsCollector } from '@app/domain/tool-output';
import { readSessionConfigs } from '@app/event-store';
import { PRODUCER_REDIS, RedisClient } from '@app/queue';
import {
  ContentTotals,
  createStagedContent,
  discardStagedContent,
  finishStagedContent,
  insertChunks,
  insertRefs,
  newRefId,
  refView,
  touchStagedContent,
} from '@app/tool-output-store';
import { TenantLimitsService } from '../limits/tenant-limits';
import { sessionNotFound } from '../sessions/session-state';
import { CHUNKS_PER_BATCH } from './tool-output-reads.service';
import { UploadSlots } from '../limits/upload-slots';

const tooLarge = (maxBytes: number) =>
  new DomainError('too_large', 'tool_output_too_large', `The tool output exceeds ${maxBytes} bytes`, { maxBytes });
/** Its staging rows were collected as abandoned: the request could not touch them for UPLOAD_STAGING_TTL_S (a long database outage). */
const uploadInterrupted = () =>
  new DomainError('unavailable', 'upload_interrupted', 'The upload was interrupted and nothing was stored; upload it again', { retryAfter: 1 });

/** Chunks written per INSERT while an upload streams in. */
const UPLOAD_BATCH_BYTES = CHUNKS_PER_BATCH * DEFAULT_CHUNK_BYTES;

/** Tool outputs streamed in: uploads (POST …/tool-outputs) and the contents of an import. */
@Injectable()
export class ToolOutputUploads {
  private readonly uploadSlots: UploadSlots;

  constructor(
    private readonly db: Database,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(PRODUCER_REDIS) redis: RedisClient,
    private readonly tenantLimits: TenantLimitsService,
  ) {
    this.uploadSlots = new UploadSlots(redis, config.redis.prefix, config.toolOutput.uploadsPerTenant);
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
}
