import { Tx } from '@app/database';
import {
  DEFAULT_CHUNK_BYTES,
  OutputSlice,
  restoreStoredOutputs,
  restoredEventJson,
  sliceTexts,
  storedOutputSlices,
} from '@app/domain/tool-output';

/**
 * The texts of slices of stored outputs, in one statement: each slice's
 * chunks (of at most DEFAULT_CHUNK_BYTES, so the probe is a range of the
 * primary key), cut to the slice in PostgreSQL and decoded there. Slices
 * start and end on code point boundaries, as chunks do. A slice with no
 * chunk (its ref gone) is left out, which the restore reports.
 */
async function readSlices(tx: Tx, slices: readonly OutputSlice[]): Promise<Array<{ slice: OutputSlice; text: string }>> {
  const rows: Array<{ i: string; byte_offset: string; text: string }> = await tx.query(
    `SELECT w.i, c.byte_offset, convert_from(CASE WHEN w.hi IS NULL THEN c.data
                                   ELSE substring(c.data FROM (greatest(w.lo - c.byte_offset, 0) + 1)::int
                                                         FOR (least(w.hi, c.byte_offset + c.byte_length) - greatest(w.lo, c.byte_offset))::int) END, 'UTF8') AS text
       FROM unnest($1::text[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS w(ref_id, lo, hi, i)
       -- Laterals, each fenced by OFFSET 0: one index probe per ref and per slice, whatever the planner guesses
       -- of the unnest. Unfenced, the planner pulls them up into a join, and without fresh statistics it hashed
       -- every ref of the tenant: a read of the last 20 events cost O(the tenant's outputs), 2.2 ms against 0.4.
       CROSS JOIN LATERAL (SELECT content_id FROM tool_output_refs WHERE tenant_id = current_tenant() AND ref_id = w.ref_id OFFSET 0) r
       CROSS JOIN LATERAL (
         SELECT byte_offset, byte_length, data FROM tool_output_chunks
          WHERE tenant_id = current_tenant() AND content_id = r.content_id
            AND (w.hi IS NULL OR (byte_offset < w.hi AND byte_offset > w.lo - $4 AND byte_offset + byte_length > w.lo))
         OFFSET 0) c`,
    [slices.map((s) => s.refId), slices.map((s) => s.start), slices.map((s) => s.end), DEFAULT_CHUNK_BYTES],
  );
  // Ordered here, not by the query: PostgreSQL would sort the decoded texts (spilling to disk past work_mem).
  const texts = new Map<number, Array<{ offset: number; text: string }>>();
  for (const row of rows) {
    const i = Number(row.i) - 1;
    const piece = { offset: Number(row.byte_offset), text: row.text };
    const pieces = texts.get(i);
    if (pieces) pieces.push(piece);
    else texts.set(i, [piece]);
  }
  return slices.flatMap((slice, i) => {
    const pieces = texts.get(i);
    if (!pieces) return [];
    return [{ slice, text: pieces.length === 1 ? pieces[0].text : pieces.sort((a, b) => a.offset - b.offset).map((p) => p.text).join('') }];
  });
}

/**
 * Events as written: every tool result stored with `outputFrom` gets its
 * view back as `output` (docs/decisions.md, "Tool outputs stored once").
 * One query for all of them; events without stored views cost nothing.
 */
export async function withStoredOutputs<E extends { data: unknown }>(tx: Tx, events: E[]): Promise<E[]> {
  const slices = storedOutputSlices(events.map((e) => e.data));
  if (slices.length === 0) return events;
  const text = sliceTexts(await readSlices(tx, slices));
  return events.map((e) => ({ ...e, data: restoreStoredOutputs(e.data, text) }));
}

/**
 * The same for events as JSON text (`{..., "data": ...}`), given back in
 * pieces (joined, the event): only an event whose text names `outputFrom`
 * is parsed, and its outputs are spliced into its JSON as pieces of their
 * own (restoredEventJson), not serialized with the event.
 */
export async function withStoredOutputJson<E extends { json: string }>(tx: Tx, events: E[]): Promise<Array<Omit<E, 'json'> & { json: string[] }>> {
  const parsed = new Map<E, { data: unknown }>();
  for (const e of events) if (e.json.includes('"outputFrom"')) parsed.set(e, JSON.parse(e.json));
  const slices = storedOutputSlices([...parsed.values()].map((p) => p.data));
  const text = slices.length === 0 ? undefined : sliceTexts(await readSlices(tx, slices));
  return events.map((e) => {
    const event = parsed.get(e);
    return { ...e, json: (event && text && restoredEventJson(event, text)) || [e.json] };
  });
}
