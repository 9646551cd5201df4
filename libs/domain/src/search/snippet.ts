import type { SearchQuery } from './query';
import { tokenize } from './text';

/**
 * A passage of a hit's text with the matched terms marked: plain text and
 * [start, end) ranges in UTF-16 code units (JavaScript string indexes), so a
 * UI renders it as text with no markup to escape.
 */
export interface Snippet {
  text: string;
  highlights: Array<[number, number]>;
}

/** Characters of text a snippet shows at most (plus an ellipsis at a cut end). */
export const SNIPPET_LENGTH = 240;
/** Characters kept before the first highlight of the window, for context. */
const LEAD = 60;
const ELLIPSIS = '…';

const JOINERS = /[_./\\:-]/;

/** The ranges of `text` that match the query's terms, merged, in order. */
export function highlightRanges(text: string, query: Pick<SearchQuery, 'terms' | 'prefixes'>): Array<[number, number]> {
  const exact = new Set(query.terms);
  const ranges: Array<[number, number]> = [];
  for (const token of tokenize(text)) {
    let end: number | undefined;
    if (exact.has(token.term)) end = token.end;
    else if (query.prefixes.some((p) => token.term.startsWith(p))) {
      // A lone character of an unspaced script asks for the bigrams it starts: only that character is marked.
      end = token.kind === 'bigram' ? token.start + [...text.slice(token.start, token.end)][0].length : token.end;
    }
    if (end === undefined) continue;
    const last = ranges[ranges.length - 1];
    // Parts of one identifier or path (`ERR_OSSL`, `refund.ts`) make one range.
    if (last && (token.start <= last[1] || (token.start === last[1] + 1 && JOINERS.test(text[last[1]])))) last[1] = Math.max(last[1], end);
    else ranges.push([token.start, end]);
  }
  return ranges;
}

/** Moves an index off the second half of a surrogate pair. */
const onCodePoint = (text: string, index: number) => (index > 0 && index < text.length && /[\uDC00-\uDFFF]/.test(text[index]) ? index - 1 : index);

/**
 * The window of `text` holding the most highlights (the earliest such),
 * starting a little before its first one.
 */
export function snippetOf(text: string, query: Pick<SearchQuery, 'terms' | 'prefixes'>): Snippet {
  const ranges = highlightRanges(text, query);
  let best = 0;
  let bestCount = 0;
  for (let i = 0; i < ranges.length; i++) {
    const count = ranges.filter(([s, e]) => s >= ranges[i][0] && e <= ranges[i][0] + SNIPPET_LENGTH - LEAD).length;
    if (count > bestCount) [best, bestCount] = [i, count];
  }
  const anchor = ranges.length > 0 ? ranges[best][0] : 0;
  const start = onCodePoint(text, Math.max(0, Math.min(anchor - LEAD, text.length - SNIPPET_LENGTH)));
  const end = onCodePoint(text, Math.min(text.length, start + SNIPPET_LENGTH));
  const lead = start > 0 ? ELLIPSIS : '';
  const shift = lead.length - start;
  const highlights = ranges
    .filter(([s, e]) => s >= start && e <= end)
    .map(([s, e]): [number, number] => [s + shift, e + shift]);
  return { text: lead + text.slice(start, end) + (end < text.length ? ELLIPSIS : ''), highlights };
}
