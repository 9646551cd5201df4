/**
 * UTF-8 measurements on JS strings. Budgets are in UTF-8 bytes (what is
 * stored and sent), while JS strings are UTF-16, so cuts are computed here
 * once and never split a code point. A lone surrogate counts as 3 bytes, the
 * size of the U+FFFD it encodes to.
 */

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** UTF-8 size of the code point whose last unit is at `index`, and how many units it spans. */
function codePointBefore(text: string, index: number): [bytes: number, units: number] {
  const unit = text.charCodeAt(index);
  if (unit < 0x80) return [1, 1];
  if (unit < 0x800) return [2, 1];
  if (isLowSurrogate(unit) && index > 0 && isHighSurrogate(text.charCodeAt(index - 1))) return [4, 2];
  return [3, 1];
}

function codePointAt(text: string, index: number): [bytes: number, units: number] {
  const unit = text.charCodeAt(index);
  if (unit < 0x80) return [1, 1];
  if (unit < 0x800) return [2, 1];
  if (isHighSurrogate(unit) && isLowSurrogate(text.charCodeAt(index + 1))) return [4, 2];
  return [3, 1];
}

/** All ASCII (one byte a unit): its native byte count equals its length. */
const isAscii = (text: string) => utf8ByteLength(text) === text.length;

/** End index of the longest prefix of `text` that fits in `maxBytes` UTF-8 bytes. */
export function utf8PrefixEnd(text: string, maxBytes: number): number {
  // Tool output is mostly ASCII: one native count instead of a loop per code unit.
  const candidate = Math.min(text.length, Math.max(0, maxBytes));
  if (isAscii(text.slice(0, candidate))) return candidate;
  let bytes = 0;
  let index = 0;
  while (index < text.length) {
    const [size, units] = codePointAt(text, index);
    if (bytes + size > maxBytes) break;
    bytes += size;
    index += units;
  }
  return index;
}

/** Start index of the longest suffix of `text` that fits in `maxBytes` UTF-8 bytes. */
export function utf8SuffixStart(text: string, maxBytes: number): number {
  const candidate = Math.max(0, text.length - Math.max(0, maxBytes));
  if (isAscii(text.slice(candidate))) return candidate;
  let bytes = 0;
  let index = text.length;
  while (index > 0) {
    const [size, units] = codePointBefore(text, index - 1);
    if (bytes + size > maxBytes) break;
    bytes += size;
    index -= units;
  }
  return index;
}

/** Code points in `text[start, end)` (Rust's `chars().count()`). */
export function codePointCount(text: string, start = 0, end = text.length): number {
  let count = 0;
  for (let index = start; index < end; index++) {
    if (!(isLowSurrogate(text.charCodeAt(index)) && index > start && isHighSurrogate(text.charCodeAt(index - 1)))) {
      count++;
    }
  }
  return count;
}

/** Index just after the first `maxChars` code points of `text` (or its length). */
export function codePointIndex(text: string, maxChars: number): number {
  let index = 0;
  for (let chars = 0; chars < maxChars && index < text.length; chars++) {
    index += codePointAt(text, index)[1];
  }
  return index;
}

const UNSAFE_CHARS = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text that is safe to put in an event or a model request. NUL becomes U+FFFD
 * rather than a `\u0000` escape: PostgreSQL jsonb rejects NUL, and one code
 * point for one code point keeps line and character counts equal to the
 * stored bytes' (invalid UTF-8 was already decoded to U+FFFD the same way).
 * Lone surrogates (possible in a JS string, never in UTF-8) get the same.
 */
export function toDisplayText(text: string): string {
  return text.replace(UNSAFE_CHARS, '\uFFFD');
}

/**
 * Lines as Rust's `str::lines().count()` sees them, which is what Codex's
 * `Total output lines` header reports: a trailing newline does not start a
 * new line and the empty string has none.
 */
export function countLines(text: string): number {
  let newlines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) newlines++;
  return text.length > 0 && !text.endsWith('\n') ? newlines + 1 : newlines;
}

/** Newline bytes in `bytes`; with the last byte, this gives `countLines` for raw bytes. */
export function countNewlines(bytes: Uint8Array): number {
  let newlines = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) newlines++;
  return newlines;
}

/** Code points in UTF-8 `bytes` (each invalid byte counting as the U+FFFD it decodes to, near enough). */
export function countUtf8Chars(bytes: Uint8Array): number {
  let chars = 0;
  for (let i = 0; i < bytes.length; i++) if ((bytes[i] & 0xc0) !== 0x80) chars++;
  return chars;
}

/** BOMs are content here (outputs are stored byte-exact), so the decoder must not strip them. */
export function utf8Decoder() {
  return new TextDecoder('utf-8', { ignoreBOM: true });
}

/** Decodes the start of an output, dropping a code point the cut left incomplete. */
export function decodeUtf8Head(bytes: Uint8Array): string {
  return utf8Decoder().decode(bytes, { stream: true });
}

/** Decodes the end of an output, skipping the continuation bytes of a code point the cut split. */
export function decodeUtf8Tail(bytes: Uint8Array): string {
  let start = 0;
  while (start < Math.min(3, bytes.length) && (bytes[start] & 0xc0) === 0x80) start++;
  return utf8Decoder().decode(bytes.subarray(start));
}
