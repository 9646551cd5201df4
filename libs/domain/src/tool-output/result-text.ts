/** The text a model gets back from `tool_output_cache` and `tool_output_cache_grep`. */
import { GrepLine, GrepResult } from './grep';
import { DEFAULT_MAX_LINE_LENGTH, numberedLinesWithin } from './line-format';
import { toDisplayText, utf8ByteLength } from './utf8';

/** Like OpenCode's read tool: one result never puts more than about 50 KB in the context. */
export const DEFAULT_RESULT_MAX_BYTES = 50 * 1024;

export interface ResultTextOptions {
  maxLineLength?: number;
  maxBytes?: number;
}

/** Lines of a stored output starting at line `offset` (1-based), as the store read them. */
export interface ReadPage {
  offset: number;
  lines: readonly string[];
  totalLines: number;
}

/**
 * Numbered lines and a footer with the next offset. Fewer lines than the page
 * holds are shown when they would pass `maxBytes`; `nextOffset` follows what
 * was shown, and is null at the end of the output.
 */
export function formatReadResultText(
  page: ReadPage,
  options: ResultTextOptions = {},
): { text: string; nextOffset: number | null } {
  if (page.totalLines === 0) return { text: '(the output is empty)', nextOffset: null };
  if (page.lines.length === 0) {
    return { text: `(no lines at offset ${page.offset}: the output has ${page.totalLines} lines)`, nextOffset: null };
  }
  const rendered = numberedLinesWithin(
    page.lines,
    page.offset,
    options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH,
    options.maxBytes ?? DEFAULT_RESULT_MAX_BYTES,
  );
  const last = page.offset + rendered.length - 1;
  const nextOffset = last < page.totalLines ? last + 1 : null;
  const where = nextOffset === null ? 'end of output' : `next offset ${nextOffset}`;
  return {
    text: `${rendered.join('\n')}\n\n(showing lines ${page.offset}-${last} of ${page.totalLines}; ${where})`,
    nextOffset,
  };
}

export interface GrepTextOptions {
  pattern: string;
  ignoreCase?: boolean;
  maxBytes?: number;
}

const grepLine = (line: GrepLine, separator: ':' | '-') => `${line.line}${separator}${line.text}`;
const matchCount = (count: number) => `${count} match${count === 1 ? '' : 'es'}`;

/** The closing note: what was searched, and whether the result is partial. */
function summary(result: GrepResult, shownPattern: string): string {
  const found = matchCount(result.matches.length);
  const scanned = `${result.scannedLines} lines, ${result.scannedBytes} bytes`;
  switch (result.partial?.reason) {
    case undefined:
      return `(${found} for ${shownPattern} in ${result.scannedLines} lines)`;
    case 'matches':
      return `(showing the first ${found} for ${shownPattern}; there are more: narrow the pattern or raise limit)`;
    case 'time':
      return `(search stopped at its time limit after ${scanned}; ${found} so far, results are partial)`;
    case 'bytes':
      return `(search stopped at its scan limit after ${scanned}; ${found} so far, results are partial)`;
  }
}

/**
 * grep -n -C style: `line:text` for matches, `line-text` for context, `--`
 * between groups that are not adjacent; then notes on anything partial.
 * Matches stop being added once `maxBytes` is reached (at least one is shown).
 */
export function formatGrepResultText(result: GrepResult, options: GrepTextOptions): string {
  const maxBytes = options.maxBytes ?? DEFAULT_RESULT_MAX_BYTES;
  const body: string[] = [];
  const notes: string[] = [];
  let bytes = 0;
  let lastLine = 0;
  for (const [shown, match] of result.matches.entries()) {
    const group = [
      ...match.before.map((line) => grepLine(line, '-')),
      grepLine(match, ':'),
      ...match.after.map((line) => grepLine(line, '-')),
    ];
    if (shown > 0 && (match.before[0]?.line ?? match.line) > lastLine + 1) group.unshift('--');
    const size = utf8ByteLength(group.join('\n')) + 1;
    if (shown > 0 && bytes + size > maxBytes) {
      const of = matchCount(result.matches.length);
      notes.push(`(output cut at ${maxBytes} bytes: ${shown} of ${of} shown; lower limit or context)`);
      break;
    }
    body.push(...group);
    bytes += size;
    lastLine = match.after[match.after.length - 1]?.line ?? match.line;
  }
  notes.push(summary(result, `/${options.pattern}/${options.ignoreCase ? 'i' : ''}`));
  if (result.longLines > 0) {
    const lines = `${result.longLines} very long line${result.longLines === 1 ? ' was' : 's were'}`;
    notes.push(`(${lines} searched in overlapping windows: matches longer than 1024 characters can be missed there)`);
  }
  return toDisplayText(body.length === 0 ? notes.join('\n') : `${body.join('\n')}\n\n${notes.join('\n')}`);
}
