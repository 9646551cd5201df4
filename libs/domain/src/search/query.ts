import { invalid } from '../errors';
import { quoteLexeme, Token, tokenize } from './text';

/**
 * A search query: its items all must match (AND). An item is a bare word
 * (`refund`), a run of words joined by punctuation (`src/payments/refund.ts`,
 * `ERR_OSSL_EVP_UNSUPPORTED`), which matches as a phrase of its parts, a
 * quoted phrase (`"rounding bug"`), or a prefix (`refund*`: words starting
 * so). Text in an unspaced script (`返金処理`) matches as a substring.
 */
export interface SearchQuery {
  /** The tsquery literal, for `$n::tsquery`. */
  tsquery: string;
  /** What a snippet highlights: terms matched whole, and prefixes. */
  terms: string[];
  prefixes: string[];
}

export const SEARCH_QUERY_LIMITS = { maxLength: 500, maxItems: 16, maxTerms: 64 } as const;

interface Term {
  term: string;
  prefix: boolean;
  /** Distance from the previous term of its item, in positions (the tsquery `<N>` operator). */
  distance: number;
}

/**
 * The terms an item asks for, from its tokens. The last character of a run
 * in an unspaced script is indexed on its own only at the run's end, so a
 * query leaves it out (its bigrams say it) and keeps the distance it takes;
 * a lone character asks for every bigram starting with it.
 */
function itemTerms(tokens: readonly Token[], prefix: boolean): Term[] {
  const terms: Term[] = [];
  let previous: number | undefined;
  for (const token of tokens) {
    if (token.kind === 'tail') continue;
    terms.push({ term: token.term, prefix: token.kind === 'single', distance: previous === undefined ? 0 : token.position - previous });
    previous = token.position;
  }
  const last = terms[terms.length - 1];
  if (prefix && last && tokens[tokens.length - 1].kind === 'word') last.prefix = true;
  return terms;
}

const tsqueryItem = (terms: readonly Term[]): string =>
  terms.map((t, i) => `${i === 0 ? '' : t.distance === 1 ? ' <-> ' : ` <${t.distance}> `}${quoteLexeme(t.term)}${t.prefix ? ':*' : ''}`).join('');

/** Splits the query into items: quoted phrases, and runs of anything but whitespace. */
function items(q: string): Array<{ text: string; prefix: boolean }> {
  const found: Array<{ text: string; prefix: boolean }> = [];
  // An unclosed quote runs to the end of the query.
  for (const match of q.matchAll(/"([^"]*)"?|([^\s"]+)/g)) {
    if (match[1] !== undefined) found.push({ text: match[1], prefix: false });
    else found.push({ text: match[2].replace(/\*+$/, ''), prefix: /\*$/.test(match[2]) });
  }
  return found;
}

/** Parses `q` (400 `invalid_query` when it holds no word, or too many). */
export function parseSearchQuery(q: string): SearchQuery {
  if (q.length > SEARCH_QUERY_LIMITS.maxLength) throw invalid('invalid_query', `q is longer than ${SEARCH_QUERY_LIMITS.maxLength} characters`);
  const parsed = items(q)
    .map(({ text, prefix }) => itemTerms(tokenize(text), prefix))
    .filter((terms) => terms.length > 0);
  if (parsed.length === 0) throw invalid('invalid_query', 'q holds no word to search for');
  if (parsed.length > SEARCH_QUERY_LIMITS.maxItems) throw invalid('invalid_query', `q holds more than ${SEARCH_QUERY_LIMITS.maxItems} words or phrases`);
  const all = parsed.flat();
  if (all.length > SEARCH_QUERY_LIMITS.maxTerms) throw invalid('invalid_query', `q holds more than ${SEARCH_QUERY_LIMITS.maxTerms} terms`);
  return {
    tsquery: parsed.map((terms) => (terms.length === 1 ? tsqueryItem(terms) : `(${tsqueryItem(terms)})`)).join(' & '),
    terms: [...new Set(all.filter((t) => !t.prefix).map((t) => t.term))],
    prefixes: [...new Set(all.filter((t) => t.prefix).map((t) => t.term))],
  };
}

/**
 * Whether `text` holds every term the query asks for (each whole term, and
 * a term starting with each prefix): what any match needs, so a text
 * without them cannot match. Phrases, distances and the rest are left to
 * PostgreSQL (`@@` over the same terms), which this only spares the texts
 * that cannot match.
 */
export function holdsEveryTerm(text: string, query: Pick<SearchQuery, 'terms' | 'prefixes'>): boolean {
  const terms = new Set(tokenize(text).map((t) => t.term));
  if (!query.terms.every((t) => terms.has(t))) return false;
  if (query.prefixes.length === 0) return true;
  const all = [...terms];
  return query.prefixes.every((p) => all.some((t) => t.startsWith(p)));
}
