/**
 * Getting `OutputParts` from bytes: from a stream being uploaded
 * (`ViewPartsCollector`), or from the first and last stored chunks
 * (`decodeOutputParts`), so the view never needs the whole output in memory.
 */
import { OutputParts, ToolOutputViewConfig, markerUnit, viewWindowBytes } from './in-context-view';
import { countNewlines, countUtf8Chars, decodeUtf8Head, decodeUtf8Tail, utf8Decoder } from './utf8';

/** Raw ends of an output: `tail` null when `head` holds all of it. */
export interface OutputByteParts {
  head: Uint8Array;
  tail: Uint8Array | null;
  totalBytes: number;
  totalLines: number;
  totalChars?: number;
}

/** Decodes the ends (invalid UTF-8 becomes U+FFFD), dropping code points the window edges split. */
export function decodeOutputParts(parts: OutputByteParts): OutputParts {
  const { head, tail, ...totals } = parts;
  if (tail === null) return { head: utf8Decoder().decode(head), tail: null, ...totals };
  return { head: decodeUtf8Head(head), tail: decodeUtf8Tail(tail), ...totals };
}

/**
 * Fed the pieces of an output as they arrive, keeps only the windows the view
 * needs (plus at most one piece), and counts bytes and lines. Pieces are kept
 * by reference, so the caller must not reuse their memory.
 */
export class ViewPartsCollector {
  private readonly windows: { head: number; tail: number };
  /** Only a chars marker needs the count, and it costs a pass over every byte. */
  private readonly countsChars: boolean;
  private totalChars = 0;
  private readonly head: Uint8Array[] = [];
  private headBytes = 0;
  private readonly tail: Uint8Array[] = [];
  private tailBytes = 0;
  private totalBytes = 0;
  private newlines = 0;
  private lastByte = -1;

  constructor(config: Partial<ToolOutputViewConfig> = {}) {
    this.windows = viewWindowBytes(config);
    this.countsChars = markerUnit(config) === 'chars';
  }

  push(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.totalBytes += piece.length;
    this.newlines += countNewlines(piece);
    if (this.countsChars) this.totalChars += countUtf8Chars(piece);
    this.lastByte = piece[piece.length - 1];
    const toHead = Math.min(piece.length, this.windows.head - this.headBytes);
    if (toHead > 0) {
      this.head.push(piece.subarray(0, toHead));
      this.headBytes += toHead;
    }
    // The tail only ever needs bytes after the head window.
    if (toHead === piece.length) return;
    this.tail.push(piece.subarray(toHead));
    this.tailBytes += piece.length - toHead;
    while (this.tail.length > 1 && this.tailBytes - this.tail[0].length >= this.windows.tail) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  finish(): OutputParts {
    const totalLines = this.newlines + (this.totalBytes > 0 && this.lastByte !== 0x0a ? 1 : 0);
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    const complete = this.totalBytes <= this.windows.head + this.windows.tail;
    return decodeOutputParts({
      head: complete ? Buffer.concat([head, tail.subarray(tail.length - (this.totalBytes - head.length))]) : head,
      tail: complete ? null : tail.subarray(tail.length - this.windows.tail),
      totalBytes: this.totalBytes,
      totalLines,
      totalChars: this.countsChars ? this.totalChars : undefined,
    });
  }
}
