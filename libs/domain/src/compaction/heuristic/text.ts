/** Text helpers of the compaction code; pure and linear in the input. */

/** Text parts of a message joined by a newline (Codex's content_items_to_text), '' when none. */
export function joinText(parts: readonly { type: string; text?: string }[]): string {
  return parts
    .filter((part) => part.type === 'text' && part.text)
    .map((part) => part.text)
    .join('\n');
}
