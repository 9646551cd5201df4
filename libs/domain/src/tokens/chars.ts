/**
 * Part-level token estimate when no tokenizer is known: ceil(chars / 4), the
 * rule the model view uses too, so "tokens freed" matches what the view drops.
 * Chars are UTF-16 code units (String#length).
 */
export function estimateTokens(text: string): number {
  return tokensOfChars(text.length);
}

/** The same estimate from a character count (a length read from SQL). */
export const tokensOfChars = (chars: number) => Math.ceil(chars / 4);

/** A tool call's input as the model reads it (JSON); '' when absent. */
export function inputText(input: unknown): string {
  return JSON.stringify(input) ?? '';
}

/**
 * OpenCode's estimate (packages/opencode/src/util/token.ts, `Token.estimate`):
 * `Math.max(0, Math.round((input || "").length / 4))`, rounded to nearest,
 * not up. The OpenCode prune counts with it.
 */
export function opencodeEstimateTokens(text: string): number {
  return Math.max(0, Math.round(text.length / 4));
}
