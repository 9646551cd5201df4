import { parseOpenAIResponses, ResponsesReasoningItem } from '../view/parse/openai-responses';
import { ResponsesInputContent, ResponsesInputItem } from '../view/render/openai-responses';
import { NativeStep } from './native-step';
import { eachAt, Json, objectAt, optionalStringAt, stringAt, textAt, unsupported } from './reader';

type Item = ResponsesInputItem | ResponsesReasoningItem;

/**
 * Responses input items as the openai SDK writes them (`ResponseInputItem`:
 * easy messages with or without `type`, output messages with their `id` and
 * `status`, function calls and their outputs, reasoning), and a `Response`'s
 * `output`, read into the render's shapes and parsed as a context read back.
 * `developer` is a system message; a refusal is assistant text; a reasoning
 * item keeps its summary text (its id and encrypted content are the
 * provider's). Items the log cannot hold (hosted tool calls, item
 * references, files kept by OpenAI) are refused.
 */
export function readOpenAIResponsesItems(value: unknown, path: string): Item[] {
  return eachAt(value, path, readItem).flat();
}

export function readOpenAIResponse(value: unknown, path: string): NativeStep {
  const response = objectAt(value, path);
  const status = optionalStringAt(response.status, `${path}.status`);
  const incomplete = response.incomplete_details == null ? undefined : objectAt(response.incomplete_details, `${path}.incomplete_details`);
  return {
    messages: parseOpenAIResponses(readOpenAIResponsesItems(response.output, `${path}.output`)),
    usage: response.usage ?? undefined,
    // `max_output_tokens` is the Responses API's "cut at the limit".
    finishReason: optionalStringAt(incomplete?.reason, `${path}.incomplete_details.reason`) ?? status,
  };
}

function readItem(value: unknown, path: string): Item[] {
  const item = objectAt(value, path);
  const type = item.type ?? (item.role === undefined ? undefined : 'message');
  switch (type) {
    case 'message':
      return readMessage(item, path);
    case 'function_call':
      return [
        {
          type: 'function_call',
          call_id: stringAt(item.call_id, `${path}.call_id`),
          name: stringAt(item.name, `${path}.name`),
          arguments: stringAt(item.arguments, `${path}.arguments`),
        },
      ];
    case 'function_call_output':
      return [
        {
          type: 'function_call_output',
          call_id: stringAt(item.call_id, `${path}.call_id`),
          output: typeof item.output === 'string' ? item.output : eachAt(item.output, `${path}.output`, readInputContent),
        },
      ];
    case 'reasoning': {
      const text = textAt(item.summary ?? [], `${path}.summary`, 'summary_text');
      // Encrypted reasoning alone has nothing the log can hold.
      return text ? [{ type: 'reasoning', text }] : [];
    }
    default:
      throw unsupported(`${path}.type`, String(type), 'the items are messages, function calls, their outputs and reasoning');
  }
}

function readMessage(item: Json, path: string): Item[] {
  switch (item.role) {
    case 'system':
    case 'developer':
    case 'user': {
      const content = typeof item.content === 'string' ? [{ type: 'input_text' as const, text: item.content }] : eachAt(item.content, `${path}.content`, readInputContent);
      return [{ type: 'message', role: item.role === 'user' ? 'user' : 'system', content }];
    }
    case 'assistant': {
      const texts = typeof item.content === 'string' ? [item.content] : eachAt(item.content, `${path}.content`, readOutputText);
      return texts.filter((text) => text !== '').map((text) => ({ type: 'message', role: 'assistant', content: text }));
    }
    default:
      throw unsupported(`${path}.role`, String(item.role), 'the roles are system, developer, user and assistant');
  }
}

function readOutputText(value: unknown, path: string): string {
  const part = objectAt(value, path);
  switch (part.type) {
    case 'output_text':
    case 'input_text':
      return stringAt(part.text, `${path}.text`);
    case 'refusal':
      return stringAt(part.refusal, `${path}.refusal`);
    default:
      throw unsupported(`${path}.type`, String(part.type), 'assistant content is output_text or refusal');
  }
}

function readInputContent(value: unknown, path: string): ResponsesInputContent {
  const part = objectAt(value, path);
  switch (part.type) {
    case 'input_text':
      return { type: 'input_text', text: stringAt(part.text, `${path}.text`) };
    case 'input_image':
      if (part.image_url == null) throw unsupported(`${path}`, 'file_id', 'an image kept by OpenAI cannot be read back: send image_url');
      return { type: 'input_image', image_url: stringAt(part.image_url, `${path}.image_url`), detail: 'auto' };
    case 'input_file': {
      const fileData = optionalStringAt(part.file_data, `${path}.file_data`);
      const fileUrl = optionalStringAt(part.file_url, `${path}.file_url`);
      const filename = optionalStringAt(part.filename, `${path}.filename`);
      if (fileData === undefined && fileUrl === undefined) throw unsupported(`${path}`, 'file_id', 'a file kept by OpenAI cannot be read back: send file_data or file_url');
      return {
        type: 'input_file',
        ...(filename === undefined ? {} : { filename }),
        ...(fileData === undefined ? {} : { file_data: fileData }),
        ...(fileUrl === undefined ? {} : { file_url: fileUrl }),
      };
    }
    default:
      throw unsupported(`${path}.type`, String(part.type), 'input content is input_text, input_image or input_file');
  }
}
