import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { Tx } from '@app/database';
import { AlongsideRows, invalid, NewEvent, sessionSettings, ToolResultPart } from '@app/domain';
import {
  buildInContextView,
  buildInContextViewFromParts,
  ChunkSplitter,
  decodeOutputParts,
  DEFAULT_CHUNK_BYTES,
  InContextView,
  inlineOutputRef,
  outputPlacement,
  ToolOutputViewConfig,
  viewConfigOfSettings,
  viewWindowBytes,
} from '@app/domain/tool-output';
import { SessionConfigs } from '@app/event-store';
import { attachRefs, FoundRef, insertChunks, insertRefs, newRefId, readEndChunks, refView, StoredChunk, StoredRef, upsertContents } from '@app/tool-output-store';
import { readInline } from './tool-output-reads.service';

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

/** The tool-output cache on the append path: each tool result's output stored (or its uploaded ref attached) and its in-context view. */
@Injectable()
export class ToolOutputAppend {
  /**
   * Runs inside the append transaction, after the session lock and the
   * tool-call ledger: gives every tool output sent in the body a ref (kept
   * in its event when its view shows it whole, `outputPlacement`, else
   * stored in the tool-output tables) and attaches every uploaded ref, and
   * returns the events as they are written, each result holding its
   * in-context view, `outputRef` and `truncated`. A batch without
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
    const results = toolResultsOf(events);
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
      const cited = new Map<string, { view: InContextView; outputRef: ToolResultPart['outputRef'] }>();
      for (const ref of found.values()) cited.set(ref.refId, await this.citedView(tx, ref, viewConfig));
      for (const r of byRef) {
        const { view, outputRef } = cited.get(r.result.outputRef!.id)!;
        replaced.set(r, { ...r.result, output: view.view, outputRef, truncated: view.truncated });
      }
    }

    // A disabled cache keeps sent outputs whole in the event, as the client sent them, with no ref.
    const sent = toolOutput.enabled ? results.filter((r) => r.result.outputRef === undefined) : [];
    if (sent.length > 0) {
      const placed = placeOutputs(sent, viewConfig);
      const stored = placed
        .filter((p) => p.placement === 'stored')
        .map(withChunks);
      const distinct = new Map(stored.map((s) => [s.totals.sha256.toString('hex'), s]));
      const contents = distinct.size > 0 ? await upsertContents(tx, [...distinct.values()].map((s) => s.totals)) : new Map<string, { contentId: number; inserted: boolean }>();
      const inserts = [...distinct].filter(([hex]) => contents.get(hex)!.inserted).map(([hex, s]) => insertChunks(tx, contents.get(hex)!.contentId, s.chunks));
      const contentOf = new Map(stored.map((s) => [s.refId, contents.get(s.totals.sha256.toString('hex'))!.contentId]));
      // An inline output's ref has no content: it names the event that keeps the output.
      inserts.push(insertRefs(tx, sessionId, placed.map((p) => ({ refId: p.refId, contentId: contentOf.get(p.refId) ?? null, attachedSeq: seqOf(p.r.event) }))));
      writes.push(...inserts);
      for (const s of stored) replaced.set(s.r, storedPart(s));
      for (const p of placed) if (p.placement === 'inline') replaced.set(p.r, inlinePart(p));
    }

    // Settled on every path: the caller may throw before awaiting them.
    for (const write of writes) write.catch(() => undefined);
    return { events: withParts(events, replaced), writes };
  }

  /**
   * The batch as written when every tool output it carries was sent in it
   * (none cites an uploaded ref), decided without reading the database (an
   * append in one round trip): its events, the refs of the outputs they keep
   * whole (`outputPlacement` inline) and the outputs that go to the
   * tool-output tables with their chunks. Undefined when an output cites a
   * ref or the cache is off: prepareAppend decides those.
   */
  placeSent(headSeq: number, events: readonly NewEvent[], configs: SessionConfigs): SentOutputs | undefined {
    const results = toolResultsOf(events);
    const { toolOutput } = sessionSettings(configs).config;
    if (!toolOutput.enabled || results.some((r) => r.result.outputRef !== undefined)) return undefined;
    const placed = placeOutputs(results, viewConfigOfSettings(toolOutput));
    const attachedSeq = (p: { r: ResultAt }) => headSeq + p.r.event + 1;
    const stored = placed.filter((p) => p.placement === 'stored').map(withChunks);
    const parts = new Map<ResultAt, ToolResultPart>([...placed.filter((p) => p.placement === 'inline').map((p) => [p.r, inlinePart(p)] as const), ...stored.map((s) => [s.r, storedPart(s)] as const)]);
    return {
      events: withParts(events, parts),
      inlineRefs: placed.filter((p) => p.placement === 'inline').map((p) => ({ refId: p.refId, attachedSeq: attachedSeq(p) })),
      storedOutputs: stored.map((s) => ({ refId: s.refId, attachedSeq: attachedSeq(s), ...s.totals, chunks: s.chunks })),
    };
  }

