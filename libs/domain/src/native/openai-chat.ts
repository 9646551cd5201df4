import { OpenAIChatContentPart, OpenAIChatMessage, OpenAIChatTextPart, OpenAIChatToolCall } from '../view/render/openai-chat';
import { parseOpenAIChat } from '../view/parse';
import { eachAt, Json, objectAt, optionalStringAt, stringAt, textAt, unsupported } from './reader';
import { NativeStep } from './native-step';

/**
 * Chat Completions as the openai SDK writes it (`ChatCompletionMessageParam`,
 * `ChatCompletion`) read into the render's shapes, then parsed as a context
 * read back: `developer` is a system message, a refusal is assistant text,
 * content given as text parts is one string. Files kept by OpenAI (`file_id`),
 * audio and custom tools have no place in the log and are refused.
 */
export function readOpenAIChatMessages(value: unknown, path: string): OpenAIChatMessage[] {
  return eachAt(value, path, readMessage);
}

export function readChatCompletion(value: unknown, path: string): NativeStep {
  const completion = objectAt(value, path);
  const choices = eachAt(completion.choices, `${path}.choices`, objectAt);
  if (choices.length !== 1) throw unsupported(`${path}.choices`, `${choices.length} choices`, 'a step records one answer: request n = 1');
  const [choice] = choices;
  return {
    messages: parseOpenAIChat([readAssistant(objectAt(choice.message, `${path}.choices[0].message`), `${path}.choices[0].message`)]),
    usage: completion.usage ?? undefined,
    finishReason: optionalStringAt(choice.finish_reason, `${path}.choices[0].finish_reason`),
  };
}

function readMessage(value: unknown, path: string): OpenAIChatMessage {
  const message = objectAt(value, path);
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: textAt(message.content, `${path}.content`) };
    case 'user':
      return { role: 'user', content: typeof message.content === 'string' ? message.content : eachAt(message.content, `${path}.content`, readContentPart) };
    case 'assistant':
      return readAssistant(message, path);
    case 'tool':
      return { role: 'tool', tool_call_id: stringAt(message.tool_call_id, `${path}.tool_call_id`), content: textAt(message.content, `${path}.content`) };
    default:
      throw unsupported(`${path}.role`, String(message.role), 'the roles are system, developer, user, assistant and tool');
  }
}

function readAssistant(message: Json, path: string): OpenAIChatMessage {
  if (message.function_call != null) throw unsupported(`${path}.function_call`, 'function_call', 'use tool_calls (function_call is deprecated)');
  const texts: OpenAIChatTextPart[] = [];
  const text = (value: string) => {
    if (value) texts.push({ type: 'text', text: value });
  };
  if (typeof message.content === 'string') text(message.content);
  else if (message.content != null) {
    eachAt(message.content, `${path}.content`, (part, at) => {
      const block = objectAt(part, at);
      if (block.type === 'text') text(stringAt(block.text, `${at}.text`));
      else if (block.type === 'refusal') text(stringAt(block.refusal, `${at}.refusal`));
      else throw unsupported(`${at}.type`, String(block.type), 'assistant content is text or refusal');
    });
  }
  const refusal = optionalStringAt(message.refusal, `${path}.refusal`);
  if (refusal) text(refusal);
  const calls = message.tool_calls == null ? [] : eachAt(message.tool_calls, `${path}.tool_calls`, readToolCall);
  return { role: 'assistant', content: texts.length > 0 ? texts : null, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

function readToolCall(value: unknown, path: string): OpenAIChatToolCall {
  const call = objectAt(value, path);
  if (call.type !== 'function') throw unsupported(`${path}.type`, String(call.type), 'tool calls are function calls');
  const fn = objectAt(call.function, `${path}.function`);
  return {
    id: stringAt(call.id, `${path}.id`),
    type: 'function',
    function: { name: stringAt(fn.name, `${path}.function.name`), arguments: stringAt(fn.arguments, `${path}.function.arguments`) },
  };
}

function readContentPart(value: unknown, path: string): OpenAIChatContentPart {
  const part = objectAt(value, path);
  switch (part.type) {
    case 'text':
      return { type: 'text', text: stringAt(part.text, `${path}.text`) };
    case 'image_url':
      return { type: 'image_url', image_url: { url: stringAt(objectAt(part.image_url, `${path}.image_url`).url, `${path}.image_url.url`) } };
    case 'file': {
      const file = objectAt(part.file, `${path}.file`);
      if (file.file_data == null) throw unsupported(`${path}.file`, 'file_id', "a file kept by OpenAI cannot be read back: send file_data");
      const filename = optionalStringAt(file.filename, `${path}.file.filename`);
      return { type: 'file', file: { file_data: stringAt(file.file_data, `${path}.file.file_data`), ...(filename === undefined ? {} : { filename }) } };
    }
    default:
      throw unsupported(`${path}.type`, String(part.type), 'user content is text, image_url or file');
  }
}
