/**
 * Codex's write-time truncation (openai/codex, codex-rs/core/src/truncate.rs:
 * `truncate_text`, `formatted_truncate_text`), reproduced byte for byte:
 * keep the head and the tail, half of the budget each, cut on code point
 * boundaries, and say in a marker how much of the middle went.
 */
import { codePointCount, countLines, utf8ByteLength, utf8PrefixEnd, utf8SuffixStart } from './utf8';

/** Codex's `TruncationPolicy`: a budget in bytes, or in tokens approximated as 4 bytes each. */
export type TruncationPolicy = { bytes: number } | { tokens: number };

/** What a marker counts: Codex says chars for a byte budget and tokens for a token budget. */
export type TruncationUnit = 'chars' | 'tokens';

/** Codex's preset for recent model families. */
export const CODEX_TRUNCATION_POLICY: TruncationPolicy = { tokens: 10_000 };

const APPROX_BYTES_PER_TOKEN = 4;

export function approxTokensFromBytes(bytes: number): number {
  return Math.ceil(bytes / APPROX_BYTES_PER_TOKEN);
}

export function policyByteBudget(policy: TruncationPolicy): number {
  const budget = 'bytes' in policy ? policy.bytes : policy.tokens * APPROX_BYTES_PER_TOKEN;
  if (!Number.isInteger(budget) || budget < 0) throw new RangeError('truncation budget must be a non-negative integer');
  return budget;
}

export function policyUnit(policy: TruncationPolicy): TruncationUnit {
  return 'bytes' in policy ? 'chars' : 'tokens';
}

export function truncationMarker(unit: TruncationUnit, removed: number): string {
  return `…${removed} ${unit} truncated…`;
}

export function totalLinesHeader(totalLines: number): string {
  return `Total output lines: ${totalLines}\n\n`;
}

/**
 * Codex's `split_string`: the longest prefix within `headBytes` and the
 * longest suffix within `tailBytes`, as indices, never overlapping.
 */
export function splitHeadTail(
  text: string,
  headBytes: number,
  tailBytes: number,
): { headEnd: number; tailStart: number } {
  const headEnd = utf8PrefixEnd(text, headBytes);
  return { headEnd, tailStart: Math.max(headEnd, utf8SuffixStart(text, tailBytes)) };
}

export function truncateText(text: string, policy: TruncationPolicy): string {
  if (text === '') return '';
  const maxBytes = policyByteBudget(policy);
  const unit = policyUnit(policy);
  const totalBytes = utf8ByteLength(text);
  if (maxBytes === 0) {
    return truncationMarker(unit, unit === 'tokens' ? approxTokensFromBytes(totalBytes) : codePointCount(text));
  }
  if (totalBytes <= maxBytes) return text;
  const headBytes = Math.floor(maxBytes / 2);
  const { headEnd, tailStart } = splitHeadTail(text, headBytes, maxBytes - headBytes);
  // Codex counts removed tokens from the budget, not from the cut (they differ only around multi-byte code points).
  const removed =
    unit === 'tokens' ? approxTokensFromBytes(totalBytes - maxBytes) : codePointCount(text, headEnd, tailStart);
  return text.slice(0, headEnd) + truncationMarker(unit, removed) + text.slice(tailStart);
}

export function formattedTruncateText(text: string, policy: TruncationPolicy): string {
  if (utf8ByteLength(text) <= policyByteBudget(policy)) return text;
  return totalLinesHeader(countLines(text)) + truncateText(text, policy);
}
