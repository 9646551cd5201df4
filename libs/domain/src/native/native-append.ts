import { invalid } from '../errors';
import { parseAiSdk, parseAnthropic, parseOpenAIChat, parseOpenAIResponses } from '../view/parse';
import { NativeMessage } from '../view/parse/native-message';
import { readAiSdkMessages, readAiSdkStep } from './ai-sdk';
import { readAnthropicMessage, readAnthropicRequest } from './anthropic';
import { NativeStep } from './native-step';
import { readChatCompletion, readOpenAIChatMessages } from './openai-chat';
import { readOpenAIResponse, readOpenAIResponsesItems } from './openai-responses';
import { objectAt } from './reader';

export const NATIVE_FORMATS = ['openai', 'openai-responses', 'anthropic', 'ai-sdk'] as const;
export type NativeFormat = (typeof NATIVE_FORMATS)[number];

/** Each format's readers: its request-side messages, and its SDK's response object. */
const READERS: Record<NativeFormat, { messages: (value: unknown, path: string) => NativeMessage[]; response: (value: unknown, path: string) => NativeStep }> = {
  openai: { messages: (value, path) => parseOpenAIChat(readOpenAIChatMessages(value, path)), response: readChatCompletion },
  'openai-responses': { messages: (value, path) => parseOpenAIResponses(readOpenAIResponsesItems(value, path)), response: readOpenAIResponse },
  anthropic: { messages: (value, path) => parseAnthropic(readAnthropicRequest(value, path)), response: readAnthropicMessage },
  'ai-sdk': { messages: (value, path) => parseAiSdk({ messages: readAiSdkMessages(value, path) }), response: readAiSdkStep },
};

const FIELDS = new Set(['format', 'messages', 'response', 'contextSeq', 'expectedSeq']);

/**
 * A native append (POST .../messages) as the append request it stands for:
 * `messages` (what the client sent the model this step: the user's turn, the
 * tool results) as one `message.added` each, then `response` (what the SDK
 * returned) as the assistant's messages and, when the provider reported
 * usage, a `step.finished` with that usage whole (normalizeUsage maps it) and
 * the provider's finish reason. The result goes through the one append path
 * and its validation like any client batch.
 *
 * `contextSeq` (the headSeq of the context the call was sent with) is refused
 * beside `messages`: those were sent with the call too, after that head, and
 * the step's seq is then inferred from them (usageMeasuredSeq).
 */
export function nativeAppendRequest(body: unknown): { expectedSeq?: unknown; events: unknown[] } {
  const request = objectAt(body, '$');
  for (const key of Object.keys(request)) {
    if (!FIELDS.has(key)) throw invalid('unknown_field', `$.${key} is not allowed`, { path: `$.${key}` });
  }
  const format = request.format;
  if (!NATIVE_FORMATS.includes(format as NativeFormat)) {
    throw invalid('invalid_field', `$.format must be one of ${NATIVE_FORMATS.join(', ')}`, { path: '$.format' });
  }
  const readers = READERS[format as NativeFormat];
  if (request.messages === undefined && request.response === undefined) {
    throw invalid('invalid_field', '$.messages or $.response is required', { path: '$' });
  }
  if (request.messages !== undefined && request.contextSeq !== undefined) {
    throw invalid('invalid_field', '$.contextSeq is inferred when $.messages are sent with the response: leave it out', { path: '$.contextSeq' });
  }
  const messages = request.messages === undefined ? [] : readers.messages(request.messages, '$.messages');
  const step = request.response === undefined ? undefined : readers.response(request.response, '$.response');
  const events: unknown[] = [...messages, ...(step?.messages ?? [])].map((message) => ({ type: 'message.added', data: { message } }));
  if (step?.usage !== undefined) {
    const finish = step.finishReason === undefined ? {} : { finishReason: step.finishReason };
    const context = request.contextSeq === undefined ? {} : { contextSeq: request.contextSeq };
    events.push({ type: 'step.finished', data: { usage: step.usage, ...finish, ...context } });
  }
  if (events.length === 0) throw invalid('empty_batch', 'nothing to append: the messages and the response hold nothing the log keeps', { path: '$' });
  return { ...(request.expectedSeq === undefined ? {} : { expectedSeq: request.expectedSeq }), events };
}
