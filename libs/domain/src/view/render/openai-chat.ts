import { FilePart, Message, ToolResultPart } from '../../events';
import { ANTHROPIC_OPENING_TEXT } from './anthropic';
import { callArguments, fileNote, fileUrl, isImage, isPdf, textsOf } from './media';
import { RenderableView } from './renderable-view';

/** Chat Completions shapes (the subset we emit), kept here so the domain needs no SDK. */
export type OpenAIChatTextPart = { type: 'text'; text: string };
export type OpenAIChatContentPart =
  | OpenAIChatTextPart
  | { type: 'image_url'; image_url: { url: string } }
  | { type: 'file'; file: { filename?: string; file_data: string } };

export interface OpenAIChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type OpenAIChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | OpenAIChatContentPart[] }
  | { role: 'assistant'; content: string | OpenAIChatTextPart[] | null; tool_calls?: OpenAIChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/**
 * Chat Completions messages: the system prompt first, one `tool` message per
 * result. Tool messages carry text only, so result attachments follow the
 * turn's tool messages as one user message. Reasoning parts are omitted
 * (Chat Completions takes no reasoning input). An empty view (no system
 * prompt, nothing visible) opens with one user message, as the Anthropic
 * render does: the API refuses an empty `messages` array.
 */
export function renderOpenAIChat(view: RenderableView): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = view.system ? [{ role: 'system', content: view.system }] : [];
  let attachments: OpenAIChatContentPart[] = [];
  const flushAttachments = () => {
    if (attachments.length > 0) out.push({ role: 'user', content: attachments });
    attachments = [];
  };

  for (const message of view.messages) {
    if (message.role !== 'tool') flushAttachments();
    switch (message.role) {
      case 'system': {
        const text = textsOf(message).join('\n\n');
        if (text) out.push({ role: 'system', content: text });
        break;
      }
      case 'user': {
        const content = message.parts.flatMap((part): OpenAIChatContentPart[] => {
          if (part.type === 'text') return part.text ? [{ type: 'text', text: part.text }] : [];
          return part.type === 'file' ? [userFilePart(part)] : [];
        });
        if (content.length > 0) out.push({ role: 'user', content: compact(content) });
        break;
      }
      case 'assistant':
        out.push(...assistantMessage(message));
        break;
      case 'tool':
        for (const part of message.parts) {
          if (part.type !== 'tool_result') continue;
          out.push({ role: 'tool', tool_call_id: part.callId, content: part.output });
          attachments.push(...attachmentParts(part));
        }
        break;
    }
  }
  flushAttachments();
  if (out.length === 0) out.push({ role: 'user', content: ANTHROPIC_OPENING_TEXT });
  return out;
}

/** Assistant content is text only: files become notes. */
function assistantMessage(message: Message): OpenAIChatMessage[] {
  const content = message.parts.flatMap((part): OpenAIChatTextPart[] => {
    if (part.type === 'text') return part.text ? [{ type: 'text', text: part.text }] : [];
    return part.type === 'file' ? [{ type: 'text', text: fileNote(part) }] : [];
  });
  const toolCalls: OpenAIChatToolCall[] = message.parts.flatMap((part) =>
    part.type === 'tool_call'
      ? [{ id: part.callId, type: 'function' as const, function: { name: part.name, arguments: callArguments(part.input) } }]
      : [],
  );
  if (content.length === 0 && toolCalls.length === 0) return [];
  return [
    {
      role: 'assistant',
      content: content.length > 0 ? compact(content) : null,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    },
  ];
}

/** A lone text part is sent as a plain string, the common shape. */
function compact<P extends OpenAIChatContentPart>(parts: P[]): string | P[] {
  const [only] = parts;
  return parts.length === 1 && only.type === 'text' ? only.text : parts;
}

function userFilePart(part: FilePart): OpenAIChatContentPart {
  const url = fileUrl(part);
  if (url && isImage(part)) return { type: 'image_url', image_url: { url } };
  // Chat Completions takes documents inline only; `url` is the data: URL here.
  if (url && part.data && isPdf(part)) {
    return { type: 'file', file: { filename: part.filename ?? 'document.pdf', file_data: url } };
  }
  return { type: 'text', text: fileNote(part) };
}

function attachmentParts(part: ToolResultPart): OpenAIChatContentPart[] {
  if (!part.attachments?.length) return [];
  return [{ type: 'text', text: attachmentsHeader(part.callId) }, ...part.attachments.map(userFilePart)];
}

/** Heads a result's attachments in the user message after the tool messages (parseOpenAIChat puts them back on the result). */
export function attachmentsHeader(callId: string): string {
  return `[attachments of tool call ${callId}]`;
}
