/** Texts the model sees in place of content the service hid. One place, so views and tests agree. */

/** A tool result hidden by the prune job (OpenCode's text plus our ref). */
export function prunedPlaceholder(refId?: string): string {
  return refId ? `[Old tool result content cleared; ref=${refId}]` : '[Old tool result content cleared]';
}

/** A tool result hidden by the view-time budget trim (seed 000, 1.7). */
export function trimmedPlaceholder(refId?: string): string {
  return refId ? `[tool output trimmed; ref=${refId}]` : '[tool output trimmed]';
}

/** The synthetic result for a call that was never answered (Codex's normalization). */
export const ABORTED_TOOL_RESULT = 'aborted';

/** Metadata kind of the synthetic user message after an automatic compaction. */
export const AUTO_CONTINUE_KIND = 'auto_continue';

/** OpenCode's auto-continue text after an automatic compaction. */
export const AUTO_CONTINUE_TEXT =
  'Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.';

/** Replaces a tool call's input when Anthropic-style `clear_tool_inputs` pruned it. */
export const CLEARED_TOOL_INPUT: Readonly<Record<string, string>> = { note: '[Old tool input cleared]' };
