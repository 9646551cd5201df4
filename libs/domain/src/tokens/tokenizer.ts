import { Tiktoken } from 'js-tiktoken/lite';
import type { TiktokenBPE } from 'js-tiktoken/lite';
import { TokenizerFamily } from '../models/model-registry';

type Encoding = Exclude<TokenizerFamily, 'approx'>;

/*
 * Required on first use, not imported: o200k_base's ranks, parsed, hold ~70 MiB
 * of heap, and only exact counts (pins, a system prompt) need them;
 * the append path uses the estimate.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const RANKS: Record<Encoding, () => TiktokenBPE> = {
  o200k_base: () => require('js-tiktoken/ranks/o200k_base'),
  cl100k_base: () => require('js-tiktoken/ranks/cl100k_base'),
};
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * js-tiktoken's byte-pair merge is quadratic in the length of one regex piece
 * (a 4,000-letter word takes a second), and this runs on the append path. So
 * pieces longer than MAX_PIECE are counted from their head and extrapolated,
 * and text beyond EXACT_CHARS is extrapolated from the ratio measured so far.
 */
const MAX_PIECE = 128;
const EXACT_CHARS = 65_536;

interface Encoder {
  tiktoken: Tiktoken;
  pieces: RegExp;
}

const encoders = new Map<Encoding, Encoder>();

/** Built on first use: parsing the ranks takes ~0.3-0.7 s. */
function encoderFor(encoding: Encoding): Encoder {
  let encoder = encoders.get(encoding);
  if (!encoder) {
    const ranks = RANKS[encoding]();
    encoder = { tiktoken: new Tiktoken(ranks), pieces: new RegExp(ranks.pat_str, 'gu') };
    encoders.set(encoding, encoder);
  }
  return encoder;
}

/** Special-token text (`<|endoftext|>`) is counted as plain text: it is data here, never a control token. */
function encodedLength(tiktoken: Tiktoken, text: string): number {
  return text ? tiktoken.encode(text, [], []).length : 0;
}

function countWithEncoder(text: string, { tiktoken, pieces }: Encoder): number {
  let tokens = 0;
  let seen = 0;
  let batch = '';
  for (const [piece] of text.matchAll(pieces)) {
    if (seen >= EXACT_CHARS) break;
    seen += piece.length;
    if (piece.length <= MAX_PIECE) {
      batch += piece;
      continue;
    }
    const head = piece.slice(0, MAX_PIECE);
    tokens += Math.ceil((encodedLength(tiktoken, head) * piece.length) / head.length);
  }
  tokens += encodedLength(tiktoken, batch);
  return seen < text.length ? Math.ceil((tokens * text.length) / Math.max(seen, 1)) : tokens;
}

/** Token count of texts under one tokenizer family: BPE where known, else ceil(total chars / 4). */
export function countTokens(texts: readonly string[], family: TokenizerFamily): number {
  if (family === 'approx') return Math.ceil(texts.reduce((chars, text) => chars + text.length, 0) / 4);
  const encoder = encoderFor(family);
  return texts.reduce((tokens, text) => tokens + countWithEncoder(text, encoder), 0);
}
