/**
 * Search terms of a text, the same for what is indexed and what is asked,
 * with no language configuration: words are maximal runs of letters, digits
 * and marks in any script, case-folded (NFKC, lower case), so identifiers
 * and paths split at `_ . / - :` into parts that follow each other
 * (`src/payments/refund.ts` is src, payments, refund, ts at consecutive
 * positions, and a query for the path is a phrase of them). Scripts written
 * without spaces (Han, kana, Thai, Lao, Khmer, Myanmar) have no word
 * boundaries a tokenizer could find without a dictionary: their runs become
 * overlapping character bigrams, and the run's last character once more on
 * its own, so every substring of two or more characters is a phrase of
 * bigrams and a single character is the prefix of one.
 */

/** A term of the text, where it is (UTF-16 offsets) and its position (1-based, as in a tsvector). */
export interface Token {
  term: string;
  start: number;
  end: number;
  position: number;
  /**
   * `word`; in an unspaced script, `bigram` (two characters), `tail` (the
   * last character of a longer run, on its own) or `single` (a run of one).
   */
  kind: 'word' | 'bigram' | 'tail' | 'single';
}

/** Characters of scripts written without spaces, plus the marks that extend them (ー, 々, 〆). */
const UNSPACED = '\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}\\p{sc=Thai}\\p{sc=Lao}\\p{sc=Khmer}\\p{sc=Myanmar}\\u30FC\\u3005\\u3006';
const TOKEN = new RegExp(`([${UNSPACED}]+)|((?:(?![${UNSPACED}])[\\p{L}\\p{N}\\p{M}])+)`, 'gu');

/** Longer words are not words (base64, minified code): they are skipped, so they cannot bloat the index. */
export const MAX_WORD_LENGTH = 64;
/** tsvector positions stop at 16,383; later terms are kept at that position (findable, not by phrase). */
export const MAX_POSITION = 16_383;

export const foldTerm = (text: string): string => text.normalize('NFKC').toLowerCase();

/**
 * In ASCII the letters, digits and marks are [A-Za-z0-9], NFKC changes
 * nothing and lower case keeps lengths: the same terms as TOKEN, found
 * several times faster (most of what is indexed is English and code).
 */
const ASCII_ONLY = /^[\x00-\x7F]*$/;
const ASCII_WORD = /[A-Za-z0-9]+/g;

/** Every term of `text` in order. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let position = 0;
  const next = () => Math.min(++position, MAX_POSITION);
  if (ASCII_ONLY.test(text)) {
    for (const match of text.matchAll(ASCII_WORD)) {
      if (match[0].length <= MAX_WORD_LENGTH) {
        tokens.push({ term: match[0].toLowerCase(), start: match.index, end: match.index + match[0].length, position: next(), kind: 'word' });
      }
    }
    return tokens;
  }
  for (const match of text.matchAll(TOKEN)) {
    const start = match.index!;
    if (match[1] !== undefined) {
      const chars = [...match[1]];
      let offset = start;
      for (let i = 0; i < chars.length; i++) {
        const width = chars[i].length;
        if (i + 1 < chars.length) {
          tokens.push({ term: foldTerm(chars[i] + chars[i + 1]), start: offset, end: offset + width + chars[i + 1].length, position: next(), kind: 'bigram' });
        } else {
          tokens.push({ term: foldTerm(chars[i]), start: offset, end: offset + width, position: next(), kind: i === 0 ? 'single' : 'tail' });
        }
        offset += width;
      }
    } else if (match[2].length <= MAX_WORD_LENGTH) {
      tokens.push({ term: foldTerm(match[2]), start, end: start + match[2].length, position: next(), kind: 'word' });
    }
  }
  return tokens;
}

/** PostgreSQL keeps at most 256 positions per lexeme. */
const MAX_POSITIONS_PER_TERM = 256;

/** A tsvector literal of the tokens (lexemes quoted, with their positions), for `$n::tsvector`. */
export function tsvectorLiteral(tokens: readonly Token[]): string {
  const positions = new Map<string, number[]>();
  for (const { term, position } of tokens) {
    let list = positions.get(term);
    if (!list) positions.set(term, (list = []));
    if (list.length < MAX_POSITIONS_PER_TERM && list[list.length - 1] !== position) list.push(position);
  }
  return [...positions].map(([term, list]) => `${quoteLexeme(term)}:${list.join(',')}`).join(' ');
}

/** A lexeme in tsvector/tsquery literal syntax: quoted, with quotes doubled and backslashes escaped. */
export const quoteLexeme = (term: string): string =>
  term.includes('\\') || term.includes("'") ? `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'` : `'${term}'`;
