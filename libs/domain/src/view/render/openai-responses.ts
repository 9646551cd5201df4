import { FilePart, Message, ToolResultPart } from '../../events';
import { ANTHROPIC_OPENING_TEXT } from './anthropic';
import { callArguments, fileNote, fileUrl, isImage, isPdf, textsOf } from './media';
import { RenderableView } from './renderable-view';

/** Responses API input shapes (the subset we emit). */
export type ResponsesInputContent =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' }
  | { type: 'input_file'; filename?: string; file_data?: string; file_url?: string };

/**
 * Input items. An assistant message is the SDK's `EasyInputMessage` with its
 * text as a string: the API takes it as the assistant's output text. The
 * other assistant shape, `ResponseOutputMessage` (`output_text` parts), needs
 * the `id` and `status` of an item the API produced and, with `store: false`,
 * refuses ids it does not know; `input_text` parts are refused on assistant
 * messages ("Supported values are: 'output_text' and 'refusal'"). So each
 * text part is one such message, as `@ai-sdk/openai` sends assistant text.
 */
export type ResponsesInputItem =
  | { type: 'message'; role: 'system' | 'user'; content: ResponsesInputContent[] }
  | { type: 'message'; role: 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string | ResponsesInputContent[] };

/**
 * Responses API input items: messages, then each call as a `function_call`
 * item and each result as a `function_call_output` (with its attachments when
 * it has some). Reasoning parts are omitted: reasoning items need the
 * provider's ids and encrypted content, which the log does not keep.
 * An empty view opens with one user message: the API refuses an empty input.
 */
export function renderOpenAIResponses(view: RenderableView): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  if (view.system) items.push({ type: 'message', role: 'system', content: [{ type: 'input_text', text: view.system }] });
  for (const message of view.messages) items.push(...messageItems(message));
  if (items.length === 0) items.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: ANTHROPIC_OPENING_TEXT }] });
  return items;
}

function messageItems(message: Message): ResponsesInputItem[] {
  switch (message.role) {
    case 'system': {
      const content = textsOf(message).map((text) => ({ type: 'input_text' as const, text }));
      return content.length > 0 ? [{ type: 'message', role: 'system', content }] : [];
    }
    case 'user': {
      const content = message.parts.flatMap((part): ResponsesInputContent[] => {
        if (part.type === 'text') return part.text ? [{ type: 'input_text', text: part.text }] : [];
        return part.type === 'file' ? [inputFile(part)] : [];
      });
      return content.length > 0 ? [{ type: 'message', role: 'user', content }] : [];
    }
    case 'assistant':
      return assistantItems(message);
    case 'tool':
      return message.parts.flatMap((part) => (part.type === 'tool_result' ? [outputItem(part)] : []));
  }
}

/** One assistant message per text (and file note), in order, then the calls. */
function assistantItems(message: Message): ResponsesInputItem[] {
  const texts = message.parts.flatMap((part): ResponsesInputItem[] => {
    const text = part.type === 'text' ? part.text : part.type === 'file' ? fileNote(part) : '';
    return text ? [{ type: 'message', role: 'assistant', content: text }] : [];
  });
  const calls = message.parts.flatMap((part): ResponsesInputItem[] =>
    part.type === 'tool_call'
      ? [{ type: 'function_call', call_id: part.callId, name: part.name, arguments: callArguments(part.input) }]
      : [],
  );
  return [...texts, ...calls];
}

function outputItem(part: ToolResultPart): ResponsesInputItem {
  const output = part.attachments?.length
    ? [{ type: 'input_text' as const, text: part.output }, ...part.attachments.map(inputFile)]
    : part.output;
  return { type: 'function_call_output', call_id: part.callId, output };
}

function inputFile(part: FilePart): ResponsesInputContent {
  const url = fileUrl(part);
  if (url && isImage(part)) return { type: 'input_image', image_url: url, detail: 'auto' };
  if (part.data && isPdf(part)) return { type: 'input_file', filename: part.filename ?? 'document.pdf', file_data: url };
  if (part.url && isPdf(part)) return { type: 'input_file', file_url: part.url };
  return { type: 'input_text', text: fileNote(part) };
}
