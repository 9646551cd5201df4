import { randomBytes } from 'node:crypto';
import { Tx } from '@app/database';
import { OutputChunk, StoredChunkMeta } from '@app/domain/tool-output';

/** What a ref stands for: one stored content of its tenant. */
export interface StoredRef {
  refId: string;
  sessionId: string;
  contentId: number;
  byteSize: number;
  lineCount: number;
  sha256: Buffer;
}

/** A ref of an output kept inline: the event at `attachedSeq` of the session's log holds it, with its figures. */
export interface InlineRef {
  refId: string;
  sessionId: string;
  contentId: null;
  attachedSeq: number;
}

export type FoundRef = StoredRef | InlineRef;

export interface StoredChunk extends StoredChunkMeta {
  data: Buffer;
}

export interface ContentTotals {
  sha256: Buffer;
  byteSize: number;
  lineCount: number;
  chunkCount: number;
}

/** Ref ids share the alphabet of the other ids (ID_PATTERN); 128 random bits. */
export function newRefId(): string {
  return `out_${randomBytes(16).toString('base64url')}`;
}

/** The ref as the API and events show it. */
export function refView(ref: Pick<StoredRef, 'refId' | 'byteSize' | 'lineCount' | 'sha256'>) {
  return { id: ref.refId, byte_size: ref.byteSize, line_count: ref.lineCount, sha256: ref.sha256.toString('hex') };
}

const REF_COLUMNS = `r.ref_id, r.session_id, r.content_id, r.attached_seq, c.byte_size, c.line_count, c.sha256`;

function toRef(row: Record<string, any>): FoundRef {
  if (row.content_id === null) return { refId: row.ref_id, sessionId: row.session_id, contentId: null, attachedSeq: Number(row.attached_seq) };
  return {
    refId: row.ref_id,
    sessionId: row.session_id,
    contentId: row.content_id,
    byteSize: row.byte_size,
    lineCount: row.line_count,
    sha256: row.sha256,
  };
}

/**
 * A ref of the tenant (RLS), optionally only if `sessionId` shows it: its
 * own, or one a fork inherited (the event that attached it, identified by
 * its origin and seq, is in the fork's lineage; the owner's lineage gives
 * that origin, as the owner may have adopted it from a deleted source).
 */
export async function findRef(tx: Tx, refId: string, sessionId?: string): Promise<FoundRef | undefined> {
  const [row] = await tx.query(
    `SELECT ${REF_COLUMNS} FROM tool_output_refs r
       LEFT JOIN tool_output_contents c ON c.tenant_id = r.tenant_id AND c.content_id = r.content_id
      WHERE r.tenant_id = current_tenant() AND r.ref_id = $1
        AND ($2::text IS NULL OR r.session_id = $2 OR EXISTS (
              SELECT 1 FROM sessions o CROSS JOIN LATERAL session_segments(o.lineage, o.session_id) og,
                            sessions f CROSS JOIN LATERAL jsonb_to_recordset(f.lineage) AS fg(origin text, "afterSeq" bigint, "throughSeq" bigint)
               WHERE o.tenant_id = current_tenant() AND o.session_id = r.session_id AND r.attached_seq > og.after_seq AND r.attached_seq <= og.through_seq
                 AND f.tenant_id = current_tenant() AND f.session_id = $2 AND fg.origin = og.origin
                 AND r.attached_seq > fg."afterSeq" AND r.attached_seq <= fg."throughSeq"))`,
    [refId, sessionId ?? null],
  );
  return row ? toRef(row) : undefined;
}

/**
 * Gives `refId` to the session in the caller's transaction: unattached for a
 * stored content, or naming the event at `inlineSeq` that holds the output
 * (contentId null). False when the tenant already has that ref id (another
 * session's, or one an import not yet committed holds: this waits for it).
 * The row also holds the content (its foreign key locks it), so no delete
 * collects it meanwhile.
 */
