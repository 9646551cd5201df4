import { Message, Part } from '../events';
import { tokenizerFor } from '../models/resolve-model';
import { TokenizerFamily } from '../models/model-registry';
import { estimateTokens } from './chars';
import { estimateTextTokens } from './text-estimate';
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
 * is the character-class estimate (text-estimate.ts), not the exact
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

/**
 * Estimate of a message the log stores no figure for (a prefix compaction
 * builds, an entry the fold rewrote): ceil(chars / 4) per text and media at
 * a flat figure, as the view estimates without a tokenizer.
 */
export function approxMessageTokens(message: Message): number {
  return message.parts.reduce((sum, part) => sum + partTexts(part).reduce((tokens, text) => tokens + estimateTokens(text), 0) + mediaCount(part) * MEDIA_TOKENS, 0);
}

export function approxMessagesTokens(messages: readonly Message[]): number {
  return messages.reduce((sum, message) => sum + approxMessageTokens(message), 0);
}
