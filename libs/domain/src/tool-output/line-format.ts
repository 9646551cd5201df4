/** Per-line display: cutting very long lines, and `cat -n` style numbering. */
import { codePointCount, codePointIndex, toDisplayText, utf8ByteLength } from './utf8';

/** Seed 000's `maxLineLength` (and OpenCode's read tool): lines are cut after this many characters. */
export const DEFAULT_MAX_LINE_LENGTH = 2000;

/** Appended to a cut line; says how much of it is missing so the model knows to read it by offset. */
export function lineCutMarker(omittedChars: number): string {
  return `… (line truncated: ${omittedChars} more chars)`;
}

/**
 * Splits a line into what is shown (its first `maxChars` code points) and how
 * many code points are cut. `totalChars` is given when `text` is only the
 * start of a longer line. `maxChars` of 0 or Infinity means no cut.
 */
export function splitLongLine(
  text: string,
  maxChars: number,
  totalChars?: number,
): { kept: string; omittedChars: number } {
  if (!(maxChars > 0 && maxChars < Infinity) || (totalChars === undefined && text.length <= maxChars)) {
    return { kept: text, omittedChars: 0 };
  }
  const end = codePointIndex(text, maxChars);
  const total = totalChars ?? maxChars + codePointCount(text, end);
  if (total <= maxChars) return { kept: text, omittedChars: 0 };
  return { kept: text.slice(0, end), omittedChars: total - maxChars };
}

export function cutLongLine(text: string, maxChars: number, totalChars?: number): string {
  const { kept, omittedChars } = splitLongLine(text, maxChars, totalChars);
  return omittedChars > 0 ? kept + lineCutMarker(omittedChars) : kept;
}

/** `cat -n` numbering: the number right-aligned in 6 columns, a tab, the line. */
export function numberedLine(lineNumber: number, text: string): string {
  return `${String(lineNumber).padStart(6, ' ')}\t${text}`;
}

/**
 * Lines numbered from `startLineNumber`, each cut at `maxLineLength`, as many
 * as fit in `maxBytes` (at least one; newlines between them included).
 */
export function numberedLinesWithin(
  lines: readonly string[],
  startLineNumber: number,
  maxLineLength: number,
  maxBytes: number,
): string[] {
  const rendered: string[] = [];
  let bytes = 0;
  for (const line of lines) {
    const text = toDisplayText(numberedLine(startLineNumber + rendered.length, cutLongLine(line, maxLineLength)));
    const size = utf8ByteLength(text) + 1;
    if (rendered.length > 0 && bytes + size > maxBytes) break;
    rendered.push(text);
    bytes += size;
  }
  return rendered;
}

/** Lines numbered from `startLineNumber`, each cut at `maxLineLength`, made safe for JSON and jsonb. */
export function formatNumberedLines(
  lines: readonly string[],
  startLineNumber: number,
  maxLineLength = DEFAULT_MAX_LINE_LENGTH,
): string {
  return numberedLinesWithin(lines, startLineNumber, maxLineLength, Infinity).join('\n');
}
