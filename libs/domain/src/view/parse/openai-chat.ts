import { FilePart } from '../../events';
import { OpenAIChatContentPart, OpenAIChatMessage } from '../render/openai-chat';
import { fileOfUrl, NativeMessage, NativePart, NativeToolResultPart, nameOf, parseArguments, pushPart, textPart, withoutOpening } from './native-message';

/**
 * Chat Completions messages, as renderOpenAIChat sends them, back to neutral
 * messages: the inverse of the render as far as the format carries it.
 *
 * Lost, because Chat Completions has no place for it: reasoning; a result's
 * error flag; an image's filename; files other than images and inline PDFs
 * (sent as text notes, read back as text); where an assistant's text stood
 * among its calls (the text comes first); a call input that is not JSON
 * (`null` is sent as `{}`). Consecutive tool messages become one tool
 * message, and the user message of attachments the render adds after them
 * goes back onto their results.
 */
export function parseOpenAIChat(messages: readonly OpenAIChatMessage[]): NativeMessage[] {
  const names = new Map<string, string>();
  const out: NativeMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        out.push({ role: 'system', parts: [textPart(message.content)] });
        break;
      case 'user': {
        const parts = typeof message.content === 'string' ? [textPart(message.content)] : message.content.map(contentPart);
        if (!attachToResults(out.at(-1), parts)) out.push({ role: 'user', parts });
        break;
      }
      case 'assistant': {
        const texts = typeof message.content === 'string' ? [textPart(message.content)] : (message.content ?? []);
        const calls = (message.tool_calls ?? []).map((call): NativePart => {
          names.set(call.id, call.function.name);
          return { type: 'tool_call', callId: call.id, name: call.function.name, input: parseArguments(call.function.arguments) };
        });
        out.push({ role: 'assistant', parts: [...texts.map((part) => textPart(part.text)), ...calls] });
        break;
      }
      case 'tool':
        pushPart(out, 'tool', { type: 'tool_result', callId: message.tool_call_id, ...nameOf(names, message.tool_call_id), output: message.content });
        break;
    }
  }
  return withoutOpening(out);
}

function contentPart(part: OpenAIChatContentPart): NativePart {
  switch (part.type) {
    case 'text':
      return textPart(part.text);
    case 'image_url':
      return fileOfUrl(part.image_url.url, 'image');
    case 'file':
      return fileOfUrl(part.file.file_data, 'pdf', part.file.filename);
  }
}

const ATTACHMENTS_HEADER = /^\[attachments of tool call (.+)\]$/s;

/**
 * The user message right after tool messages that opens with an attachments
 * header (attachmentsHeader) holds their results' files: each header names
 * the result its files belong to. Text notes among them are files the format
 * could not carry, and are dropped.
 */
function attachToResults(previous: NativeMessage | undefined, parts: NativePart[]): boolean {
  const [first] = parts;
  if (previous?.role !== 'tool' || first?.type !== 'text' || !ATTACHMENTS_HEADER.test(first.text)) return false;
  const results = previous.parts.filter((part): part is NativeToolResultPart => part.type === 'tool_result');
  let current: FilePart[] = [];
  for (const part of parts) {
    const header = part.type === 'text' ? ATTACHMENTS_HEADER.exec(part.text) : null;
    if (header) {
      const result = results.find((candidate) => candidate.callId === header[1]);
      current = result ? (result.attachments ??= []) : [];
    } else if (part.type === 'file') current.push(part);
  }
  return true;
}
