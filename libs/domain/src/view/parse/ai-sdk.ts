import { FilePart } from '../../events';
import { AiSdkFilePart, AiSdkMessage, AiSdkRequest, AiSdkToolResultContent, AiSdkToolResultPart } from '../render/ai-sdk';
import { NativeMessage, NativePart, NativeToolResultPart, reminderText, textPart, withoutOpening } from './native-message';

/**
 * AI SDK `ModelMessage`s (with the system prompt apart), as renderAiSdk sends
 * them, back to neutral messages: the system prompt as a leading system
 * message, a user message of one <system-reminder> text as a system message.
 * The closest of the four formats: reasoning, filenames and tool names travel.
 *
 * Lost, because the render adapts them for every provider behind the SDK:
 * consecutive tool messages come back as one; blank text and reasoning, and
 * an assistant message of reasoning alone; assistant files (sent as text
 * notes); the error flag of a result with attachments (content has none);
 * the filename of a result's file given by URL; call ids with characters
 * other than [a-zA-Z0-9_-] (sent with `_`); a call input that is not an
 * object (sent as `{input}`).
 */
export function parseAiSdk(request: ParsableAiSdkRequest): NativeMessage[] {
  const out: NativeMessage[] = request.system ? [{ role: 'system', parts: [textPart(request.system)] }] : [];
  for (const message of request.messages) out.push(message.role === 'system' ? { role: 'system', parts: [textPart(message.content)] } : messageOf(message, out));
  return withoutOpening(out);
}

/** A system message among the messages, as the SDK accepts when the caller opts in (the render puts none there). */
export type ParsableAiSdkRequest = Omit<AiSdkRequest, 'messages'> & { messages: Array<AiSdkMessage | { role: 'system'; content: string }> };

function messageOf(message: AiSdkMessage, before: readonly NativeMessage[]): NativeMessage {
  switch (message.role) {
    case 'user': {
      const [only] = message.content;
      const reminder = message.content.length === 1 && only.type === 'text' ? reminderText(only.text, before) : undefined;
      if (reminder !== undefined) return { role: 'system', parts: [textPart(reminder)] };
      return { role: 'user', parts: message.content.map((part) => (part.type === 'text' ? textPart(part.text) : fileOf(part))) };
    }
    case 'assistant':
      return {
        role: 'assistant',
        parts: message.content.map((part): NativePart => {
          if (part.type !== 'tool-call') return part.type === 'text' ? textPart(part.text) : { type: 'reasoning', text: part.text };
          return { type: 'tool_call', callId: part.toolCallId, name: part.toolName, input: part.input };
        }),
      };
    case 'tool':
      return { role: 'tool', parts: message.content.map(resultOf) };
  }
}

/** A string the SDK reads as a URL when it parses as one (a scheme first), else as base64. */
function fileOf({ mediaType, data, filename }: Omit<AiSdkFilePart, 'type'>): FilePart {
  const named = filename === undefined ? {} : { filename };
  return /^[a-z][a-z\d+.-]*:/i.test(data) ? { type: 'file', mediaType, url: data, ...named } : { type: 'file', mediaType, data, ...named };
}

function resultOf({ toolCallId, toolName, output }: AiSdkToolResultPart): NativeToolResultPart {
  const result: NativeToolResultPart = { type: 'tool_result', callId: toolCallId, name: toolName, output: '' };
  if (output.type === 'text') return { ...result, output: output.value };
  if (output.type === 'error-text') return { ...result, output: output.value, isError: true };
  const [head, ...rest] = output.value;
  const attachments = rest.flatMap(resultFile);
  return { ...result, output: head?.type === 'text' ? head.text : '', ...(attachments.length > 0 ? { attachments } : {}) };
}

/** Text among a result's files is a note for a file the render could not send: dropped. */
function resultFile(part: AiSdkToolResultContent): FilePart[] {
  if (part.type === 'file-data') return [fileOf(part)];
  return part.type === 'file-url' ? [{ type: 'file', mediaType: part.mediaType, url: part.url }] : [];
}
