/**
 * A one-pass token estimate from character classes, for the append path:
 * js-tiktoken's exact count costs ~4 ms per short message and
 * ~10 ms per 4 KB tool result; this costs microseconds.
 *
 * It follows the BPE pre-tokenizer's pieces (o200k_base/cl100k_base split
 * text into letter runs, digit groups of up to three, punctuation runs and
 * whitespace) and charges each piece what such pieces cost:
 * - a letter run, one token per WORD_CHARS letters up to LONG_RUN letters (a
 *   common word is one token), then one per LONG_RUN_CHARS (identifiers,
 *   hashes and random text split into short tokens); a run holding a
 *   non-ASCII letter (Latin-1 to Cyrillic) one per EXTENDED_CHARS;
 * - a digit run one per three digits;
 * - a punctuation run one per two characters for its first four, then one
 *   per PUNCT_RUN_CHARS (rules like `-----` are a few long tokens);
 * - a newline run one; a run of spaces one per SPACE_RUN_CHARS (a single
 *   space joins the word after it);
 * - any other character one (CJK text is about one token a character).
 *
 * Calibrated to lean high, so a compaction trigger fed with it fires early
 * rather than late: against o200k_base it gave 1.0-1.3x on logs, JSON,
 * TypeScript and English/German/French/Russian/Greek prose, 1.4x on Chinese,
 * 0.8-0.96x on random letters, DNA and hex, 0.6x on base64, 2-3x on long
 * runs of one punctuation character (text-estimate.spec.ts keeps those
 * bounds), where ceil(chars/4) gave 0.35-1.03x (it undercounts logs and
 * JSON by a third).
 */
const WORD_CHARS = 6;
const LONG_RUN = 12;
const LONG_RUN_CHARS = 2;
const EXTENDED_CHARS = 2.5;
const DIGIT_CHARS = 3;
const PUNCT_RUN_CHARS = 32;
const SPACE_RUN_CHARS = 128;

const enum Kind {
  Letter,
  Digit,
  Space,
  Newline,
  Punct,
  Other,
}

/** Latin-1 Supplement to Cyrillic letters (× and ÷ are not). */
const isExtendedLetter = (code: number) => code >= 0xc0 && code <= 0x52f && code !== 0xd7 && code !== 0xf7;

function classify(code: number): Kind {
  if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90) || isExtendedLetter(code)) return Kind.Letter;
  if (code >= 48 && code <= 57) return Kind.Digit;
  if (code === 32) return Kind.Space;
  if (code === 10 || code === 13 || code === 9) return Kind.Newline;
  return code < 128 ? Kind.Punct : Kind.Other;
}

/** Every code unit below the end of Cyrillic classified once: a table look-up per character is ~3x faster than the tests on 100 KB tool results. */
const KIND_TABLE_SIZE = 0x530;
const KINDS = Uint8Array.from({ length: KIND_TABLE_SIZE }, (_, code) => classify(code));

const kindOf = (code: number): Kind => (code < KIND_TABLE_SIZE ? KINDS[code] : Kind.Other);

/** Tokens of a run of `run` characters of one kind; `extended`: a letter run holding a non-ASCII letter. */
function runTokens(kind: Kind, run: number, extended: boolean): number {
  switch (kind) {
    case Kind.Letter: {
      const perToken = extended ? EXTENDED_CHARS : WORD_CHARS;
      if (run <= LONG_RUN) return Math.ceil(run / perToken);
      return Math.ceil(LONG_RUN / perToken) + Math.ceil((run - LONG_RUN) / LONG_RUN_CHARS);
    }
    case Kind.Digit:
      return Math.ceil(run / DIGIT_CHARS);
    case Kind.Space:
      return run > 1 ? Math.ceil(run / SPACE_RUN_CHARS) : 0;
    case Kind.Newline:
      return 1;
    case Kind.Punct:
      return run <= 4 ? Math.ceil(run / 2) : 2 + Math.ceil((run - 4) / PUNCT_RUN_CHARS);
    case Kind.Other:
      return run;
  }
}

/** The estimated token count of `text` (deterministic, linear, no allocation per character). */
export function estimateTextTokens(text: string): number {
  let tokens = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const first = text.charCodeAt(i);
    const kind = kindOf(first);
    // Only letters reach 0xc0 and above in the table; any such one makes the run extended.
    let extended = first >= 0xc0;
    let j = i + 1;
    for (; j < n; j++) {
      const code = text.charCodeAt(j);
      if (kindOf(code) !== kind) break;
      if (code >= 0xc0) extended = true;
    }
    tokens += runTokens(kind, j - i, extended);
    i = j;
  }
  return tokens;
}
