import { FilePart, Part, Role, TextPart, ToolResultPart } from '../../events';
import { ANTHROPIC_OPENING_TEXT } from '../render/anthropic';

/** A tool result as a client appends it: with no name, the append takes its call's. */
export type NativeToolResultPart = Omit<ToolResultPart, 'name' | 'outputRef' | 'truncated'> & { name?: string };
export type NativePart = Exclude<Part, ToolResultPart> | NativeToolResultPart;

/**
 * A `message.added` message parsed from a provider's shapes: no id (the
 * service gives one; the formats carry none of ours) and no metadata.
 */
export interface NativeMessage {
  role: Role;
  parts: NativePart[];
}

export const textPart = (text: string): TextPart => ({ type: 'text', text });

/** Adds the part to the last message when it has the role, else opens one: the formats merge or split turns their own way. */
export function pushPart(messages: NativeMessage[], role: Role, part: NativePart): void {
  const last = messages.at(-1);
  if (last?.role === role) last.parts.push(part);
  else messages.push({ role, parts: [part] });
}

/** The renders open with this when the view does not start with a user message: it is the service's, not the client's. */
export function withoutOpening(messages: NativeMessage[]): NativeMessage[] {
  const [first] = messages;
  const opening = first?.role === 'user' && first.parts.length === 1 && first.parts[0].type === 'text' && first.parts[0].text === ANTHROPIC_OPENING_TEXT;
  return opening ? messages.slice(1) : messages;
}

const REMINDER = /^<system-reminder>\n([\s\S]*)\n<\/system-reminder>$/;

/**
 * The system message a user text stands for (see systemReminder), or
 * undefined. Before any other message it stays user text: a leading system
 * message is the system prompt's, and would render there.
 */
export function reminderText(text: string, before: readonly NativeMessage[]): string | undefined {
  return before.some((message) => message.role !== 'system') ? REMINDER.exec(text)?.[1] : undefined;
}

/** OpenAI's JSON-string arguments; a model's malformed JSON is kept as the string it sent. */
export function parseArguments(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** The result's tool name when the input holds its call (the OpenAI and Anthropic results carry none). */
export function nameOf(names: ReadonlyMap<string, string>, callId: string): { name?: string } {
  const name = names.get(callId);
  return name === undefined ? {} : { name };
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;
const IMAGE_EXTENSIONS: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

/**
 * A file from a data: URL (its media type and base64) or a plain URL. A plain
 * URL's media type is not in the format: `kind` says image or PDF, and an
 * image's type is read from the extension (PNG when it has none we know).
 */
export function fileOfUrl(url: string, kind: 'image' | 'pdf', filename?: string): FilePart {
  const named = filename === undefined ? {} : { filename };
  const inline = DATA_URL.exec(url);
  if (inline) return { type: 'file', mediaType: inline[1], data: inline[2], ...named };
  const extension = /\.([a-z]+)(?:[?#].*)?$/i.exec(url)?.[1].toLowerCase() ?? '';
  const mediaType = kind === 'pdf' ? 'application/pdf' : (IMAGE_EXTENSIONS[extension] ?? 'image/png');
  return { type: 'file', mediaType, url, ...named };
}
