import { Tx } from '@app/database';
import { CacheTraceEvent, Usage } from '@app/domain';
import { sessionLog } from './events.store';

const TRACE_TYPES = ['message.added', 'step.finished', 'compaction.completed', 'tool_outputs.pruned', 'tool_results.archived'];

/**
 * The slim trace cacheReport folds (docs/compaction.md "What a rewrite
 * cost"), in seq order: one range scan of the session's log (inherited
 * segments included) returning per row its seq, type and stored token
 * estimate, and only for steps and rewrites a few fields of their data
 * (messages' data is not read, so their bodies are not detoasted); then one
 * probe of session_tool_calls per call id the rewrites name, for the
 * messages that issued and answered them. O(events of the session) small
 * rows: read by GET /compactions and GET /sessions/{id}, never by the
 * context read.
 */
export async function readCacheTrace(tx: Tx, sessionId: string): Promise<CacheTraceEvent[]> {
  const rows: Array<Record<string, any>> = await tx.query(
    `SELECT e.seq, e.type, e.tokens,
            CASE e.type
              WHEN 'step.finished' THEN jsonb_build_object('usage', e.data->'usage', 'contextSeq', e.data->'contextSeq')
              WHEN 'compaction.completed' THEN jsonb_build_object('tokensBefore', e.data->'tokensBefore', 'tokensAfter', e.data->'tokensAfter')
              WHEN 'tool_outputs.pruned' THEN jsonb_build_object('callIds', e.data->'callIds', 'tokensFreed', e.data->'tokensFreed', 'clearInputs', e.data->'clearInputs')
              WHEN 'tool_results.archived' THEN jsonb_build_object('callIds', e.data->'callIds', 'tokensFreed', e.data->'tokensFreed',
                'digestChars', (SELECT coalesce(sum(length(p->>'text')), 0) FROM jsonb_array_elements(
                  CASE jsonb_typeof(e.data->'digest'->'parts') WHEN 'array' THEN e.data->'digest'->'parts' ELSE '[]'::jsonb END) p))
            END AS facts
       FROM ${sessionLog('type = ANY($2::text[])')}
      ORDER BY e.seq`,
    [sessionId, TRACE_TYPES],
  );
  const named = new Set<string>();
  for (const row of rows) if (row.facts?.callIds) for (const id of row.facts.callIds as string[]) named.add(id);
  const calls = new Map<number, string[]>();
  const results = new Map<number, string[]>();
  if (named.size > 0) {
    const found = await tx.query(
      `SELECT c.call_id, c.issued_seq, c.answered_seq
         FROM unnest($2::text[]) AS wanted(id)
         CROSS JOIN LATERAL (
           SELECT call_id, issued_seq, answered_seq FROM session_tool_calls
            WHERE tenant_id = current_tenant() AND session_id = $1 AND call_id = wanted.id
            LIMIT 1) c`,
      [sessionId, [...named]],
    );
    const push = (map: Map<number, string[]>, seq: number, id: string) => map.set(seq, [...(map.get(seq) ?? []), id]);
    for (const row of found) {
      push(calls, Number(row.issued_seq), row.call_id);
      if (row.answered_seq !== null) push(results, Number(row.answered_seq), row.call_id);
    }
  }
  return rows.map((row): CacheTraceEvent => {
    const seq = Number(row.seq);
    const f = row.facts ?? {};
    switch (row.type) {
      case 'step.finished':
        return { seq, type: 'step.finished', usage: f.usage as Usage, ...(typeof f.contextSeq === 'number' ? { contextSeq: f.contextSeq } : {}) };
      case 'compaction.completed':
        return { seq, type: 'compaction.completed', tokensBefore: Number(f.tokensBefore ?? 0), tokensAfter: Number(f.tokensAfter ?? 0) };
      case 'tool_outputs.pruned':
        return { seq, type: 'tool_outputs.pruned', callIds: f.callIds ?? [], tokensFreed: Number(f.tokensFreed ?? 0), clearInputs: f.clearInputs === true };
      case 'tool_results.archived':
        return {
          seq,
          type: 'tool_results.archived',
          callIds: f.callIds ?? [],
          ...(typeof f.tokensFreed === 'number' ? { tokensFreed: f.tokensFreed } : {}),
          digestTokens: Math.ceil(Number(f.digestChars) / 4),
        };
      default:
        return { seq, type: 'message.added', tokens: Number(row.tokens), calls: calls.get(seq) ?? [], results: results.get(seq) ?? [] };
    }
  });
}
