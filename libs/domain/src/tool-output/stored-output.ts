/**
 * How a tool result's in-context view is stored in its event:
 * once. A small output shown whole lives in its event only (inline-output.ts).
 * For the others the tool-output store already holds the bytes, so a result
 * whose view is the whole output keeps no copy in the event, and a
 * truncated view keeps only its own text (header, marker, note) with byte
 * ranges of the stored output for the rest. Readers restore `output` before
 * anything else sees the event, so every reader gets the view as written.
 *
 * The stored part has `outputFrom` instead of `output`: `true` for the whole
 * output, else the pieces of the view in order. A client can never send
 * `outputFrom` (the append schema refuses unknown keys in parts), so its
 * presence tells a stored view from anything else.
 */
import type { Message, NewEvent, ToolResultPart } from '../events';
import { outputPlacement } from './inline-output';
import { utf8ByteLength } from './utf8';

/** Literal text of the view, or the byte range [start, end) of the stored output. */
export type OutputPiece = string | [start: number, end: number];
/** `true`: the view is the whole stored output. */
export type StoredOutput = true | OutputPiece[];

export type StoredToolResultPart = Omit<ToolResultPart, 'output'> & { outputFrom: StoredOutput };

/** A slice of a stored output a reader needs; `end` null: up to the end (the whole output). */
export interface OutputSlice {
  refId: string;
  start: number;
  end: number | null;
}

/** Below this many bytes taken from the stored output, a truncated view is kept literally: ranges would save too little. */
const MIN_PIECE_BYTES = 1024;
/** Characters of the output's start and end searched for in the view. */
const PROBE_CHARS = 32;

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * How the view of an output stored whole as `output` can be kept: `true`
 * when it is the output itself; pieces when it is its header, head, marker,
 * tail and note (checked by rebuilding it); undefined when it must be kept
 * literally (an empty output, a view with cut lines, or one taking little of
 * the output).
 */
export function storedOutputOf(view: string, output: string): StoredOutput | undefined {
  // An empty output has no chunk to read it back from, and its copy costs nothing.
  if (output === '') return undefined;
  if (view === output) return true;
  const probe = Math.min(PROBE_CHARS, output.length);
  if (probe === 0) return undefined;

  // The head: where the output's start appears in the view (after the header), and how far the two agree.
  const found = view.indexOf(output.slice(0, probe));
  const headAt = found < 0 ? 0 : found;
  let head = 0;
  if (found >= 0) {
    while (headAt + head < view.length && head < output.length && view.charCodeAt(headAt + head) === output.charCodeAt(head)) head++;
    if (head > 0 && isHighSurrogate(output.charCodeAt(head - 1))) head--;
  }
  const afterHead = headAt + head;

  // The tail: the last place the output's end appears in the view after the head, and how far back they agree.
  const tailEnd = view.lastIndexOf(output.slice(output.length - probe));
  let tail = 0;
  if (tailEnd >= afterHead) {
    const end = tailEnd + probe;
    const room = Math.min(end - afterHead, output.length - head);
    while (tail < room && view.charCodeAt(end - 1 - tail) === output.charCodeAt(output.length - 1 - tail)) tail++;
    if (tail > 0 && isLowSurrogate(output.charCodeAt(output.length - tail))) tail--;
  }
  const tailViewEnd = tail > 0 ? tailEnd + probe : afterHead;

  const totalBytes = utf8ByteLength(output);
  const headBytes = utf8ByteLength(output.slice(0, head));
  const tailBytes = utf8ByteLength(output.slice(output.length - tail));
  if (headBytes + tailBytes < MIN_PIECE_BYTES) return undefined;
  const pieces: OutputPiece[] = [];
  const literal = (text: string) => text !== '' && pieces.push(text);
  literal(view.slice(0, headAt));
  if (head > 0) pieces.push([0, headBytes]);
  literal(view.slice(afterHead, tailViewEnd - tail));
  if (tail > 0) pieces.push([totalBytes - tailBytes, totalBytes]);
  literal(view.slice(tailViewEnd));

  const rebuilt = view.slice(0, headAt) + output.slice(0, head) + view.slice(afterHead, tailViewEnd - tail) + output.slice(output.length - tail) + view.slice(tailViewEnd);
  return rebuilt === view ? pieces : undefined;
}

/**
 * The event as it is stored: each tool result whose output the client sent
 * inline and the store keeps (it has an `outputRef`, and the output is not
 * one the event keeps: `outputPlacement`) holds `outputFrom` instead of its
 * view where that saves bytes. `sent` is the client's event, `written` the
 * same event with the views in place.
 */
export function storedEventOf(written: NewEvent, sent: NewEvent): NewEvent {
  if (written.type !== 'message.added' || sent.type !== 'message.added') return written;
  const sentParts = sent.data.message.parts;
  let changed = false;
  const parts = written.data.message.parts.map((part, i) => {
    const original = sentParts[i];
    if (part.type !== 'tool_result' || part.outputRef === undefined) return part;
    if (original?.type !== 'tool_result' || original.outputRef !== undefined || typeof original.output !== 'string') return part;
    if (outputPlacement(original.output, { view: part.output, truncated: part.truncated ?? false }) === 'inline') return part;
    const outputFrom = storedOutputOf(part.output, original.output);
    if (outputFrom === undefined) return part;
    changed = true;
    const { output: _view, ...rest } = part;
    return { ...rest, outputFrom } as StoredToolResultPart;
  });
  if (!changed) return written;
  return { ...written, data: { ...written.data, message: { ...written.data.message, parts: parts as Message['parts'] } } };
}