  /** The view and ref of an output a result cites by ref: an inline one's from its event, a stored one's from its end chunks. */
  private async citedView(tx: Tx, ref: FoundRef, viewConfig: ToolOutputViewConfig): Promise<{ view: InContextView; outputRef: ToolResultPart['outputRef'] }> {
    if (ref.contentId !== null) return { view: await this.storedView(tx, ref, viewConfig), outputRef: refView(ref) };
    const inline = await readInline(tx, ref);
    return { view: buildInContextView(inline.output, ref.refId, viewConfig), outputRef: refView(inline.ref) };
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
}

/** A batch's events as written and its outputs' rows, decided without reads (ToolOutputAppend.placeSent). */
export interface SentOutputs {
  events: NewEvent[];
  inlineRefs: AlongsideRows['inlineRefs'];
  storedOutputs: AlongsideRows['storedOutputs'];
}

/** Every tool result part of the batch, where it is. */
function toolResultsOf(events: readonly NewEvent[]): ResultAt[] {
  const results: ResultAt[] = [];
  events.forEach((event, eventIndex) => {
    if (event.type !== 'message.added') return;
    event.data.message.parts.forEach((part, partIndex) => {
      if (part.type === 'tool_result') results.push({ event: eventIndex, part: partIndex, result: part });
    });
  });
  return results;
}

/** Each sent output's new ref, in-context view and whether it is kept in its event or stored. */
function placeOutputs(sent: readonly ResultAt[], viewConfig: ToolOutputViewConfig) {
  return sent.map((r) => {
    const refId = newRefId();
    const view = buildInContextView(r.result.output, refId, viewConfig);
    return { r, refId, view, placement: outputPlacement(r.result.output, view) };
  });
}

/** A placed output to be stored, with its chunks and totals. */
function withChunks<P extends { r: ResultAt }>(p: P) {
  const bytes = Buffer.from(p.r.result.output, 'utf8');
  const splitter = new ChunkSplitter();
  const chunks = [...splitter.push(bytes), ...splitter.end()];
  return { ...p, chunks, totals: { sha256: sha256(bytes), byteSize: bytes.length, lineCount: splitter.totals.lineCount, chunkCount: chunks.length } };
}

/** A result whose output the tool-output tables keep: its event holds the view and the ref. */
function storedPart(s: ReturnType<typeof withChunks<{ r: ResultAt; refId: string; view: InContextView }>>): ToolResultPart {
  return { ...s.r.result, output: s.view.view, outputRef: refView({ refId: s.refId, ...s.totals }), truncated: s.view.truncated };
}

/** A result whose output its event keeps whole. */
function inlinePart(p: { r: ResultAt; refId: string; view: InContextView }): ToolResultPart {
  return { ...p.r.result, output: p.view.view, outputRef: inlineOutputRef(p.refId, p.r.result.output), truncated: false };
}

/** The events with the replaced result parts. */
function withParts(events: readonly NewEvent[], replaced: ReadonlyMap<ResultAt, ToolResultPart>): NewEvent[] {
  const byPosition = new Map([...replaced].map(([at, part]) => [`${at.event}/${at.part}`, part]));
  return events.map((event, eventIndex) => {
    if (event.type !== 'message.added' || !event.data.message.parts.some((_, i) => byPosition.has(`${eventIndex}/${i}`))) return event;
    const parts = event.data.message.parts.map((part, i) => byPosition.get(`${eventIndex}/${i}`) ?? part);
    return { ...event, data: { ...event.data, message: { ...event.data.message, parts } } };
  });
}
