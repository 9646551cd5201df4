import type { Message, Part } from '../events';

/**
 * What search indexes of one event: one document per part that carries
 * text. Tool outputs are indexed up to TOOL_OUTPUT_INDEX_CHARS (their head;
 * grep over the stored output serves the rest), any other text up to
 * DOCUMENT_INDEX_CHARS.
 */
export interface SearchDocument {
  /** The part's index in its message (0 for an event that is not a message). */
  part: number;
  /** The message's role; null for an event that is not a message. */
  role: string | null;
  /** `text`, `reasoning`, `tool_call`, `tool_result`, `file`; or, outside a message, `summary`, `pin`, `system`. */
  partType: string;
  /** The tool of a tool call or result. */
  toolName: string | null;
  text: string;
}

export const TOOL_OUTPUT_INDEX_CHARS = 8 * 1024;
export const DOCUMENT_INDEX_CHARS = 32 * 1024;

const bounded = (text: string, max: number) => (text.length > max ? text.slice(0, /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max) : text);

function partText(part: Part): { text: string; toolName: string | null } | null {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return { text: part.text, toolName: null };
    case 'tool_call':
      // The name too, so that a search for the tool finds its calls; the input as its JSON text.
      return { text: `${part.name} ${JSON.stringify(part.input ?? null)}`, toolName: part.name };
    case 'tool_result':
      return { text: bounded(typeof part.output === 'string' ? part.output : '', TOOL_OUTPUT_INDEX_CHARS), toolName: part.name ?? null };
    case 'file':
      return part.filename ? { text: part.filename, toolName: null } : null;
    default:
      return null;
  }
}

/** The documents of an event as the log returns it (tool outputs restored); none for an event with no text. */
export function searchDocuments(type: string, data: unknown): SearchDocument[] {
  const d = (data ?? {}) as Record<string, unknown>;
  const one = (partType: string, text: unknown): SearchDocument[] =>
    typeof text === 'string' && text.trim() !== '' ? [{ part: 0, role: null, partType, toolName: null, text: bounded(text, DOCUMENT_INDEX_CHARS) }] : [];
  switch (type) {
    case 'message.added': {
      const message = d.message as Message | undefined;
      const docs: SearchDocument[] = [];
      (message?.parts ?? []).forEach((part, index) => {
        const found = partText(part);
        if (found && found.text.trim() !== '') {
          docs.push({ part: index, role: message!.role, partType: part.type, toolName: found.toolName, text: bounded(found.text, DOCUMENT_INDEX_CHARS) });
        }
      });
      return docs;
    }
    case 'compaction.completed':
      return one('summary', d.summary);
    case 'pin.added':
      return one('pin', d.text);
    case 'session.created':
      return one('system', d.system);
    default:
      return [];
  }
}
