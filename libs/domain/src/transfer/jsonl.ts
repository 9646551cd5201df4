import { DomainError, invalid } from '../errors';
import { assertSafeJson } from '../json-inspection';

/** An error about line `line` of an import: the same code, the line named in the message and details. */
export function atLine(line: number, error: unknown): unknown {
  if (!(error instanceof DomainError) || error.details.line !== undefined) return error;
  return new DomainError(error.kind, error.code, `line ${line}: ${error.message}`, { ...error.details, line });
}

/**
 * Splits a byte stream into JSON Lines: `\n` ends a line (a `\r` before it
 * is dropped), blank lines are skipped but counted, a last line without its
 * newline still counts. A line longer than `maxLineBytes` is refused as soon
 * as it is, so one endless line cannot fill memory.
 */
export class LineSplitter {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private lineNumber = 0;

  constructor(private readonly maxLineBytes: number) {}

  push(piece: Uint8Array): Array<{ line: number; bytes: Uint8Array }> {
    const lines: Array<{ line: number; bytes: Uint8Array }> = [];
    let start = 0;
    for (let nl = piece.indexOf(10); nl >= 0; nl = piece.indexOf(10, start)) {
      this.take(piece.subarray(start, nl));
      this.emit(lines);
      start = nl + 1;
    }
    this.take(piece.subarray(start));
    return lines;
  }

  end(): Array<{ line: number; bytes: Uint8Array }> {
    const lines: Array<{ line: number; bytes: Uint8Array }> = [];
    if (this.pendingBytes > 0) this.emit(lines);
    return lines;
  }

  private take(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.pendingBytes + bytes.length > this.maxLineBytes) {
      throw invalid('line_too_long', `line ${this.lineNumber + 1} is longer than ${this.maxLineBytes} bytes`, {
        line: this.lineNumber + 1,
        maxBytes: this.maxLineBytes,
      });
    }
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
  }

  private emit(into: Array<{ line: number; bytes: Uint8Array }>): void {
    this.lineNumber++;
    let bytes = this.pending.length === 1 ? this.pending[0] : concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 13) bytes = bytes.subarray(0, bytes.length - 1);
    if (bytes.length > 0) into.push({ line: this.lineNumber, bytes });
  }
}

function concat(parts: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One line as JSON: valid UTF-8, valid JSON, then the same safety pass as request bodies (depth, NUL, lone surrogates, `__proto__`). */
export function parseJsonLine(bytes: Uint8Array, line: number, maxDepth: number): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalid('invalid_utf8', `line ${line} is not valid UTF-8`, { line });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('invalid_json', `line ${line} is not a JSON value (cut short?)`, { line });
  }
  try {
    assertSafeJson(value, { maxDepth });
  } catch (error) {
    throw atLine(line, error);
  }
  return value;
}
