import { createHash } from 'node:crypto';
import { createEvent, type CreateEventParams, type Event } from '@google/adk';
import type { NewEvent, StoredEvent } from '@session-store/client';

/** The record kinds this adapter writes. */
export const SESSION_KIND = 'adk.session';
export const EVENT_KIND = 'adk.event';
export const STATE_KIND = 'adk.state';
/** The JSON text of a value the service refuses as JSON (see acceptedAsJson). */
const TEXT_SUFFIX = '.json';

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

export function recordOf(kind: string, value: unknown): NewEvent {
  const data = acceptedAsJson(value) ? { kind, value } : { kind: kind + TEXT_SUFFIX, value: JSON.stringify(value) };
  return { type: 'record.added', data };
}

/** The value of a record of this kind, or undefined for any other event. */
export function valueOf(event: StoredEvent, kind: string): unknown {
  if (event.type !== 'record.added') return undefined;
  const { kind: stored, value } = event.data;
  if (stored === kind) return value;
  if (stored === kind + TEXT_SUFFIX && typeof value === 'string') return JSON.parse(value);
  return undefined;
}

/** An ADK event read back: createEvent restores what JSON cannot carry (the symbol `isEvent` checks). */
export function eventOf(value: unknown): Event | undefined {
  return isEventJson(value) ? createEvent(value) : undefined;
}

function isEventJson(value: unknown): value is CreateEventParams {
  return isObject(value) && typeof value.id === 'string' && typeof value.invocationId === 'string' && typeof value.timestamp === 'number';
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Below the service's MAX_JSON_DEPTH (64), with room for the request's own nesting. */
const MAX_DEPTH = 48;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether the service takes the value as JSON: it refuses NUL characters,
 * lone surrogates, `__proto__` keys and deep nesting in any request, which
 * a tool's output or a state value may hold; its JSON text has none of them.
 */
function acceptedAsJson(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
  if (typeof value !== 'object' || value === null) return true;
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) return value.every((item) => acceptedAsJson(item, depth + 1));
  return Object.entries(value).every(([key, item]) => key !== '__proto__' && acceptedAsJson(key) && acceptedAsJson(item, depth + 1));
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