export async function claimRef(
  tx: Tx,
  sessionId: string,
  refId: string,
  held: { contentId: number } | { contentId: null; inlineSeq: number },
): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO tool_output_refs (tenant_id, ref_id, session_id, content_id, attached_seq) VALUES (current_tenant(), $1, $2, $3, $4)
     ON CONFLICT (tenant_id, ref_id) DO NOTHING RETURNING ref_id`,
    [refId, sessionId, held.contentId, held.contentId === null ? held.inlineSeq : null],
  );
  return rows.length > 0;
}

/**
 * Marks uploaded refs of the session as used by the event at `seq` (the first
 * use is kept) and returns them with their figures (an inline ref's are in
 * its event); a ref of another session or tenant, or an unknown one, is
 * simply absent. The row locks taken here keep the garbage collector from
 * expiring a ref this append is attaching.
 */
export async function attachRefs(tx: Tx, sessionId: string, uses: ReadonlyArray<{ refId: string; seq: number }>): Promise<FoundRef[]> {
  const rows = await tx.query(
    `WITH attached AS (
       UPDATE tool_output_refs r SET attached_seq = coalesce(r.attached_seq, u.seq)
         FROM (SELECT ref_id, min(seq) AS seq FROM unnest($2::text[], $3::bigint[]) AS t(ref_id, seq) GROUP BY ref_id) u
        WHERE r.tenant_id = current_tenant() AND r.session_id = $1 AND r.ref_id = u.ref_id
       RETURNING r.tenant_id, r.ref_id, r.session_id, r.content_id, r.attached_seq)
     SELECT ${REF_COLUMNS} FROM attached r
       LEFT JOIN tool_output_contents c ON c.tenant_id = current_tenant() AND c.content_id = r.content_id`,
    [sessionId, uses.map((u) => u.refId), uses.map((u) => u.seq)],
  );
  return rows.map(toRef);
}

/**
 * Finds or creates the content row of each distinct sha256. An existing row
 * is locked and touched (last_used_at), so neither a session delete nor the
 * garbage collector removes it under this transaction; `inserted` says which
 * ones need their chunks written: the rows this statement created, which
 * carry its random token in `created_xid` (RETURNING cannot read xmax on the
 * partitioned table, and Citus refuses pg_current_xact_id() there). One
 * statement, so existing rows are locked before the usage trigger locks its
 * counter row.
 */
export async function upsertContents(
  tx: Tx,
  contents: readonly ContentTotals[],
): Promise<Map<string, { contentId: number; inserted: boolean }>> {
  // In sha256 order: two appends carrying the same outputs lock them in the same order.
  const sorted = [...contents].sort((a, b) => Buffer.compare(a.sha256, b.sha256));
  // Compared here, not in RETURNING: Citus cannot send a parameter used in RETURNING on to the worker.
  const token = randomBytes(8).readBigUInt64BE().toString();
  const rows = await tx.query(
    `INSERT INTO tool_output_contents (tenant_id, sha256, byte_size, line_count, chunk_count, created_xid)
     SELECT tn.tenant_id, sha256, byte_size, line_count, chunk_count, $5::xid8
       FROM tenants tn, unnest($1::bytea[], $2::bigint[], $3::bigint[], $4::int[]) WITH ORDINALITY AS t(sha256, byte_size, line_count, chunk_count, ord)
      WHERE tn.tenant_id = current_tenant()
      ORDER BY ord
     ON CONFLICT (tenant_id, sha256) DO UPDATE SET last_used_at = excluded.last_used_at
     RETURNING content_id, sha256, created_xid::text AS created_by`,
    [sorted.map((c) => c.sha256), sorted.map((c) => c.byteSize), sorted.map((c) => c.lineCount), sorted.map((c) => c.chunkCount), token],
  );
  return new Map(rows.map((r) => [r.sha256.toString('hex'), { contentId: r.content_id, inserted: r.created_by === token }]));
}

const CHUNK_PARAMS = 5;
/** Rows per INSERT: at most 32 chunks (2 MiB at the default chunk size), each as binary parameters. */
const CHUNKS_PER_INSERT = 32;

export async function insertChunks(tx: Tx, contentId: number, chunks: readonly OutputChunk[]): Promise<void> {
  for (let start = 0; start < chunks.length; start += CHUNKS_PER_INSERT) {
    const batch = chunks.slice(start, start + CHUNKS_PER_INSERT);
    const values = batch.map((_, i) => {
      const p = 2 + i * CHUNK_PARAMS;
      return `(current_tenant(), $1, $${p}, $${p + 1}, $${p + 2}, $${p + 3}, $${p + 4})`;
    });
    await tx.query(
      `INSERT INTO tool_output_chunks (tenant_id, content_id, byte_offset, byte_length, first_line, line_count, data) VALUES ${values.join(', ')}`,
      [
        contentId,
        ...batch.flatMap((c) => [c.byteOffset, c.byteLength, c.firstLine, c.lineCount, Buffer.from(c.bytes.buffer, c.bytes.byteOffset, c.bytes.byteLength)]),
      ],
    );
  }
}

/** Inserts refs of the session; a `contentId` null is an inline output's, held by the event at `attachedSeq`. */
export async function insertRefs(
  tx: Tx,
  sessionId: string,
  refs: ReadonlyArray<{ refId: string; contentId: number; attachedSeq: number | null } | { refId: string; contentId: null; attachedSeq: number }>,
): Promise<void> {
  await tx.query(
    `INSERT INTO tool_output_refs (tenant_id, ref_id, session_id, content_id, attached_seq)
     SELECT tn.tenant_id, ref_id, $1, content_id, attached_seq
       FROM tenants tn, unnest($2::text[], $3::bigint[], $4::bigint[]) AS t(ref_id, content_id, attached_seq)
      WHERE tn.tenant_id = current_tenant()`,
    [sessionId, refs.map((r) => r.refId), refs.map((r) => r.contentId), refs.map((r) => r.attachedSeq)],
  );
}

/**
 * The staging row of an upload: a content row without a sha256 yet (it is
 * known at the end), committed at once so the chunks can follow in their own
 * transactions. No ref points at it, so no reader ever sees it.
 */
export async function createStagedContent(tx: Tx): Promise<number> {
  const [row] = await tx.query(`INSERT INTO tool_output_contents (tenant_id) VALUES (current_tenant()) RETURNING content_id`);
  return row.content_id;
}

/** Marks a staging row as still being written, so the garbage collector leaves it alone; false once it is gone. */
export async function touchStagedContent(tx: Tx, stagedId: number): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE tool_output_contents SET last_used_at = now() WHERE tenant_id = current_tenant() AND content_id = $1 AND sha256 IS NULL RETURNING 1`,
    [stagedId],
  );
  return rows.length > 0;
}

