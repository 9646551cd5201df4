import { FilePart, Message, TextPart } from '../../events';

/** Inline data wins over a URL: the provider then needs no fetch. */
export function fileUrl(part: FilePart): string | undefined {
  return part.data ? `data:${part.mediaType};base64,${part.data}` : part.url;
}

export function isImage(part: FilePart): boolean {
  return part.mediaType.startsWith('image/');
}

export function isPdf(part: FilePart): boolean {
  return part.mediaType === 'application/pdf';
}

/** How a file reads where the target format has no block for it. */
export function fileNote(part: FilePart): string {
  return `[file: ${part.filename ?? part.mediaType}${part.url ? ` ${part.url}` : ''}]`;
}

/** The non-empty text parts of a message. */
export function textsOf(message: Message): string[] {
  return message.parts
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .filter((text) => text.length > 0);
}

/** Tool-call input as the JSON string OpenAI's formats carry. */
export function callArguments(input: unknown): string {
  return JSON.stringify(input ?? {});
}

/**
 * A system message after the conversation began, as user text: the Anthropic
 * and AI SDK shapes have no system turns, the tag tells the model who speaks.
 */
export function systemReminder(text: string): string {
  return `<system-reminder>\n${text}\n</system-reminder>`;
}
