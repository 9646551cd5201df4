import { ParsableAiSdkRequest, parseAiSdk } from '../view/parse/ai-sdk';
import { AiSdkFilePart, AiSdkMessage, AiSdkTextPart, AiSdkToolResultContent, AiSdkToolResultOutput } from '../view/render/ai-sdk';
import { NativeStep } from './native-step';
import { eachAt, Json, objectAt, optionalStringAt, stringAt, unsupported } from './reader';

type Message = ParsableAiSdkRequest['messages'][number];
type AssistantPart = Extract<AiSdkMessage, { role: 'assistant' }>['content'][number];

/**
 * AI SDK `ModelMessage`s as JSON (what `response.messages` holds once
 * serialized: binary data as base64, URLs as strings) read into the render's
 * shapes and parsed as a context read back. Content may be a string; an image
 * part is a file; a JSON tool output is kept as its JSON text, a denied
 * execution as an error result. Approvals, provider-executed tool results,
 * assistant files and files kept by a provider have no place in the log and
 * are refused.
 */
export function readAiSdkMessages(value: unknown, path: string): Message[] {
  return eachAt(value, path, readMessage);
}

/** A `generateText` result or an `onStepFinish` step: `response.messages`, `usage`, `finishReason`. */
export function readAiSdkStep(value: unknown, path: string): NativeStep {
  const step = objectAt(value, path);
  const response = objectAt(step.response, `${path}.response`);
  return {
    messages: parseAiSdk({ messages: readAiSdkMessages(response.messages, `${path}.response.messages`) }),
    usage: step.usage ?? undefined,
    finishReason: optionalStringAt(step.finishReason, `${path}.finishReason`),
  };
}

function readMessage(value: unknown, path: string): Message {
  const message = objectAt(value, path);
  const content = `${path}.content`;
  switch (message.role) {
    case 'system':
      return { role: 'system', content: stringAt(message.content, content) };
    case 'user':
      return { role: 'user', content: typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : eachAt(message.content, content, readUserPart) };
    case 'assistant': {
      const parts = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : eachAt(message.content, content, readAssistantPart);
      return { role: 'assistant', content: parts.filter((part) => part.type === 'tool-call' || part.text !== '') };
    }
    case 'tool':
      return { role: 'tool', content: eachAt(message.content, content, readToolResult) };
    default:
      throw unsupported(`${path}.role`, String(message.role), 'the roles are system, user, assistant and tool');
  }
}

function readUserPart(value: unknown, path: string): AiSdkTextPart | AiSdkFilePart {
  const part = objectAt(value, path);
  switch (part.type) {
    case 'text':
      return { type: 'text', text: stringAt(part.text, `${path}.text`) };
    case 'image':
      // Without a media type the SDK sniffs the bytes; the log needs one, and PNG is the common case.
      return { type: 'file', mediaType: optionalStringAt(part.mediaType, `${path}.mediaType`) ?? 'image/png', data: stringAt(part.image, `${path}.image`) };
    case 'file': {
      const filename = optionalStringAt(part.filename, `${path}.filename`);
      return { type: 'file', mediaType: stringAt(part.mediaType, `${path}.mediaType`), data: fileData(part.data, `${path}.data`), ...(filename === undefined ? {} : { filename }) };
    }
    default:
      throw unsupported(`${path}.type`, String(part.type), 'user content is text, image or file');
  }
}

/** A file's data: base64 or a URL, plain or tagged (`{type: 'data' | 'url'}`). */
function fileData(value: unknown, path: string): string {
  if (typeof value === 'string') return value;
  const tagged = objectAt(value, path);
  if (tagged.type === 'data') return stringAt(tagged.data, `${path}.data`);
  if (tagged.type === 'url') return stringAt(tagged.url, `${path}.url`);
  throw unsupported(`${path}.type`, String(tagged.type), 'file data is base64 or a URL');
}

function readAssistantPart(value: unknown, path: string): AssistantPart {
  const part = objectAt(value, path);
  switch (part.type) {
    case 'text':
      return { type: 'text', text: stringAt(part.text, `${path}.text`) };
    case 'reasoning':
      return { type: 'reasoning', text: stringAt(part.text, `${path}.text`) };
    case 'tool-call':
      return {
        type: 'tool-call',
        toolCallId: stringAt(part.toolCallId, `${path}.toolCallId`),
        toolName: stringAt(part.toolName, `${path}.toolName`),
        input: objectAt(part.input, `${path}.input`),
      };
    default:
      throw unsupported(`${path}.type`, String(part.type), 'assistant content is text, reasoning or tool-call');
  }
}

function readToolResult(value: unknown, path: string) {
  const part = objectAt(value, path);
  if (part.type !== 'tool-result') throw unsupported(`${path}.type`, String(part.type), 'tool content is tool-result');
  return {
    type: 'tool-result' as const,
    toolCallId: stringAt(part.toolCallId, `${path}.toolCallId`),
    toolName: stringAt(part.toolName, `${path}.toolName`),
    output: readOutput(objectAt(part.output, `${path}.output`), `${path}.output`),
  };
}

function readOutput(output: Json, path: string): AiSdkToolResultOutput {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return { type: output.type, value: stringAt(output.value, `${path}.value`) };
    case 'json':
      return { type: 'text', value: JSON.stringify(output.value) };
    case 'error-json':
      return { type: 'error-text', value: JSON.stringify(output.value) };
    case 'execution-denied':
      return { type: 'error-text', value: optionalStringAt(output.reason, `${path}.reason`) ?? 'Tool execution denied.' };
    case 'content':
      return { type: 'content', value: eachAt(output.value, `${path}.value`, readResultContent) };
    default:
      throw unsupported(`${path}.type`, String(output.type), 'outputs are text, json, error-text, error-json, execution-denied or content');
  }
}

function readResultContent(value: unknown, path: string): AiSdkToolResultContent {
  const part = objectAt(value, path);
  const mediaType = () => stringAt(part.mediaType, `${path}.mediaType`);
  switch (part.type) {
    case 'text':
      return { type: 'text', text: stringAt(part.text, `${path}.text`) };
    case 'file-data':
    case 'image-data': {
      const filename = optionalStringAt(part.filename, `${path}.filename`);
      return { type: 'file-data', mediaType: mediaType(), data: stringAt(part.data, `${path}.data`), ...(filename === undefined ? {} : { filename }) };
    }
    case 'file': {
      const data = objectAt(part.data, `${path}.data`);
      if (data.type === 'url') return { type: 'file-url', url: stringAt(data.url, `${path}.data.url`), mediaType: mediaType() };
      const filename = optionalStringAt(part.filename, `${path}.filename`);
      return { type: 'file-data', mediaType: mediaType(), data: fileData(data, `${path}.data`), ...(filename === undefined ? {} : { filename }) };
    }
    case 'file-url':
      return { type: 'file-url', url: stringAt(part.url, `${path}.url`), mediaType: optionalStringAt(part.mediaType, `${path}.mediaType`) ?? 'application/octet-stream' };
    case 'image-url':
      return { type: 'file-url', url: stringAt(part.url, `${path}.url`), mediaType: 'image/png' };
    default:
      throw unsupported(`${path}.type`, String(part.type), 'result content is text, file, file-data, file-url, image-data or image-url');
  }
}
