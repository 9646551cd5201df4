import { ResponsesInputContent, ResponsesInputItem } from '../render/openai-responses';
import { fileOfUrl, NativeMessage, NativePart, NativeToolResultPart, nameOf, parseArguments, pushPart, textPart, withoutOpening } from './native-message';

/**
 * Responses input items, as renderOpenAIResponses sends them, back to neutral
 * messages. Assistant items (one per text, then the calls) group into one
 * assistant message until a text follows a call: the render puts a message's
 * texts before its calls, so that is where the next message began.
 *
 * Lost, because the items do not carry it: reasoning (its items need the
 * provider's ids and encrypted content); a result's error flag; an image's
 * filename; files other than images and PDFs (sent as text notes, read back
 * as text, and dropped among a result's attachments); where an assistant's
 * text stood among its calls; a call input that is not JSON (`null` is sent
 * as `{}`). Consecutive results become one tool message, consecutive texts of
 * an assistant one message.
 */
export function parseOpenAIResponses(items: readonly (ResponsesInputItem | ResponsesReasoningItem)[]): NativeMessage[] {
  const names = new Map<string, string>();
  const out: NativeMessage[] = [];
  for (const item of items) {
    switch (item.type) {
      case 'message': {
        if (item.role !== 'assistant') {
          out.push({ role: item.role, parts: item.content.map(contentPart) });
          break;
        }
        pushAssistantText(out, textPart(item.content));
        break;
      }
      case 'reasoning':
        pushAssistantText(out, { type: 'reasoning', text: item.text });
        break;
      case 'function_call':
        names.set(item.call_id, item.name);
        pushPart(out, 'assistant', { type: 'tool_call', callId: item.call_id, name: item.name, input: parseArguments(item.arguments) });
        break;
      case 'function_call_output':
        pushPart(out, 'tool', resultOf(item, names));
        break;
    }
  }
  return withoutOpening(out);
}

/** A reasoning item's summary, as a native append reads it (the render sends no reasoning). */
export type ResponsesReasoningItem = { type: 'reasoning'; text: string };

/** Texts and reasoning join the assistant message until it has a call: the render puts a message's texts before its calls. */
function pushAssistantText(out: NativeMessage[], part: NativePart): void {
  const last = out.at(-1);
  if (last?.role === 'assistant' && !last.parts.some((candidate) => candidate.type === 'tool_call')) last.parts.push(part);
  else out.push({ role: 'assistant', parts: [part] });
}

/** The render sends a result with attachments as its output text, then the files. */
function resultOf(item: Extract<ResponsesInputItem, { type: 'function_call_output' }>, names: ReadonlyMap<string, string>): NativeToolResultPart {
  const result: NativeToolResultPart = { type: 'tool_result', callId: item.call_id, ...nameOf(names, item.call_id), output: '' };
  if (typeof item.output === 'string') return { ...result, output: item.output };
  const [head, ...rest] = item.output.map(contentPart);
  const attachments = rest.flatMap((part) => (part.type === 'file' ? [part] : []));
  return { ...result, output: head?.type === 'text' ? head.text : '', ...(attachments.length > 0 ? { attachments } : {}) };
}

function contentPart(part: ResponsesInputContent): NativePart {
  switch (part.type) {
    case 'input_text':
      return textPart(part.text);
    case 'input_image':
      return fileOfUrl(part.image_url, 'image');
    case 'input_file':
      return fileOfUrl(part.file_data ?? part.file_url ?? '', 'pdf', part.filename);
  }
}
