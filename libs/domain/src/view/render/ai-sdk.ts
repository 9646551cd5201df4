import { FilePart, Message, Part, ToolResultPart } from '../../events';
import { ANTHROPIC_OPENING_TEXT, toolInput, ToolUseIds } from './anthropic';
import { fileNote, systemReminder, textsOf } from './media';
import { RenderableView } from './renderable-view';

/**
 * Vercel AI SDK `ModelMessage` shapes (the JSON subset we emit), kept here so
 * the domain needs no SDK. File data is a string: base64 or a URL, which the
 * SDK tells apart itself.
 */
export type AiSdkTextPart = { type: 'text'; text: string };
export type AiSdkFilePart = { type: 'file'; mediaType: string; data: string; filename?: string };
export type AiSdkReasoningPart = { type: 'reasoning'; text: string };
export type AiSdkToolCallPart = { type: 'tool-call'; toolCallId: string; toolName: string; input: Record<string, unknown> };
/** Tool-result content: inline media as tagged data; a URL as `file-url`, the only URL form that survives JSON. */
export type AiSdkToolResultContent =
  | { type: 'text'; text: string }
  | { type: 'file-data'; mediaType: string; data: string; filename?: string }
  | { type: 'file-url'; url: string; mediaType: string };
export type AiSdkToolResultOutput =
  | { type: 'text'; value: string }
  | { type: 'error-text'; value: string }
  | { type: 'content'; value: AiSdkToolResultContent[] };
export type AiSdkToolResultPart = { type: 'tool-result'; toolCallId: string; toolName: string; output: AiSdkToolResultOutput };

export type AiSdkMessage =
  | { role: 'user'; content: Array<AiSdkTextPart | AiSdkFilePart> }
  | { role: 'assistant'; content: Array<AiSdkTextPart | AiSdkReasoningPart | AiSdkToolCallPart> }
  | { role: 'tool'; content: AiSdkToolResultPart[] };

export interface AiSdkRequest {
  system?: string;
  messages: AiSdkMessage[];
}

/**
 * `generateText({ instructions: system, messages })` input. The system prompt is apart:
 * the SDK refuses system messages inside `messages` unless the caller opts
 * in, so leading system messages join it and later ones become user text in
 * <system-reminder>, as in the Anthropic render. The SDK forwards to any
 * provider, so the strictest rules hold as there: a user turn first, no blank
 * text, call ids Anthropic accepts, object inputs, a result named as its
 * call (Gemini matches results by name). Reasoning is kept (the
 * SDK's providers drop what they cannot replay), but a message with nothing
 * else is dropped: providers that drop the reasoning would send it empty.
 */
export function renderAiSdk(view: RenderableView): AiSdkRequest {
  const calls: CallNames = { ids: new ToolUseIds(), names: new Map() };
  for (const part of view.messages.flatMap((message) => message.parts)) {
    if (part.type === 'tool_call') calls.names.set(part.callId, part.name);
  }
  const leading = view.messages.findIndex((message) => message.role !== 'system');
  const head = leading === -1 ? view.messages.length : leading;
  const system = [view.system ?? '', ...view.messages.slice(0, head).flatMap(textsOf)].filter(isPresent).join('\n\n');

  const messages: AiSdkMessage[] = [];
  for (const message of view.messages.slice(head).flatMap((message) => messageOf(message, calls))) {
    // One tool message per step, as the SDK's own response messages have it.
    const last = messages.at(-1);
    if (last?.role === 'tool' && message.role === 'tool') last.content.push(...message.content);
    else messages.push(message);
  }
  if (messages[0]?.role !== 'user') messages.unshift({ role: 'user', content: [{ type: 'text', text: ANTHROPIC_OPENING_TEXT }] });
  return system ? { system, messages } : { messages };
}

/** Call ids as rendered, and each call's tool name by our call id. */
interface CallNames {
  ids: ToolUseIds;
  names: Map<string, string>;
}

function isPresent(text: string): boolean {
  return text.trim().length > 0;
}

function messageOf(message: Message, calls: CallNames): AiSdkMessage[] {
  switch (message.role) {
    case 'system': {
      const text = textsOf(message).join('\n\n');
      return isPresent(text) ? [{ role: 'user', content: [{ type: 'text', text: systemReminder(text) }] }] : [];
    }
    case 'user': {
      const content = message.parts.flatMap((part): Array<AiSdkTextPart | AiSdkFilePart> => {
        if (part.type === 'text') return isPresent(part.text) ? [{ type: 'text', text: part.text }] : [];
        return part.type === 'file' ? [filePart(part)] : [];
      });
      return content.length > 0 ? [{ role: 'user', content }] : [];
    }
    case 'assistant': {
      const content = message.parts.flatMap((part) => assistantParts(part, calls.ids));
      return content.some((part) => part.type !== 'reasoning') ? [{ role: 'assistant', content }] : [];
    }
    case 'tool': {
      const content = message.parts.flatMap((part) => (part.type === 'tool_result' ? [toolResult(part, calls)] : []));
      return content.length > 0 ? [{ role: 'tool', content }] : [];
    }
  }
}

/** Assistant files become notes, as in the other renders: providers take media from the user side. */
function assistantParts(part: Part, ids: ToolUseIds): Array<AiSdkTextPart | AiSdkReasoningPart | AiSdkToolCallPart> {
  switch (part.type) {
    case 'text':
      return isPresent(part.text) ? [{ type: 'text', text: part.text }] : [];
    case 'reasoning':
      return isPresent(part.text) ? [{ type: 'reasoning', text: part.text }] : [];
    case 'file':
      return [{ type: 'text', text: fileNote(part) }];
    case 'tool_call':
      return [{ type: 'tool-call', toolCallId: ids.of(part.callId), toolName: part.name, input: toolInput(part.input) }];
    case 'tool_result':
      return [];
  }
}

function filePart(part: FilePart): AiSdkTextPart | AiSdkFilePart {
  const data = part.data ?? part.url;
  if (!data) return { type: 'text', text: fileNote(part) };
  return { type: 'file', mediaType: part.mediaType, data, ...(part.filename ? { filename: part.filename } : {}) };
}

/** Errors (the synthetic aborted result included) as error-text; attachments make it content, which has no error flag. */
function toolResult(part: ToolResultPart, { ids, names }: CallNames): AiSdkToolResultPart {
  const media = (part.attachments ?? []).map(resultFile);
  const output: AiSdkToolResultOutput =
    media.length > 0
      ? { type: 'content', value: [{ type: 'text', text: part.output }, ...media] }
      : { type: part.isError ? 'error-text' : 'text', value: part.output };
  return { type: 'tool-result', toolCallId: ids.of(part.callId), toolName: names.get(part.callId) ?? part.name, output };
}

function resultFile(part: FilePart): AiSdkToolResultContent {
  const { mediaType, data, url, filename } = part;
  if (data) return { type: 'file-data', mediaType, data, ...(filename ? { filename } : {}) };
  return url ? { type: 'file-url', url, mediaType } : { type: 'text', text: fileNote(part) };
}
