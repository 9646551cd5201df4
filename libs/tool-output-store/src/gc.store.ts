import { Tx } from '@app/database';

/**
 * Garbage collection of the tool-output cache, across tenants, as the
 * `session_store_gc` role (it sees and deletes rows of the tool-output
 * tables only).
 *
 * A content is live while a ref points at it; a ref is live while its
 * session exists (the foreign key deletes it with the session) and, once an
 * event used it, for the rest of the session's life: the log is immutable,
 * so `atSeq` reads, summaries and pruned placeholders can cite it. What
 * expires after the retention age:
 *
 * 1. refs of uploads no event ever referenced (never an inline output's
 *    ref: it names its event from the start, and goes with it);
 * 2. contents no ref points at and nobody attached within that age (those
 *    expired uploads, and what a session delete skipped because a concurrent
 *    transaction held the row).
 *
 * Apart from these, an upload in progress is a staging content (sha256 NULL)
 * that its request touches while it runs; one left untouched for the staging
 * age was abandoned (client gone, process killed) and is deleted with its
 * chunks. The retention age never applies to staging rows: an upload may run
 * longer than it.
 *
 * Each call deletes at most `batch` rows, so a run is a loop of short
 * transactions. No row locks are taken up front (the role has no UPDATE
 * grant): a row another transaction holds is waited for, and the DELETE then
 * re-checks its conditions on the row's new version, which every path that
 * reuses a ref or a content changes (`attached_seq`, `last_used_at`).
 */
export async function expireUnattachedRefs(tx: Tx, retentionSeconds: number, batch: number): Promise<number> {
  const rows = await tx.query(
    `DELETE FROM tool_output_refs r
      WHERE (r.tenant_id, r.ref_id) IN (
              SELECT tenant_id, ref_id FROM tool_output_refs
               WHERE attached_seq IS NULL AND created_at < now() - make_interval(secs => $1)
               LIMIT $2)
        AND r.attached_seq IS NULL
      RETURNING 1`,
    [retentionSeconds, batch],
  );
  return rows.length;
}

export async function deleteOrphanContents(tx: Tx, retentionSeconds: number, batch: number): Promise<number> {
  const rows = await tx.query(
    `DELETE FROM tool_output_contents c
      WHERE (c.tenant_id, c.content_id) IN (
              SELECT tenant_id, content_id FROM tool_output_contents o
               WHERE o.sha256 IS NOT NULL AND o.last_used_at < now() - make_interval(secs => $1)
                 AND NOT EXISTS (SELECT 1 FROM tool_output_refs r WHERE r.tenant_id = o.tenant_id AND r.content_id = o.content_id)
               LIMIT $2)
        AND c.sha256 IS NOT NULL AND c.last_used_at < now() - make_interval(secs => $1)
        AND NOT EXISTS (SELECT 1 FROM tool_output_refs r WHERE r.tenant_id = c.tenant_id AND r.content_id = c.content_id)
      RETURNING 1`,
    [retentionSeconds, batch],
  );
  return rows.length;
}

export async function deleteAbandonedUploads(tx: Tx, stagingSeconds: number, batch: number): Promise<number> {
  const rows = await tx.query(
    `DELETE FROM tool_output_contents c
      WHERE (c.tenant_id, c.content_id) IN (
              SELECT tenant_id, content_id FROM tool_output_contents
               WHERE sha256 IS NULL AND last_used_at < now() - make_interval(secs => $1)
               LIMIT $2)
        AND c.sha256 IS NULL AND c.last_used_at < now() - make_interval(secs => $1)
      RETURNING 1`,
    [stagingSeconds, batch],
  );
  return rows.length;
}