/** Drops a failed upload's staging row; its chunks go with it (cascade). */
export async function discardStagedContent(tx: Tx, stagedId: number): Promise<void> {
  await tx.query(`DELETE FROM tool_output_contents WHERE tenant_id = current_tenant() AND content_id = $1 AND sha256 IS NULL`, [stagedId]);
}

/**
 * Completes an upload: when the tenant already stores these bytes, the staged
 * copy is dropped and the existing content (locked and touched) is used;
 * otherwise the staged row gets its sha256 and totals. A concurrent upload of
 * the same bytes committing first makes the UPDATE fail on the unique key,
 * so that case retries under a savepoint. Undefined when the staging row is
 * gone (the garbage collector took it as abandoned).
 */
export async function finishStagedContent(tx: Tx, stagedId: number, totals: ContentTotals): Promise<number | undefined> {
  for (;;) {
    const [existing] = await tx.query(
      `UPDATE tool_output_contents SET last_used_at = now() WHERE tenant_id = current_tenant() AND sha256 = $1 RETURNING content_id`,
      [totals.sha256],
    );
    if (existing) {
      await discardStagedContent(tx, stagedId);
      return existing.content_id;
    }
    await tx.query('SAVEPOINT finish_upload');
    try {
      const [finished] = await tx.query(
        `UPDATE tool_output_contents SET sha256 = $2, byte_size = $3, line_count = $4, chunk_count = $5, last_used_at = now()
          WHERE tenant_id = current_tenant() AND content_id = $1 AND sha256 IS NULL RETURNING content_id`,
        [stagedId, totals.sha256, totals.byteSize, totals.lineCount, totals.chunkCount],
      );
      await tx.query('RELEASE SAVEPOINT finish_upload');
      return finished?.content_id;
    } catch (error) {
      await tx.query('ROLLBACK TO SAVEPOINT finish_upload');
      if ((error as { code?: string }).code !== '23505') throw error;
    }
  }
}

/**
 * The chunks holding any byte of lines `offset .. last`, without their data:
 * from the last chunk starting in a line before `offset` (the one holding that
 * line's first byte) through the last one starting at or before `last`. Two
 * probes of the first_line index, so the cost follows the range.
 */
