import { createHash } from 'node:crypto';
import { createEvent, type CreateEventParams, type Event } from '@google/adk';
import { isObject } from '@session-store/client';

/** The record kinds this adapter writes. */
export const SESSION_KIND = 'adk.session';
export const EVENT_KIND = 'adk.event';
export const STATE_KIND = 'adk.state';

/** Metadata keys: ADK sessions are listed by the first; the shared-state sessions carry the second, so no listing of sessions finds them. */
export const METADATA_KEY = 'googleAdk';
export const STATE_METADATA_KEY = 'googleAdkState';

/** ADK keys a session by app, user and id together; a hash of the three fits the service's session ids whatever their length. */
export function sessionIdOf(appName: string, userId: string, sessionId: string): string {
  return `adk-${hashOf([appName, userId, sessionId])}`;
}

/** The session holding an app's `app:` state, or (with userId) a user's `user:` state. */
export function stateSessionIdOf(appName: string, userId?: string): string {
  return userId === undefined ? `adk-app-${hashOf([appName])}` : `adk-user-${hashOf([appName, userId])}`;
}

function hashOf(parts: string[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** An ADK event read back: createEvent restores what JSON cannot carry (the symbol `isEvent` checks). */
export function eventOf(value: unknown): Event | undefined {
  return isEventJson(value) ? createEvent(value) : undefined;
}

function isEventJson(value: unknown): value is CreateEventParams {
  return isObject(value) && typeof value.id === 'string' && typeof value.invocationId === 'string' && typeof value.timestamp === 'number';
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string };

/**
 * The Anthropic message an ADK event's content amounts to: the model's turns
 * (text, function calls) as the assistant's, the user's and the tools'
 * (text, function responses) as the user's. Thoughts and parts without an
 * Anthropic counterpart (inline data, code execution) are left out: this is
 * the service's model view, the record keeps the event whole.
 */
export function messageOf(event: Event): { role: 'user' | 'assistant'; content: Block[] } | undefined {
  const parts = event.content?.parts ?? [];
  const role = event.content?.role === 'model' ? 'assistant' : 'user';
  const content: Block[] = [];
  for (const part of parts) {
    if (part.thought) continue;
    if (part.text) content.push({ type: 'text', text: part.text });
    if (role === 'assistant' && part.functionCall?.id && part.functionCall.name) {
      content.push({ type: 'tool_use', id: part.functionCall.id, name: part.functionCall.name, input: part.functionCall.args ?? {} });
    }
    if (role === 'user' && part.functionResponse?.id) {
      content.push({ type: 'tool_result', tool_use_id: part.functionResponse.id, content: JSON.stringify(part.functionResponse.response ?? {}) });
    }
  }
  return content.length === 0 ? undefined : { role, content };
}
