import { createHash } from 'node:crypto';
import type { SessionKey, SessionStoreEntry } from '@anthropic-ai/claude-agent-sdk';
import type { NewEvent, StoredEvent } from '@session-store/client';

/** The record kinds this adapter writes: an entry as JSON, or as its JSON text where the service refuses the JSON itself. */
export const ENTRY_KIND = 'claude.entry';
export const ENTRY_TEXT_KIND = 'claude.entry.json';

/** The key every session this adapter creates carries in its metadata, for listing by project and session. */
export const METADATA_KEY = 'claudeAgentSdk';

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:~-]{0,127}$/;

/**
 * One service session per transcript (main or subagent). Its id is derived
 * from the whole key, so no lookup precedes an append; a hash, because a
 * project key (a sanitized path of up to ~250 characters) fits no session id.
 */
export function sessionIdOf(key: SessionKey): string {
  return `claude-${createHash('sha256').update(JSON.stringify([key.projectKey, key.sessionId, key.subpath ?? null])).digest('hex')}`;
}

export function metadataOf(key: SessionKey): Record<string, unknown> {
  return { [METADATA_KEY]: { projectKey: key.projectKey, sessionId: key.sessionId, subpath: key.subpath ?? null } };
}

/** The key a listed session was created for, read back from its metadata. */
export function keyOf(metadata: Record<string, unknown>): SessionKey | undefined {
  const value = metadata[METADATA_KEY];
  if (!isObject(value) || typeof value.projectKey !== 'string' || typeof value.sessionId !== 'string') return undefined;
  const key = { projectKey: value.projectKey, sessionId: value.sessionId };
  return typeof value.subpath === 'string' ? { ...key, subpath: value.subpath } : key;
}

/**
 * The entry's event: its `uuid` is the event id, so the service's
 * ignore-duplicate ids give the dedup the SessionStore contract asks for
 * (retries, `importSessionToStore` replays); entries without one get a
 * fresh id and are appended every time, as the contract says.
 */
export function eventOf(entry: SessionStoreEntry): NewEvent {
  const data = acceptedAsJson(entry) ? { kind: ENTRY_KIND, value: entry } : { kind: ENTRY_TEXT_KIND, value: JSON.stringify(entry) };
  return entry.uuid === undefined ? { type: 'record.added', data } : { id: eventIdOf(entry.uuid), type: 'record.added', data };
}

export function eventIdOf(uuid: string): string {
  const id = `entry:${uuid}`;
  return ID_PATTERN.test(id) ? id : `entry:sha256:${createHash('sha256').update(uuid).digest('hex')}`;
}

/** The entry a stored event holds, or undefined for any other event. */
export function entryOf(event: StoredEvent): SessionStoreEntry | undefined {
  if (event.type !== 'record.added') return undefined;
  const { kind, value } = event.data;
  const entry: unknown = kind === ENTRY_KIND ? value : kind === ENTRY_TEXT_KIND && typeof value === 'string' ? JSON.parse(value) : undefined;
  return isEntry(entry) ? entry : undefined;
}

function isEntry(value: unknown): value is SessionStoreEntry {
  return isObject(value) && typeof value.type === 'string';
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Below the service's MAX_JSON_DEPTH (64), with room for the request's own nesting. */
const MAX_DEPTH = 48;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether the service takes the entry as JSON: it refuses NUL characters,
 * lone surrogates, `__proto__` keys and deep nesting in any request, all of
 * which a transcript may hold (a binary file read by a tool); the entry's
 * JSON text, a plain string, has none of them.
 */
function acceptedAsJson(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
  if (typeof value !== 'object' || value === null) return true;
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) return value.every((item) => acceptedAsJson(item, depth + 1));
  return Object.entries(value).every(([key, item]) => key !== '__proto__' && acceptedAsJson(key) && acceptedAsJson(item, depth + 1));
}

/**
 * The Anthropic message a transcript entry carries, as `{role, content}` (a
 * `MessageParam`): user and assistant entries hold the API's message under
 * `message`. Its content is passed on as the transcript has it; the
 * service checks its shape.
 */
export function messageOf(entry: SessionStoreEntry): { role: 'user' | 'assistant'; content: unknown } | undefined {
  if (entry.type !== 'user' && entry.type !== 'assistant') return undefined;
  const { message } = entry;
  if (!isObject(message) || message.role !== entry.type) return undefined;
  if (typeof message.content !== 'string' && !Array.isArray(message.content)) return undefined;
  return { role: entry.type, content: message.content };
}
