/**
 * Small outputs inline (docs/decisions.md, "Small outputs inline"): a tool
 * output the client sends in its append whose in-context view is the whole
 * output, as sent, is kept once, in its event. Its ref (a row with no
 * content, naming the event by its seq) carries the same figures a stored
 * output's does, computed here from the output, so readers cannot tell the
 * two apart. Anything larger, or shown otherwise, goes to the tool-output
 * tables.
 */
import { createHash } from 'node:crypto';
import { invalid } from '../errors';
import type { ToolOutputRef } from '../events';
import { DEFAULT_CHUNK_BYTES } from './chunking';
import type { InContextView } from './in-context-view';
import { countLines, utf8ByteLength } from './utf8';

/**
 * Most bytes an inline output may have: one chunk's. With the view's limits
 * off, every output "fits" its view; this keeps a large one chunked for range
 * reads and keeps event rows, which every window read fetches, small.
 */
export const INLINE_OUTPUT_MAX_BYTES = DEFAULT_CHUNK_BYTES;

export type OutputPlacement = 'inline' | 'stored';

/** Where an output sent with its append is kept, given its view: inline when the view is the output itself and the output is small. */
export function outputPlacement(output: string, view: InContextView): OutputPlacement {
  return !view.truncated && view.view === output && utf8ByteLength(output) <= INLINE_OUTPUT_MAX_BYTES ? 'inline' : 'stored';
}

/** The ref of an inline output: the figures the store would give the same bytes. */
export function inlineOutputRef(refId: string, output: string): ToolOutputRef {
  return { id: refId, byte_size: utf8ByteLength(output), line_count: countLines(output), sha256: createHash('sha256').update(output, 'utf8').digest('hex') };
}

/** A tool result's part as an event's data holds it (an import's, not yet typed). */
interface PartData {
  output?: unknown;
  outputRef?: { id?: unknown; byte_size?: unknown; line_count?: unknown; sha256?: unknown };
  truncated?: unknown;
}

/**
 * Checks a tool result that cites a ref no earlier line of an import gave
 * the bytes of: the result must hold the output inline, whole, with its
 * ref's figures (sha256 included). `path` names the part in the error.
 */
export function assertInlineOutput(part: PartData, path: string): void {
  const ref = part.outputRef;
  const whole =
    typeof part.output === 'string' &&
    part.truncated !== true &&
    typeof ref?.id === 'string' &&
    utf8ByteLength(part.output) <= INLINE_OUTPUT_MAX_BYTES &&
    typeof ref.sha256 === 'string';
  if (!whole) {
    throw invalid('unknown_output_ref', `${path}.outputRef ${JSON.stringify(ref?.id)} is not a tool output given earlier in the import, nor one its result holds whole`);
  }
  const expected = inlineOutputRef(ref.id as string, part.output as string);
  if (ref.byte_size !== expected.byte_size || ref.line_count !== expected.line_count || ref.sha256 !== expected.sha256) {
    throw invalid('output_ref_mismatch', `${path}.outputRef does not match the figures of the output its result holds`);
  }
}

/** An output kept inline, as its event holds it. */
export interface InlineOutput {
  output: string;
  ref: ToolOutputRef;
}

/** The output an event's tool result holds inline under `refId`; undefined when no result of the event cites it with its output whole. */
export function inlineOutputIn(data: unknown, refId: string): InlineOutput | undefined {
  const parts = (data as { message?: { parts?: unknown } } | null)?.message?.parts;
  if (!Array.isArray(parts)) return undefined;
  const part = parts.find((p: PartData & { type?: unknown }) => p?.type === 'tool_result' && p.outputRef?.id === refId && p.truncated !== true);
  return part && typeof part.output === 'string' ? { output: part.output, ref: part.outputRef as ToolOutputRef } : undefined;
}