export async function readRangeChunkMetas(tx: Tx, contentId: number, offset: number, last: number): Promise<StoredChunkMeta[]> {
  const rows = await tx.query(
    `SELECT byte_offset, byte_length, first_line, line_count FROM tool_output_chunks
      WHERE tenant_id = current_tenant() AND content_id = $1 AND first_line <= $3
        AND first_line >= coalesce((SELECT max(first_line) FROM tool_output_chunks
                                     WHERE tenant_id = current_tenant() AND content_id = $1 AND first_line < $2), 1)
        AND first_line + line_count - 1 >= $2
      ORDER BY byte_offset`,
    [contentId, offset, last],
  );
  return rows.map((r) => ({ byteOffset: r.byte_offset, byteLength: r.byte_length, firstLine: r.first_line, lineCount: r.line_count }));
}

/** The data of the chunks starting at `byteOffsets`, by offset. */
export async function readChunkData(tx: Tx, contentId: number, byteOffsets: readonly number[]): Promise<Map<number, Buffer>> {
  const rows = await tx.query(
    `SELECT byte_offset, data FROM tool_output_chunks
      WHERE tenant_id = current_tenant() AND content_id = $1 AND byte_offset = ANY($2::bigint[])`,
    [contentId, byteOffsets],
  );
  return new Map(rows.map((r) => [r.byte_offset, r.data]));
}

/** Up to `limit` chunks from byte `fromOffset` on, in order (raw streaming and grep). */
export async function readChunksFrom(tx: Tx, contentId: number, fromOffset: number, limit: number): Promise<StoredChunk[]> {
  const rows = await tx.query(
    `SELECT byte_offset, byte_length, first_line, line_count, data FROM tool_output_chunks
      WHERE tenant_id = current_tenant() AND content_id = $1 AND byte_offset >= $2
      ORDER BY byte_offset LIMIT $3`,
    [contentId, fromOffset, limit],
  );
  return rows.map((r) => ({ byteOffset: r.byte_offset, byteLength: r.byte_length, firstLine: r.first_line, lineCount: r.line_count, data: r.data }));
}

/**
 * The chunks holding bytes `[0, headBytes)` or `[tailStart, end)`: what an
 * in-context view needs. Chunks are at most `maxChunkBytes` long, which bounds
 * the tail probe.
 */
export async function readEndChunks(
  tx: Tx,
  contentId: number,
  headBytes: number,
  tailStart: number,
  maxChunkBytes: number,
): Promise<StoredChunk[]> {
  const rows = await tx.query(
    `SELECT byte_offset, byte_length, first_line, line_count, data FROM tool_output_chunks
      WHERE tenant_id = current_tenant() AND content_id = $1
        AND (byte_offset < $2 OR (byte_offset > $3::bigint - $4 AND byte_offset + byte_length > $3))
      ORDER BY byte_offset`,
    [contentId, headBytes, tailStart, maxChunkBytes],
  );
  return rows.map((r) => ({ byteOffset: r.byte_offset, byteLength: r.byte_length, firstLine: r.first_line, lineCount: r.line_count, data: r.data }));
}

/**
 * Locks the session row (so no append or upload adds a ref meanwhile) and
 * returns the contents its refs point at; undefined when the session does not exist.
 */
export async function lockSessionOutputs(tx: Tx, sessionId: string): Promise<number[] | undefined> {
  const [session] = await tx.query('SELECT 1 FROM sessions WHERE tenant_id = current_tenant() AND session_id = $1 FOR UPDATE', [sessionId]);
  if (!session) return undefined;
  const rows = await tx.query(
    `SELECT DISTINCT content_id FROM tool_output_refs WHERE tenant_id = current_tenant() AND session_id = $1 AND content_id IS NOT NULL`,
    [sessionId],
  );
  return rows.map((r) => r.content_id);
}

/**
 * Deletes those of `contentIds` no ref points at any more. A content another
 * transaction is attaching right now is locked by it and skipped (it stays
 * referenced, or the garbage collector takes it after the retention age).
 */
export async function deleteUnreferencedContents(tx: Tx, contentIds: readonly number[]): Promise<number> {
  if (contentIds.length === 0) return 0;
  const rows = await tx.query(
    `DELETE FROM tool_output_contents c
      WHERE c.tenant_id = current_tenant() AND (c.tenant_id, c.content_id) IN (
              SELECT tenant_id, content_id FROM tool_output_contents
               WHERE tenant_id = current_tenant() AND content_id = ANY($1::bigint[])
               FOR UPDATE SKIP LOCKED)
        AND NOT EXISTS (SELECT 1 FROM tool_output_refs r WHERE r.tenant_id = current_tenant() AND r.content_id = c.content_id)
      RETURNING 1`,
    [contentIds],
  );
  return rows.length;
}
