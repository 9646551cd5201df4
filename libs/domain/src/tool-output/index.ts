/**
 * Tool-output cache, pure part: Codex-compatible truncation, the in-context
 * view, the chunked line index, grep, and the model-callable tools.
 */
export type { TruncationPolicy, TruncationUnit } from './codex-truncation';
export {
  CODEX_TRUNCATION_POLICY,
  approxTokensFromBytes,
  formattedTruncateText,
  policyByteBudget,
  truncateText,
  truncationMarker,
} from './codex-truncation';

export type { InContextView, OutputParts, ToolOutputViewConfig, ToolOutputViewMode } from './in-context-view';
export {
  DEFAULT_TOOL_OUTPUT_VIEW_CONFIG,
  VIEW_OVERHEAD_LINES,
  buildInContextView,
  buildInContextViewFromParts,
  closingNote,
  markerUnit,
  resolveViewConfig,
  viewOverheadBytes,
  viewWindowBytes,
} from './in-context-view';

export type { OutputByteParts } from './view-parts';
export { ViewPartsCollector, decodeOutputParts } from './view-parts';

export { DEFAULT_MAX_LINE_LENGTH, cutLongLine, formatNumberedLines, lineCutMarker, numberedLinesWithin } from './line-format';

export type { ChunkMeta, ChunkingOptions, OutputChunk } from './chunking';
export {
  ChunkSplitter,
  DEFAULT_CHUNK_BYTES,
  DEFAULT_CHUNK_MAX_LINES,
  chunksForLineRange,
  linesInRange,
  splitIntoChunks,
} from './chunking';

export type {
  CompiledGrepPattern,
  GrepLine,
  GrepMatch,
  GrepOptions,
  GrepPatternOptions,
  GrepResult,
  GrepStopReason,
} from './grep';
export {
  DEFAULT_GREP_LIMIT,
  DEFAULT_MAX_PATTERN_LENGTH,
  DEFAULT_MAX_SCAN_BYTES,
  DEFAULT_WINDOW_CHARS,
  GrepScanner,
  compileGrepPattern,
  grepText,
} from './grep';

export type { GrepCommand, ReadCommand, ToolDefinition, ToolFormat, ToolOutputCommand } from './tools';
export {
  GREP_MAX_CONTEXT,
  GREP_MAX_LIMIT,
  READ_DEFAULT_LIMIT,
  READ_MAX_LIMIT,
  TOOL_FORMATS,
  TOOL_OUTPUT_GREP_TOOL,
  TOOL_OUTPUT_READ_TOOL,
  TOOL_OUTPUT_TOOLS,
  parseToolOutputCall,
  renderToolDefinition,
  renderToolOutputTools,
} from './tools';

export { viewConfigOfSettings } from './settings';

export type { RangeLine, StoredChunkMeta } from './range-read';
export { LineRangeCollector, chunksNeedingBytes, shownRangeLines } from './range-read';

export type { GrepTextOptions, ReadPage, ResultTextOptions } from './result-text';
export { DEFAULT_RESULT_MAX_BYTES, formatGrepResultText, formatReadResultText } from './result-text';

export { countLines, decodeUtf8Head, decodeUtf8Tail, toDisplayText, utf8ByteLength } from './utf8';

export type { OutputPiece, OutputSlice, StoredOutput, StoredToolResultPart } from './stored-output';
export { restoreStoredOutputs, restoredEventJson, sliceTexts, storedEventOf, storedOutputOf, storedOutputSlices } from './stored-output';

export type { InlineOutput, OutputPlacement } from './inline-output';
export { INLINE_OUTPUT_MAX_BYTES, assertInlineOutput, inlineOutputIn, inlineOutputRef, outputPlacement } from './inline-output';
