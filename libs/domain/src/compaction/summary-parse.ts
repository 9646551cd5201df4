/**
 * One parser for every summarizer's reply (LLM or heuristic): `<summary>` and
 * `<retain>` blocks, or the whole text when the model wrote no tags.
 */
import { estimateTokens } from '../tokens/chars';

export interface ParsedSummary {
  summary: string;
  retain: string | null;
  /** Estimated size of summary and retain together. */
  tokens: number;
}

export interface SummaryError {
  code: 'empty' | 'oversized';
  message: string;
  tokens: number;
  limit: number;
}

export type SummaryParseResult = { ok: true; value: ParsedSummary } | { ok: false; error: SummaryError };

interface Block {
  content: string;
  start: number;
  end: number;
}

/**
 * The last `<tag>…</tag>` block (the answer follows any thinking aloud); an
 * opening tag the reply was cut off after runs to the end. Linear scans, no
 * regex over model output.
 */
function lastBlock(text: string, tag: string): Block | null {
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  const closeAt = text.lastIndexOf(close);
  const openAt = closeAt === -1 ? text.lastIndexOf(open) : text.lastIndexOf(open, closeAt);
  if (openAt === -1) return null;
  const end = closeAt > openAt ? closeAt : text.length;
  const after = closeAt > openAt ? closeAt + close.length : text.length;
  return { content: text.slice(openAt + open.length, end).trim(), start: openAt, end: after };
}

/** Parses and validates: non-empty, and within `maxTokens` (the config's summaryMaxTokens). */
export function parseSummaryResponse(text: string, maxTokens: number): SummaryParseResult {
  const retainBlock = lastBlock(text, 'retain');
  const summaryBlock = lastBlock(text, 'summary');
  const summary =
    summaryBlock?.content ??
    (retainBlock ? text.slice(0, retainBlock.start) + text.slice(retainBlock.end) : text).trim();
  const retain = retainBlock?.content || null;
  const tokens = estimateTokens(summary) + estimateTokens(retain ?? '');
  if (!summary) {
    return { ok: false, error: { code: 'empty', message: 'the summarizer returned no summary', tokens, limit: maxTokens } };
  }
  if (tokens > maxTokens) {
    const message = `the summary is ${tokens} tokens, above the ${maxTokens}-token target`;
    return { ok: false, error: { code: 'oversized', message, tokens, limit: maxTokens } };
  }
  return { ok: true, value: { summary, retain, tokens } };
}
