/**
 * Storage layout of a tool output: chunks of at most `targetBytes` (and
 * `maxLines` lines), ending on a line boundary whenever the chunk holds a
 * newline, each with the line its first byte belongs to. A range read then
 * fetches only the chunks holding the requested lines (`chunksForLineRange`),
 * so it costs the range, not the output.
 *
 * Line numbers are 1-based and count lines as `countLines` does (a final
 * newline does not open a line).
 */
import { countNewlines, utf8Decoder } from './utf8';

/** One row of the line index. `lineCount` counts every line with a byte in the chunk. */
export interface ChunkMeta {
  index: number;
  firstLine: number;
  lineCount: number;
  byteOffset: number;
  byteLength: number;
}

/** A chunk with its bytes; `bytes` may share memory with other chunks. */
export interface OutputChunk extends ChunkMeta {
  bytes: Uint8Array;
}

export interface ChunkingOptions {
  targetBytes?: number;
  maxLines?: number;
}

export const DEFAULT_CHUNK_BYTES = 64 * 1024;
export const DEFAULT_CHUNK_MAX_LINES = 4096;

const NEWLINE = 0x0a;
const isContinuationByte = (byte: number) => (byte & 0xc0) === 0x80;

/**
 * Streaming splitter: `push` the output's pieces as they arrive, then `end`.
 * Holds at most one chunk's worth of bytes plus the current piece.
 */
export class ChunkSplitter {
  private readonly targetBytes: number;
  private readonly maxLines: number;
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private pendingNewlines = 0;
  private nextIndex = 0;
  private nextLine = 1;
  private byteOffset = 0;
  private lastByte = -1;

  constructor(options: ChunkingOptions = {}) {
    this.targetBytes = options.targetBytes ?? DEFAULT_CHUNK_BYTES;
    this.maxLines = options.maxLines ?? DEFAULT_CHUNK_MAX_LINES;
    if (!Number.isInteger(this.targetBytes) || this.targetBytes < 4) {
      throw new RangeError('targetBytes must be an integer >= 4');
    }
    if (!Number.isInteger(this.maxLines) || this.maxLines < 1) {
      throw new RangeError('maxLines must be a positive integer');
    }
  }

  push(piece: Uint8Array): OutputChunk[] {
    if (piece.length === 0) return [];
    this.pending.push(piece);
    this.pendingBytes += piece.length;
    this.pendingNewlines += countNewlines(piece);
    this.lastByte = piece[piece.length - 1];
    return this.pendingBytes >= this.targetBytes || this.pendingNewlines >= this.maxLines ? this.drain(false) : [];
  }

  end(): OutputChunk[] {
    return this.drain(true);
  }

  /** Bytes and lines pushed so far (the output's totals once `end` was called). */
  get totals(): { byteSize: number; lineCount: number } {
    const byteSize = this.byteOffset + this.pendingBytes;
    const trailing = byteSize > 0 && this.lastByte !== NEWLINE ? 1 : 0;
    return { byteSize, lineCount: this.nextLine - 1 + this.pendingNewlines + trailing };
  }

  private drain(final: boolean): OutputChunk[] {
    let buffer = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending);
    const chunks: OutputChunk[] = [];
    for (;;) {
      const fullEnough = buffer.length >= this.targetBytes || this.pendingNewlines >= this.maxLines;
      if (buffer.length === 0 || (!fullEnough && !final)) break;
      const cut = this.cutPoint(buffer, final);
      if (cut === null) break;
      const { end, newlines } = cut;
      chunks.push(this.emit(buffer.subarray(0, end), newlines));
      buffer = buffer.subarray(end);
      this.pendingNewlines -= newlines;
    }
    this.pending = buffer.length > 0 ? [buffer] : [];
    this.pendingBytes = buffer.length;
    return chunks;
  }

  /**
   * After the `maxLines`-th newline, else all of a final remainder or of a
   * buffer ending a line, else after the last newline within the target, else
   * (a line longer than the target) at a code point boundary near it, which
   * needs the byte after the target: null until it has arrived.
   */
  private cutPoint(buffer: Uint8Array, final: boolean): { end: number; newlines: number } | null {
    const limit = Math.min(buffer.length, this.targetBytes);
    let newlines = 0;
    let lastNewline = -1;
    for (let at = buffer.indexOf(NEWLINE); at !== -1 && at < limit; at = buffer.indexOf(NEWLINE, at + 1)) {
      newlines++;
      lastNewline = at;
      if (newlines === this.maxLines) return { end: at + 1, newlines };
    }
    if (limit === buffer.length && (final || lastNewline === buffer.length - 1)) return { end: limit, newlines };
    if (lastNewline !== -1) return { end: lastNewline + 1, newlines };
    if (limit === buffer.length && !final) return null;
    let end = limit;
    while (end > limit - 3 && isContinuationByte(buffer[end])) end--;
    return { end, newlines: 0 };
  }

  private emit(bytes: Uint8Array, newlines: number): OutputChunk {
    const chunk: OutputChunk = {
      index: this.nextIndex++,
      firstLine: this.nextLine,
      lineCount: newlines + (bytes[bytes.length - 1] === NEWLINE ? 0 : 1),
      byteOffset: this.byteOffset,
      byteLength: bytes.length,
      bytes,
    };
    this.nextLine += newlines;
    this.byteOffset += bytes.length;
    return chunk;
  }
}

/** Splits a whole output (or its pieces) at once. */
export function splitIntoChunks(input: Uint8Array | Iterable<Uint8Array>, options?: ChunkingOptions): OutputChunk[] {
  const splitter = new ChunkSplitter(options);
  const pieces = input instanceof Uint8Array ? [input] : input;
  const chunks: OutputChunk[] = [];
  for (const piece of pieces) chunks.push(...splitter.push(piece));
  chunks.push(...splitter.end());
  return chunks;
}

/** The chunks holding any byte of lines `offset .. offset + limit - 1`, from an index ordered by position. */
export function chunksForLineRange<T extends Pick<ChunkMeta, 'firstLine' | 'lineCount'>>(
  index: readonly T[],
  offset: number,
  limit: number,
): T[] {
  if (limit <= 0) return [];
  const lastLine = offset + limit - 1;
  // First chunk whose last line reaches `offset` (last lines never decrease along the index).
  let low = 0;
  let high = index.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (index[mid].firstLine + index[mid].lineCount - 1 < offset) low = mid + 1;
    else high = mid;
  }
  let end = low;
  while (end < index.length && index[end].firstLine <= lastLine) end++;
  return index.slice(low, end);
}

/** Lines `offset .. offset + limit - 1` (fewer past the end) from the chunks `chunksForLineRange` chose. */
export function linesInRange(
  chunks: ReadonlyArray<Pick<OutputChunk, 'firstLine' | 'bytes'>>,
  offset: number,
  limit: number,
): string[] {
  if (chunks.length === 0 || limit <= 0) return [];
  const text = utf8Decoder().decode(Buffer.concat(chunks.map((chunk) => chunk.bytes)));
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  const from = offset - chunks[0].firstLine;
  return lines.slice(Math.max(0, from), Math.max(0, from + limit));
}
