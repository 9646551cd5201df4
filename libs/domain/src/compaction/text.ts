/** Text helpers of the compaction code; pure and linear in the input. */

/** Text parts of a message joined by a newline (Codex's content_items_to_text), '' when none. */
export function joinText(parts: readonly { type: string; text?: string }[]): string {
  return parts
    .filter((part) => part.type === 'text' && part.text)
    .map((part) => part.text)
    .join('\n');
}

/** The first non-blank line, clipped to `max` code points with an ellipsis. */
export function firstLine(text: string, max: number): string {
  const line = text.split('\n').find((l) => l.trim().length > 0)?.trim() ?? '';
  return clipLine(line, max);
}

export function clipLine(text: string, max: number): string {
  const codePoints = Array.from(text.replace(/\s+/g, ' ').trim());
  return codePoints.length <= max ? codePoints.join('') : `${codePoints.slice(0, max - 1).join('')}…`;
}
