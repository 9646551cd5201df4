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

/**
 * clipEach when every block can keep at least `minRunes`; otherwise only the
 * newest blocks that can, after `omitted(count of the older ones)`. Without
 * this, hundreds of blocks left each a share of zero runes, and their
 * separators alone overran the limit.
 */
export function clipNewest(
  blocks: readonly string[],
  maxRunes: number,
  separator: string,
  minRunes: number,
  omitted: (count: number) => string,
): string {
  const sep = runeCount(separator);
  const whole = blocks.reduce((sum, block) => sum + runeCount(block), 0) + sep * Math.max(0, blocks.length - 1);
  if (whole <= maxRunes || blocks.length * (minRunes + sep) <= maxRunes + sep) return clipEach(blocks, maxRunes, separator);
  // The note's length grows with the count it reports, so shrink until note and blocks fit.
  for (let kept = Math.floor((maxRunes + sep) / (minRunes + sep)); kept > 0; kept--) {
    const note = omitted(blocks.length - kept);
    const room = maxRunes - runeCount(note) - sep;
    if (kept * (minRunes + sep) - sep <= room) return note + separator + clipEach(blocks.slice(-kept), room, separator);
  }
  return clipRunes(omitted(blocks.length), maxRunes);
}
