/**
 * A line-range read of a stored output whose cost follows what is shown: the
 * store hands over the chunks covering the range (see `chunksForLineRange`),
 * `chunksNeedingBytes` says which of them must be fetched, and
 * `LineRangeCollector` turns them into lines, keeping of each line only the
 * start a reader shows (lines are cut at a maximum length anyway).
 *
 * Without this, one line of 100 MB (a minified bundle, a base64 blob) would be
 * fetched and decoded whole to show its first 2,000 characters.
 */
import { ChunkMeta } from './chunking';
import { cutLongLine } from './line-format';
import { codePointCount, utf8ByteLength, utf8Decoder } from './utf8';

export type StoredChunkMeta = Pick<ChunkMeta, 'firstLine' | 'lineCount' | 'byteOffset' | 'byteLength'>;

const lastLine = (meta: StoredChunkMeta) => meta.firstLine + meta.lineCount - 1;

/**
 * For chunks in output order, whether each one's bytes are needed. A chunk
 * lying strictly inside one line (the line started in an earlier chunk and
 * goes on in the next) is skipped once that line already has
 * `4 * maxLineLength` bytes fetched past its starting chunk, enough for
 * `maxLineLength` code points; a skipped chunk then only adds its length.
 */
export function chunksNeedingBytes(metas: readonly StoredChunkMeta[], maxLineLength: number): boolean[] {
  const enough = 4 * maxLineLength;
  let fetchedInside = 0;
  return metas.map((meta, i) => {
    const previous = metas[i - 1];
    const next = metas[i + 1];
    const inside =
      meta.lineCount === 1 &&
      previous !== undefined &&
      lastLine(previous) === meta.firstLine &&
      next !== undefined &&
      next.firstLine === meta.firstLine;
    if (!inside) {
      fetchedInside = 0;
      return true;
    }
    if (fetchedInside >= enough) return false;
    fetchedInside += meta.byteLength;
    return true;
  });
}

/** One line of a range: its start (all of it when short) and its length in code points. */
export interface RangeLine {
  line: number;
  text: string;
  /** Code points of the whole line; a skipped chunk counts one per byte. */
  chars: number;
}

/**
 * Fed the chunks of a range in order (bytes null for skipped ones), collects
 * lines `offset .. offset + limit - 1`, each kept up to `maxLineLength` code
 * points. With `maxBytes`, it is done once the lines as shown (cut, plus a
 * newline each) reach that size, so the caller can stop fetching.
 */
export class LineRangeCollector {
  private readonly lines: RangeLine[] = [];
  private readonly keepUnits: number;
  private readonly end: number;
  private decoder = utf8Decoder();
  private line = 0;
  private text = '';
  private chars = 0;
  /** A skipped chunk interrupted the current line: nothing more is added to its text. */
  private gap = false;
  private shownBytes = 0;
  private done = false;

  constructor(
    private readonly offset: number,
    limit: number,
    private readonly maxLineLength: number,
    private readonly maxBytes = Infinity,
  ) {
    // Two UTF-16 units per code point at most, and one more for a pair cut at the end.
    this.keepUnits = 2 * maxLineLength + 1;
    this.end = offset + limit;
  }

  /** Feeds the next chunk; false once every line of the range is complete. */
  push(meta: StoredChunkMeta, bytes: Uint8Array | null): boolean {
    if (this.done) return false;
    if (this.line === 0) this.line = meta.firstLine;
    if (bytes === null) {
      this.chars += codePointCount(this.decoder.decode()) + meta.byteLength;
      this.decoder = utf8Decoder();
      this.gap = true;
      return true;
    }
    const text = this.decoder.decode(bytes, { stream: true });
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1 && !this.done; newline = text.indexOf('\n', start)) {
      this.append(text, start, newline);
      this.endLine();
      start = newline + 1;
    }
    if (!this.done) this.append(text, start, text.length);
    return !this.done;
  }

  /** The collected lines; an unterminated last line of the output counts once its last chunk was pushed. */
  finish(): RangeLine[] {
    if (!this.done) {
      this.append(this.decoder.decode(), 0);
      if (this.text !== '' || this.chars > 0) this.endLine();
    }
    return this.lines;
  }

  private inRange(): boolean {
    return this.line >= this.offset && this.line < this.end;
  }

  private append(text: string, from: number, to = text.length): void {
    if (!this.inRange() || from >= to) return;
    this.chars += codePointCount(text, from, to);
    if (!this.gap && this.text.length < this.keepUnits) {
      this.text += text.slice(from, Math.min(to, from + this.keepUnits - this.text.length));
    }
  }

  private endLine(): void {
    if (this.inRange()) {
      const line: RangeLine = { line: this.line, text: this.text, chars: this.chars };
      this.lines.push(line);
      this.shownBytes += utf8ByteLength(cutLongLine(line.text, this.maxLineLength, line.chars)) + 1;
      if (this.shownBytes >= this.maxBytes) this.done = true;
    }
    this.line++;
    this.text = '';
    this.chars = 0;
    this.gap = false;
    if (this.line >= this.end) this.done = true;
  }
}

/** The lines as a reader shows them: cut at `maxLineLength`, with the cut marker counting the rest. */
export function shownRangeLines(lines: readonly RangeLine[], maxLineLength: number): string[] {
  return lines.map((line) => cutLongLine(line.text, maxLineLength, line.chars));
}
