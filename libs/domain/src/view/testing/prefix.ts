/**
 * The prefix-stability rule as a check, for the property test and the e2e
 * test alike: where a later rendering stops beginning with an earlier one.
 *
 * "Begins with": `system` equal, and each message of the earlier rendering
 * serialized identically at the same index of the later one; in the
 * Anthropic format only, the earlier last turn may grow by blocks (same-role
 * turns merge, e.g. a user message after tool results) and its final
 * assistant text may have been trimmed (a prefill may not end in
 * whitespace). Anthropic caches per block, so both still hit up to the
 * earlier request's last block.
 */
import type { ContextFormat } from '../render';

/** A rendered context as the API returns it or renderContext makes it: messages, or Responses `input`. */
export type RenderedLike = { system?: unknown; messages?: readonly unknown[]; input?: readonly unknown[] };

const json = (value: unknown) => JSON.stringify(value);
const messagesOf = (rendered: RenderedLike): readonly unknown[] => rendered.input ?? rendered.messages ?? [];

/** Where `later` stops beginning with `earlier` ("system", "message <i>", "length …"), or null when it does. */
export function prefixBreak(format: ContextFormat, earlier: RenderedLike, later: RenderedLike): string | null {
  if (json(earlier.system) !== json(later.system)) return 'system';
  const before = messagesOf(earlier);
  const after = messagesOf(later);
  if (after.length < before.length) return `length ${after.length} < ${before.length}`;
  for (let i = 0; i < before.length; i++) {
    if (json(before[i]) === json(after[i])) continue;
    const last = i === before.length - 1;
    if (!(last && format === 'anthropic' && grownTurn(before[i] as AnthropicTurn, after[i] as AnthropicTurn))) return `message ${i}`;
  }
  return null;
}

type AnthropicTurn = { role: string; content: Array<{ type: string; text?: string }> };

/** The earlier last turn's blocks begin the later turn's, the final assistant text up to its trimmed whitespace. */
function grownTurn(before: AnthropicTurn, after: AnthropicTurn): boolean {
  if (before.role !== after.role || before.content.length > after.content.length) return false;
  return before.content.every((block, j) => {
    if (json(block) === json(after.content[j])) return true;
    const other = after.content[j];
    const trimmedPrefill = j === before.content.length - 1 && before.role === 'assistant' && block.type === 'text';
    return trimmedPrefill && other.type === 'text' && other.text!.trimEnd() === block.text;
  });
}