type StoredPart = Record<string, unknown> & { type?: unknown; outputFrom?: unknown; outputRef?: { id?: unknown } };

/** The stored parts of an event's data that hold `outputFrom` (none for anything but a message). */
function storedParts(data: unknown): StoredPart[] {
  const parts = (data as { message?: { parts?: unknown } } | null)?.message?.parts;
  if (!Array.isArray(parts)) return [];
  return parts.filter((p: StoredPart) => p?.type === 'tool_result' && p.outputFrom !== undefined && typeof p.outputRef?.id === 'string');
}

/** Whether the event's data holds a stored view that must be restored before use. */
function hasStoredOutputs(data: unknown): boolean {
  return storedParts(data).length > 0;
}

const sliceKey = (s: OutputSlice) => `${s.refId}:${s.start}:${s.end}`;

/** The slices of stored outputs the events' stored views need, each once. */
export function storedOutputSlices(datas: readonly unknown[]): OutputSlice[] {
  const slices = new Map<string, OutputSlice>();
  for (const data of datas) {
    for (const part of storedParts(data)) {
      const refId = part.outputRef!.id as string;
      const wanted: OutputSlice[] =
        part.outputFrom === true
          ? [{ refId, start: 0, end: null }]
          : (part.outputFrom as OutputPiece[]).filter((p): p is [number, number] => Array.isArray(p)).map(([start, end]) => ({ refId, start, end }));
      for (const slice of wanted) slices.set(sliceKey(slice), slice);
    }
  }
  return [...slices.values()];
}

/** jsonb's key order (shorter keys first, then by bytes): what a part read back from PostgreSQL has always had. */
function jsonbKeyOrder(entries: Array<[string, unknown]>): Array<[string, unknown]> {
  return entries.sort(([a], [b]) => utf8ByteLength(a) - utf8ByteLength(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The event's data with every stored view replaced by `output(refId, from)`,
 * the part's keys in the order a part stored with its view reads back in.
 * Data without stored views is returned as is.
 */
function withOutputs<D>(data: D, output: (refId: string, from: StoredOutput) => string): D {
  if (!hasStoredOutputs(data)) return data;
  const message = (data as { message: { parts: StoredPart[] } }).message;
  const parts = message.parts.map((part) => {
    if (part?.type !== 'tool_result' || part.outputFrom === undefined) return part;
    const { outputFrom, ...rest } = part;
    return Object.fromEntries(jsonbKeyOrder([...Object.entries(rest), ['output', output(part.outputRef!.id as string, outputFrom as StoredOutput)]]));
  });
  return { ...data, message: { ...message, parts } };
}

/** A view's text from its pieces: literals as `literal` gives them, slices of the stored output as `slice` does. */
function viewText(refId: string, from: StoredOutput, literal: (text: string) => string, slice: (slice: OutputSlice) => string): string {
  if (from === true) return slice({ refId, start: 0, end: null });
  return from.map((piece) => (typeof piece === 'string' ? literal(piece) : slice({ refId, start: piece[0], end: piece[1] }))).join('');
}

/**
 * The event's data with every stored view restored as `output`, from the
 * texts of `storedOutputSlices` (`text(slice)`). Data without stored views
 * is returned as is.
 */
export function restoreStoredOutputs<D>(data: D, text: (slice: OutputSlice) => string): D {
  return withOutputs(data, (refId, from) => viewText(refId, from, (literal) => literal, text));
}

/** A JSON string's content: the text escaped as JSON.stringify does, without the quotes. */
const jsonEscaped = (text: string) => JSON.stringify(text).slice(1, -1);

/**
 * The same restore for an event read as JSON text: only the event's small
 * remainder is serialized, and each output's text, most of a read's bytes,
 * is escaped on its own. The result is the event's JSON in pieces (joined,
 * the event), each output its own piece, so a writer sends it without
 * first copying it into one string. Each output first goes in as a
 * placeholder string, a NUL and its index; stored data never holds a NUL
 * (jsonb refuses \u0000), so `"\u0000` in the serialized event is only ever
 * a placeholder's start. `event` is the parsed JSON; undefined when it holds
 * no stored view (its JSON stands).
 */
export function restoredEventJson(event: { data: unknown }, text: (slice: OutputSlice) => string): string[] | undefined {
  if (!hasStoredOutputs(event.data)) return undefined;
  const outputs: string[] = [];
  const data = withOutputs(event.data, (refId, from) => `\u0000${outputs.push(viewText(refId, from, jsonEscaped, (slice) => jsonEscaped(text(slice)))) - 1}`);
  // split with a captured group: the placeholders' indexes at the odd positions, the JSON around them at the even ones.
  return JSON.stringify({ ...event, data })
    .split(/"\\u0000(\d+)"/)
    .flatMap((piece, k) => (k % 2 === 1 ? ['"', outputs[Number(piece)], '"'] : [piece]));
}

/** Looks the text of a slice up by `storedOutputSlices`' key; a slice that was not read is an integrity error. */
export function sliceTexts(read: ReadonlyArray<{ slice: OutputSlice; text: string }>): (slice: OutputSlice) => string {
  const texts = new Map(read.map((r) => [sliceKey(r.slice), r.text]));
  return (slice) => {
    const text = texts.get(sliceKey(slice));
    if (text === undefined) throw new Error(`stored tool output ${slice.refId} [${slice.start}, ${slice.end ?? 'end'}) is missing`);
    return text;
  };
}
