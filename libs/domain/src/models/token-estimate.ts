import { Message, Part } from '../events';
import { tokenizerFor } from './resolve-model';
import { TokenizerFamily } from './model-registry';
import { estimateTextTokens } from './text-token-estimate';
import { countTokens } from './tokenizer';

/** What an image or a file costs in an estimate, whatever its size (the providers bill media apart from text). */
export const MEDIA_TOKENS = 1_200;

/** The text the model reads for a part; media are counted apart. */
function partTexts(part: Part): string[] {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return [part.text];
    case 'file':
      return [];
    case 'tool_call':
      return [part.name, JSON.stringify(part.input ?? {})];
    case 'tool_result':
      return [part.output];
  }
}

function mediaCount(part: Part): number {
  if (part.type === 'file') return 1;
  return part.type === 'tool_result' ? (part.attachments?.length ?? 0) : 0;
}

/**
 * A message's token estimate for `model`. The service computes it once at
 * append time and stores it with the event, so reads never re-tokenize. It
 * is the character-class estimate (text-token-estimate.ts), not the exact
 * BPE count: that costs milliseconds per message on the append path.
 */
export function estimateMessageTokens(message: Message, model: string): number {
  return estimateMessageTokensAs(message, tokenizerFor(model));
}

/**
 * The same estimate for a tokenizer family: 'approx' is ceil(chars/4), as
 * OpenCode estimates; a BPE family gets the character-class estimate.
 */
export function estimateMessageTokensAs(message: Message, family: TokenizerFamily): number {
  const texts = message.parts.flatMap(partTexts);
  const media = message.parts.reduce((count, part) => count + mediaCount(part), 0);
  const textTokens = family === 'approx' ? countTokens(texts, 'approx') : texts.reduce((tokens, text) => tokens + estimateTextTokens(text), 0);
  return textTokens + media * MEDIA_TOKENS;
}
