/**
 * The in-context view of a tool output (seed 000, 1.6; seed 001's limits;
 * Codex's header and markers): what the model sees in place of an output that
 * is kept whole in the tool-output store.
 *
 * 1. Each line longer than `maxLineLength` characters keeps its start and ends
 *    with `lineCutMarker`.
 * 2. If the result is over `maxMessageBytes` (or the Codex `truncation`
 *    budget, whichever is smaller) or over `maxLines`, only a head (and in
 *    `head_tail` mode a tail) is kept, half of each budget on each side, cut on
 *    code point boundaries, and one Codex marker (`…N tokens truncated…`, or
 *    `…N chars truncated…` under a byte policy) stands for everything between.
 * 3. A truncated view starts with Codex's `Total output lines: N` header and
 *    ends with a note giving the ref id and the two tools that read the rest.
 *
 * With `maxLines`, `maxLineLength` and `maxMessageBytes` at 0 (no limit) and a
 * `truncation` policy, the view is Codex's `formatted_truncate_text` plus the
 * note (exactly so for ASCII; Codex's token count rounds the budget, ours the
 * bytes actually removed).
 *
 * Everything works from `OutputParts` (the first and last bytes plus totals),
 * so a 100 MB output never has to be one string; `viewWindowBytes` says how
 * much of each end is enough.
 */
import {
  TruncationPolicy,
  TruncationUnit,
  approxTokensFromBytes,
  policyByteBudget,
  policyUnit,
  totalLinesHeader,
  truncationMarker,
} from './codex-truncation';
import { DEFAULT_MAX_LINE_LENGTH, lineCutMarker, splitLongLine } from './line-format';
import {
  codePointCount,
  countLines,
  toDisplayText,
  utf8ByteLength,
  utf8PrefixEnd,
  utf8SuffixStart,
} from './utf8';

export type ToolOutputViewMode = 'head' | 'head_tail';

export interface ToolOutputViewConfig {
  /** false: the view is the whole output, uncut (seed 000's switch). */
  enabled: boolean;
  /** Characters (code points) per line before the line is cut; 0 = no per-line cut. */
  maxLineLength: number;
  /** UTF-8 bytes of output kept, line-cut markers included; 0 = no limit. Header, marker and note are extra. */
  maxMessageBytes: number;
  /** Lines of output kept; 0 = no limit. */
  maxLines: number;
  mode: ToolOutputViewMode;
  /** A Codex budget applied on top of the limits; also makes the marker count chars (bytes policy). */
  truncation?: TruncationPolicy;
}

export const DEFAULT_TOOL_OUTPUT_VIEW_CONFIG: Readonly<ToolOutputViewConfig> = Object.freeze({
  enabled: true,
  maxLineLength: DEFAULT_MAX_LINE_LENGTH,
  maxMessageBytes: 50 * 1024,
  maxLines: 2000,
  mode: 'head_tail',
});

/**
 * An output known by its ends. `head` is the decoded start of the output and
 * `tail` its decoded end, disjoint from `head`; `tail` is null when `head` is
 * the whole output. Totals are of the stored bytes (`line_count` counts lines
 * as `countLines` does).
 */
export interface OutputParts {
  head: string;
  tail: string | null;
  totalBytes: number;
  totalLines: number;
  /**
   * Code points of the whole output. Only `…N chars truncated…` (a byte
   * `truncation` policy) needs it; without it the part of the output in
   * neither window counts one char per byte.
   */
  totalChars?: number;
}

export interface InContextView {
  view: string;
  truncated: boolean;
}

const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/** Lines a truncated view adds around the output's own: the header (2), the marker's line, the note (2). */
export const VIEW_OVERHEAD_LINES = 5;

