import { createHash } from 'node:crypto';
import type { SessionKey, SessionStoreEntry } from '@anthropic-ai/claude-agent-sdk';
import { isObject, recordEvent, recordValue, type NewEvent, type StoredEvent } from '@session-store/client';

/** The record kind this adapter writes (an entry the service refuses as JSON is kept as its JSON text: recordEvent). */
export const ENTRY_KIND = 'claude.entry';

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
  return recordEvent(ENTRY_KIND, entry, entry.uuid === undefined ? undefined : eventIdOf(entry.uuid));
}

export function eventIdOf(uuid: string): string {
  const id = `entry:${uuid}`;
  return ID_PATTERN.test(id) ? id : `entry:sha256:${createHash('sha256').update(uuid).digest('hex')}`;
}

/** The entry a stored event holds, or undefined for any other event. */
export function entryOf(event: StoredEvent): SessionStoreEntry | undefined {
  const entry = recordValue(event, ENTRY_KIND);
  return isEntry(entry) ? entry : undefined;
}

function isEntry(value: unknown): value is SessionStoreEntry {
  return isObject(value) && typeof value.type === 'string';
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
