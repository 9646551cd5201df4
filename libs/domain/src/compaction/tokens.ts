import type { Message, Part } from '../events';
import { MEDIA_TOKENS } from '../models/token-estimate';
import { estimateTokens, inputText } from '../prune/estimate-tokens';

function partTokens(part: Part): number {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return estimateTokens(part.text);
    case 'file':
      return MEDIA_TOKENS;
    case 'tool_call':
      return estimateTokens(part.name) + estimateTokens(inputText(part.input));
    case 'tool_result':
      return estimateTokens(part.output) + (part.attachments?.length ?? 0) * MEDIA_TOKENS;
  }
}

/**
 * Estimate of a message the log stores no figure for (a prefix this module
 * builds, an entry the fold rewrote): ceil(chars / 4) and media at a flat
 * figure, as the view estimates without a tokenizer.
 */
export function approxMessageTokens(message: Message): number {
  return message.parts.reduce((sum, part) => sum + partTokens(part), 0);
}

export function approxMessagesTokens(messages: readonly Message[]): number {
  return messages.reduce((sum, message) => sum + approxMessageTokens(message), 0);
}