export function resolveViewConfig(config: Partial<ToolOutputViewConfig> = {}): ToolOutputViewConfig {
  const resolved = { ...DEFAULT_TOOL_OUTPUT_VIEW_CONFIG, ...config };
  for (const key of ['maxLineLength', 'maxMessageBytes', 'maxLines'] as const) {
    if (!Number.isInteger(resolved[key]) || resolved[key] < 0) {
      throw new RangeError(`${key} must be a non-negative integer`);
    }
  }
  if (resolved.truncation) policyByteBudget(resolved.truncation);
  return resolved;
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** The closing note of a truncated view: how to get at the rest. */
export function closingNote(refId: string, totalLines: number, totalBytes: number, nextLine: number): string {
  const id = JSON.stringify(refId);
  return (
    `[Output truncated: ${plural(totalLines, 'line')}, ${plural(totalBytes, 'byte')} in total, ` +
    `stored whole under ref_id ${id}. ` +
    `Read it by line with tool_output_cache {"ref_id":${id},"offset":${nextLine},"limit":200} ` +
    `(offset is a 1-based line number) or search it with tool_output_cache_grep ` +
    `{"ref_id":${id},"pattern":"<RE2 regex>"}.]`
  );
}

/** Upper bound of the bytes a truncated view adds to the kept output (header, marker, note). */
export function viewOverheadBytes(refId: string): number {
  const header = totalLinesHeader(MAX_COUNT);
  const marker = truncationMarker('tokens', MAX_COUNT);
  // '\n\n\n': the line after the marker and the blank line before the note.
  return utf8ByteLength(header + marker + '\n\n\n' + closingNote(refId, MAX_COUNT, MAX_COUNT, MAX_COUNT));
}

interface Budgets {
  headBytes: number;
  tailBytes: number;
  headLines: number;
  tailLines: number;
  lineChars: number;
  unit: TruncationUnit;
}

const orUnlimited = (limit: number) => (limit > 0 ? limit : Infinity);

function split(total: number, mode: ToolOutputViewMode): [head: number, tail: number] {
  if (mode === 'head') return [total, 0];
  const head = Math.floor(total / 2);
  return [head, total === Infinity ? Infinity : total - head];
}

/** What the middle marker counts: chars under a byte `truncation` policy, else tokens. */
export function markerUnit(config: Partial<ToolOutputViewConfig>): TruncationUnit {
  return config.truncation ? policyUnit(config.truncation) : 'tokens';
}

function budgetsOf(config: ToolOutputViewConfig): Budgets {
  const policyBytes = config.truncation ? policyByteBudget(config.truncation) : Infinity;
  const [headBytes, tailBytes] = split(Math.min(orUnlimited(config.maxMessageBytes), policyBytes), config.mode);
  const [headLines, tailLines] = split(orUnlimited(config.maxLines), config.mode);
  const lineChars = orUnlimited(config.maxLineLength);
  return { headBytes, tailBytes, headLines, tailLines, lineChars, unit: markerUnit(config) };
}

/**
 * How many bytes of each end of an output `buildInContextViewFromParts` needs
 * (Infinity: the whole output). With these windows the view equals the view of
 * the whole string except around lines longer than `maxLineLength` that cross
 * a window edge, which then show less.
 */
export function viewWindowBytes(config: Partial<ToolOutputViewConfig> = {}): { head: number; tail: number } {
  const resolved = resolveViewConfig(config);
  if (!resolved.enabled) return { head: Infinity, tail: Infinity };
  const b = budgetsOf(resolved);
  const maxLineBytes = 4 * b.lineChars + utf8ByteLength(lineCutMarker(MAX_COUNT)) + 1;
  const window = (lines: number, bytes: number) =>
    lines === 0 || bytes === 0 ? 0 : Math.min(bytes, lines * maxLineBytes);
  const head = window(b.headLines, b.headBytes);
  const tail = window(b.tailLines, b.tailBytes);
  // +3 bytes for a code point split by the window edge; the tail also needs the start of its first line.
  return {
    head: head === 0 ? 0 : head + 3,
    tail: tail === 0 ? 0 : tail + 3 + (b.lineChars === Infinity ? 0 : 4 * b.lineChars + 1),
  };
}

/** One output line as the view may show it. */
interface ViewLine {
  kept: string;
  marker: string;
  eol: string;
  /** The original text this line stands for when shown whole. */
  source: string;
  /** Its start and end are known, so it may be shown whole. */
  whole: boolean;
  /** It has no cut marker, so its end may be shown alone. */
  suffixable: boolean;
}

const display = (line: ViewLine) => line.kept + line.marker + line.eol;

/**
 * `open.end`: the text stops inside its last line (the head of a larger
 * output), whose rest and length are unknown. `open.start`: the text starts
 * inside its first line (a tail), which can only be shown when lines are never
 * cut, since its length is unknown.
 */
function toViewLines(text: string, lineChars: number, open: { start: boolean; end: boolean }): ViewLine[] {
  const segments = text.split('\n');
  if (segments[segments.length - 1] === '') segments.pop();
  return segments.map((content, i) => {
    const eol = i < segments.length - 1 || text.endsWith('\n') ? '\n' : '';
    if (open.end && i === segments.length - 1 && eol === '') {
      const kept = splitLongLine(content, lineChars).kept;
      return { kept, marker: '', eol, source: kept, whole: false, suffixable: false };
    }
    if (open.start && i === 0) {
      const suffixable = lineChars === Infinity;
      return { kept: content, marker: '', eol, source: content + eol, whole: false, suffixable };
    }
    const { kept, omittedChars } = splitLongLine(content, lineChars);
    const marker = omittedChars > 0 ? lineCutMarker(omittedChars) : '';
    return { kept, marker, eol, source: content + eol, whole: true, suffixable: marker === '' };
  });
}

class Coverage {
  bytes = 0;
  chars = 0;
  add(text: string): void {
    this.bytes += utf8ByteLength(text);
    this.chars += codePointCount(text);
  }
}

interface HeadRegion {
  text: string;
  covered: Coverage;
  wholeLines: number;
  stoppedByLines: boolean;
  /** Where the head stopped: line index, and code units of that line's `kept` already shown. */
  next: { index: number; offset: number };
}

function takeHead(lines: ViewLine[], maxBytes: number, maxLines: number): HeadRegion {
  const covered = new Coverage();
  let text = '';
  let bytes = 0;
  for (let index = 0; index < lines.length; index++) {
    if (index === maxLines) {
      return { text, covered, wholeLines: index, stoppedByLines: true, next: { index, offset: 0 } };
    }
    const line = lines[index];
    const shown = display(line);
    const size = utf8ByteLength(shown);
    if (line.whole && bytes + size <= maxBytes) {
      text += shown;
      bytes += size;
      covered.add(line.source);
      continue;
    }
    const end = utf8PrefixEnd(line.kept, maxBytes - bytes);
    text += line.kept.slice(0, end);
    covered.add(line.kept.slice(0, end));
    return { text, covered, wholeLines: index, stoppedByLines: false, next: { index, offset: end } };
  }
  return { text, covered, wholeLines: lines.length, stoppedByLines: false, next: { index: lines.length, offset: 0 } };
}

function takeTail(lines: ViewLine[], maxBytes: number, maxLines: number): { text: string; covered: Coverage } {
  const covered = new Coverage();
  const pieces: string[] = [];
  let bytes = 0;
  for (let index = lines.length - 1; index >= 0 && pieces.length < maxLines; index--) {
    const line = lines[index];
    const shown = display(line);
    const size = utf8ByteLength(shown);
    if (line.whole && bytes + size <= maxBytes) {
      pieces.push(shown);
      bytes += size;
      covered.add(line.source);
      continue;
    }
    if (line.suffixable) {
      const end = shown.slice(utf8SuffixStart(shown, maxBytes - bytes));
      if (end !== '') pieces.push(end);
      covered.add(end);
    }
    break;
  }
  return { text: pieces.reverse().join(''), covered };
}

/** The lines of a whole output the tail may still use once the head has taken its share. */
function restAfterHead(lines: ViewLine[], next: HeadRegion['next']): ViewLine[] {
  const line = lines[next.index];
  if (next.offset === 0 || line === undefined) return lines.slice(next.index);
  const rest = lines.slice(next.index + 1);
  if (!line.suffixable) return rest;
  const kept = line.kept.slice(next.offset);
  return [{ kept, marker: '', eol: line.eol, source: kept + line.eol, whole: false, suffixable: true }, ...rest];
}

function withNote(body: string, refId: string, parts: OutputParts, nextLine: number): string {
  const gap = body.endsWith('\n') ? '\n' : '\n\n';
  const note = closingNote(refId, parts.totalLines, parts.totalBytes, nextLine);
  return totalLinesHeader(parts.totalLines) + body + gap + note;
}

/**
 * The middle marker: it stands for both windows and the unseen middle between
 * them, less what the head and tail show.
 */
function middleMarker(unit: TruncationUnit, parts: OutputParts, windows: string, shown: Coverage[]): string {
  const unseenBytes =
    parts.tail === null ? 0 : Math.max(0, parts.totalBytes - utf8ByteLength(parts.head) - utf8ByteLength(parts.tail));
  const shownOf = (measure: 'bytes' | 'chars') => shown.reduce((sum, coverage) => sum + coverage[measure], 0);
  if (unit === 'tokens') {
    return truncationMarker(unit, approxTokensFromBytes(utf8ByteLength(windows) + unseenBytes - shownOf('bytes')));
  }
  return truncationMarker(unit, (parts.totalChars ?? codePointCount(windows) + unseenBytes) - shownOf('chars'));
}

export function buildInContextViewFromParts(
  parts: OutputParts,
  refId: string,
  config: Partial<ToolOutputViewConfig> = {},
): InContextView {
  const resolved = resolveViewConfig(config);
  const complete = parts.tail === null;
  const head = toDisplayText(parts.head);
  if (!resolved.enabled) {
    if (!complete) throw new RangeError('a disabled view shows the whole output: pass it as head with tail null');
    return { view: head, truncated: false };
  }
  const b = budgetsOf(resolved);
  const headLines = toViewLines(head, b.lineChars, { start: false, end: !complete });

  if (complete) {
    const linesCut = headLines.some((line) => line.marker !== '');
    const body = linesCut ? headLines.map(display).join('') : head;
    const fits = utf8ByteLength(body) <= b.headBytes + b.tailBytes && headLines.length <= b.headLines + b.tailLines;
    if (fits && !linesCut) return { view: head, truncated: false };
    if (fits) return { view: withNote(body, refId, parts, 1), truncated: true };
  }

  const tail = parts.tail === null ? '' : toDisplayText(parts.tail);
  const headRegion = takeHead(headLines, b.headBytes, b.headLines);
  const tailLines = complete
    ? restAfterHead(headLines, headRegion.next)
    : toViewLines(tail, b.lineChars, { start: true, end: false });
  const tailRegion = takeTail(tailLines, b.tailBytes, b.tailLines);
  const marker = middleMarker(b.unit, parts, head + tail, [headRegion.covered, tailRegion.covered]);

  // A head cut by maxLines ends a line, so the marker gets a line of its own.
  const gap = headRegion.stoppedByLines && tailRegion.text !== '' ? '\n' : '';
  const body = headRegion.text + marker + gap + tailRegion.text;
  return { view: withNote(body, refId, parts, headRegion.wholeLines + 1), truncated: true };
}

/** The view of a whole output string; reads only its ends (`viewWindowBytes`) beyond counting bytes and lines. */
export function buildInContextView(
  fullText: string,
  refId: string,
  config: Partial<ToolOutputViewConfig> = {},
): InContextView {
  const windows = viewWindowBytes(config);
  const totalBytes = utf8ByteLength(fullText);
  const totalLines = countLines(fullText);
  if (totalBytes <= windows.head + windows.tail) {
    return buildInContextViewFromParts({ head: fullText, tail: null, totalBytes, totalLines }, refId, config);
  }
  const parts: OutputParts = {
    head: fullText.slice(0, utf8PrefixEnd(fullText, windows.head)),
    tail: fullText.slice(utf8SuffixStart(fullText, windows.tail)),
    totalBytes,
    totalLines,
    totalChars: markerUnit(config) === 'chars' ? codePointCount(fullText) : undefined,
  };
  return buildInContextViewFromParts(parts, refId, config);
}
