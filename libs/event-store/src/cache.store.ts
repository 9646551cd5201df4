import { Tx } from '@app/database';
import { CacheTraceEvent, tokensOfChars, Usage } from '@app/domain';
import { sessionLog } from './log-reads.store';
import { findToolCalls } from './tool-call-ledger.store';

const TRACE_TYPES = ['message.added', 'step.finished', 'compaction.completed', 'tool_outputs.pruned', 'tool_results.archived'];

/**
 * The slim trace cacheReport folds (docs/compaction.md "What a rewrite
 * cost"), in seq order: one range scan of the session's log (inherited
 * segments included), aggregated in PostgreSQL into one row: the messages'
 * seqs and stored token estimates and the steps' usage as integer arrays,
 * the rewrites' few figures as JSON (messages' data is not read, so their
 * bodies are not detoasted); then one probe of session_tool_calls per call
 * id the rewrites name, for the messages that issued and answered them.
 * Read by GET /compactions only, never by the session state or the context
 * read. Measured on a 3,000-event session (2 loaded cores): about 20 ms,
 * against 4 ms for the bare scan and 150 ms for the context read of the same
 * window; one row per event returned instead cost 50 ms.
 */
export async function readCacheTrace(tx: Tx, sessionId: string): Promise<CacheTraceEvent[]> {
  const message = "e.type = 'message.added'";
  const step = "e.type = 'step.finished'";
  const usage = (field: string) => `array_agg(coalesce((e.data->'usage'->>'${field}')::bigint, 0) ORDER BY e.seq) FILTER (WHERE ${step})`;
  const [row]: Array<Record<string, any>> = await tx.query(
    `SELECT array_agg(e.seq::int ORDER BY e.seq) FILTER (WHERE ${message}) AS m_seq,
            array_agg(e.tokens::int ORDER BY e.seq) FILTER (WHERE ${message}) AS m_tokens,
            array_agg(e.seq::int ORDER BY e.seq) FILTER (WHERE ${step}) AS s_seq,
            ${usage('input_tokens')} AS s_input, ${usage('output_tokens')} AS s_output,
            ${usage('cache_read_tokens')} AS s_read, ${usage('cache_creation_tokens')} AS s_creation,
            array_agg(CASE jsonb_typeof(e.data->'contextSeq') WHEN 'number' THEN (e.data->>'contextSeq')::bigint ELSE -1 END ORDER BY e.seq)
              FILTER (WHERE ${step}) AS s_context,
            jsonb_agg(jsonb_build_object('seq', e.seq, 'type', e.type, 'facts', CASE e.type
              WHEN 'compaction.completed' THEN jsonb_build_object('tokensBefore', e.data->'tokensBefore', 'tokensAfter', e.data->'tokensAfter')
              WHEN 'tool_outputs.pruned' THEN jsonb_build_object('callIds', e.data->'callIds', 'tokensFreed', e.data->'tokensFreed', 'clearInputs', e.data->'clearInputs')
              ELSE jsonb_build_object('callIds', e.data->'callIds', 'tokensFreed', e.data->'tokensFreed',
                'digestChars', (SELECT coalesce(sum(length(p->>'text')), 0) FROM jsonb_array_elements(
                  CASE jsonb_typeof(e.data->'digest'->'parts') WHEN 'array' THEN e.data->'digest'->'parts' ELSE '[]'::jsonb END) p))
            END) ORDER BY e.seq) FILTER (WHERE NOT (${message} OR ${step})) AS rewrites
       FROM ${sessionLog('type = ANY($2::text[])')}`,
    [sessionId, TRACE_TYPES],
  );
  const rewrites: Array<{ seq: number; type: string; facts: Record<string, any> }> = row?.rewrites ?? [];
  const named = new Set<string>();
  for (const { facts } of rewrites) if (Array.isArray(facts.callIds)) for (const id of facts.callIds as string[]) named.add(id);
  const calls = new Map<number, string[]>();
  const results = new Map<number, string[]>();
  if (named.size > 0) {
    const push = (map: Map<number, string[]>, seq: number, id: string) => map.set(seq, [...(map.get(seq) ?? []), id]);
    for (const call of await findToolCalls(tx, sessionId, [...named])) {
      push(calls, call.issuedSeq, call.callId);
      if (call.answeredSeq !== null) push(results, call.answeredSeq, call.callId);
    }
  }
  const trace: CacheTraceEvent[] = [];
  const mSeq: number[] = row?.m_seq ?? [];
  mSeq.forEach((seq, i) => trace.push({ seq, type: 'message.added', tokens: row!.m_tokens[i], calls: calls.get(seq) ?? [], results: results.get(seq) ?? [] }));
  const sSeq: number[] = row?.s_seq ?? [];
  sSeq.forEach((seq, i) => {
    // bigint arrays arrive as strings (usage counts go up to Number.MAX_SAFE_INTEGER).
    const at = (column: string) => Number(row![column][i]);
    const usage: Usage = { input_tokens: at('s_input'), output_tokens: at('s_output'), cache_read_tokens: at('s_read'), cache_creation_tokens: at('s_creation') };
    const contextSeq = at('s_context');
    trace.push({ seq, type: 'step.finished', usage, ...(contextSeq >= 0 ? { contextSeq } : {}) });
  });
  for (const { seq, type, facts: f } of rewrites) {
    if (type === 'compaction.completed') {
      trace.push({ seq, type, tokensBefore: Number(f.tokensBefore ?? 0), tokensAfter: Number(f.tokensAfter ?? 0) });
    } else if (type === 'tool_outputs.pruned') {
      trace.push({ seq, type, callIds: f.callIds ?? [], tokensFreed: Number(f.tokensFreed ?? 0), clearInputs: f.clearInputs === true });
    } else {
      trace.push({
        seq,
        type: 'tool_results.archived',
        callIds: f.callIds ?? [],
        ...(typeof f.tokensFreed === 'number' ? { tokensFreed: f.tokensFreed } : {}),
        digestTokens: tokensOfChars(Number(f.digestChars)),
      });
    }
  }
  return trace.sort((a, b) => a.seq - b.seq);
}
