const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;

/** Code points: a surrogate pair is one. */
function runeCount(text: string): number {
  return text.length - (text.match(SURROGATE_PAIR)?.length ?? 0);
}

const truncationMarker = (omitted: number) => `…${omitted} chars truncated…`;

/**
 * Keeps at most `maxRunes` code points (never splitting a surrogate pair),
 * marker included: two thirds head, one third tail, as seed 001's head-tail
 * clip. Below the marker's own length only the head is kept.
 */
export function clipRunes(text: string, maxRunes: number): string {
  // UTF-16 length bounds the code point count: most texts return here without splitting.
  if (text.length <= maxRunes) return text;
  const runes = Array.from(text);
  if (runes.length <= maxRunes) return text;
  // The marker for the largest possible count is at least as long as the real one.
  const kept = maxRunes - truncationMarker(runes.length).length;
  if (kept <= 0) return runes.slice(0, Math.max(0, maxRunes)).join('');
  const head = Math.ceil((kept * 2) / 3);
  const tail = kept - head;
  return (
    runes.slice(0, head).join('') + truncationMarker(runes.length - kept) + runes.slice(runes.length - tail).join('')
  );
}

/**
 * Joins `blocks` within `maxRunes`: short blocks keep everything, the long
 * ones share what is left equally (water-filling), so one huge output cannot
 * crowd the others out.
 */
export function clipEach(blocks: readonly string[], maxRunes: number, separator: string): string {
  const lengths = blocks.map(runeCount);
  const budget = Math.max(0, maxRunes - runeCount(separator) * (blocks.length - 1));
  const shares: number[] = [];
  let left = budget;
  const shortestFirst = lengths.map((_, i) => i).sort((a, b) => lengths[a] - lengths[b]);
  shortestFirst.forEach((i, rank) => {
    shares[i] = Math.min(lengths[i], Math.floor(left / (blocks.length - rank)));
    left -= shares[i];
  });
  return blocks.map((block, i) => clipRunes(block, shares[i])).join(separator);
}
