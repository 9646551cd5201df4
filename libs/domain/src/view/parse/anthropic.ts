import { FilePart } from '../../events';
import { AnthropicContentBlock, AnthropicMediaBlock, AnthropicRequest, AnthropicToolResultBlock } from '../render/anthropic';
import { fileOfUrl, NativeMessage, NativeToolResultPart, nameOf, pushPart, reminderText, textPart, withoutOpening } from './native-message';

/**
 * A Messages API request, as renderAnthropic sends it, back to neutral
 * messages. The system prompt becomes a leading system message. A turn is
 * split where its blocks change kind: tool results into a tool message,
 * <system-reminder> text into a system message, the rest into the turn's
 * role; cache breakpoints are the render's, not content, and are dropped.
 *
 * Lost, because the format merges or refuses it: turns of one role sent in a
 * row come back as one message; reasoning (thinking blocks need the
 * provider's signature); blank text; the trailing whitespace of a final
 * assistant text; a result's output when blank beside media; filenames;
 * files other than images and PDFs (sent as text notes); call ids with
 * characters other than [a-zA-Z0-9_-] (sent with `_`); a call input that is
 * not an object (sent as `{input}`).
 */
export function parseAnthropic(request: ParsableAnthropicRequest): NativeMessage[] {
  const system = typeof request.system === 'string' ? request.system : request.system?.map((block) => block.text).join('\n\n');
  const out: NativeMessage[] = system ? [{ role: 'system', parts: [textPart(system)] }] : [];
  const names = new Map<string, string>();
  for (const turn of request.messages) {
    for (const block of turn.content) add(out, turn.role, block, names);
  }
  return withoutOpening(out);
}

/** A thinking block's text, as a native append reads it (the render sends no thinking: it needs the provider's signature). */
export type AnthropicThinkingBlock = { type: 'thinking'; thinking: string };
export type ParsableAnthropicRequest = Omit<AnthropicRequest, 'messages'> & {
  messages: Array<{ role: 'user' | 'assistant'; content: Array<AnthropicContentBlock | AnthropicThinkingBlock> }>;
};

function add(out: NativeMessage[], role: 'user' | 'assistant', block: AnthropicContentBlock | AnthropicThinkingBlock, names: Map<string, string>): void {
  switch (block.type) {
    case 'thinking':
      pushPart(out, 'assistant', { type: 'reasoning', text: block.thinking });
      break;
    case 'text': {
      const reminder = role === 'user' ? reminderText(block.text, out) : undefined;
      if (reminder === undefined) pushPart(out, role, textPart(block.text));
      else out.push({ role: 'system', parts: [textPart(reminder)] });
      break;
    }
    case 'image':
    case 'document':
      pushPart(out, role, fileOf(block));
      break;
    case 'tool_use':
      names.set(block.id, block.name);
      pushPart(out, 'assistant', { type: 'tool_call', callId: block.id, name: block.name, input: block.input });
      break;
    case 'tool_result':
      pushPart(out, 'tool', resultOf(block, names));
      break;
  }
}

function resultOf(block: AnthropicToolResultBlock, names: ReadonlyMap<string, string>): NativeToolResultPart {
  const content = typeof block.content === 'string' ? [textPart(block.content)] : (block.content ?? []);
  const output = content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  const attachments = content.flatMap((part) => (part.type === 'text' ? [] : [fileOf(part)]));
  return {
    type: 'tool_result',
    callId: block.tool_use_id,
    ...nameOf(names, block.tool_use_id),
    output,
    ...(block.is_error ? { isError: true } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
  };
}

function fileOf(block: AnthropicMediaBlock): FilePart {
  const { source } = block;
  if (source.type === 'url') return fileOfUrl(source.url, block.type === 'image' ? 'image' : 'pdf');
  return { type: 'file', mediaType: source.media_type, data: source.data };
}
