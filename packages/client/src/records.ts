import type { NewEvent, StoredEvent } from './types';

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Below the service's MAX_JSON_DEPTH (64), with room for the request's own nesting. */
const MAX_DEPTH = 48;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** The kind of a record kept as its JSON text. */
const TEXT_SUFFIX = '.json';

/**
 * Whether the service takes the value as JSON: it refuses NUL characters,
 * lone surrogates, `__proto__` keys and deep nesting in any request, all of
 * which a framework's state may hold (a binary file a tool read); the
 * value's JSON text, a plain string, has none of them.
 */
function acceptedAsJson(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
  if (typeof value !== 'object' || value === null) return true;
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) return value.every((item) => acceptedAsJson(item, depth + 1));
  return Object.entries(value).every(([key, item]) => key !== '__proto__' && acceptedAsJson(key) && acceptedAsJson(item, depth + 1));
}

/**
 * A `record.added` of `value` under `kind` (a framework's own state: a
 * transcript entry, a session event): the value as JSON, or, when the
 * service would refuse it as JSON, its JSON text under `kind.json`, read
 * back the same by recordValue.
 */
export function recordEvent(kind: string, value: unknown, id?: string): NewEvent {
  const data = acceptedAsJson(value) ? { kind, value } : { kind: kind + TEXT_SUFFIX, value: JSON.stringify(value) };
  return id === undefined ? { type: 'record.added', data } : { id, type: 'record.added', data };
}

/** The value a stored record of `kind` holds, in either form; undefined for any other event. */
export function recordValue(event: StoredEvent, kind: string): unknown {
  if (event.type !== 'record.added') return undefined;
  const { kind: stored, value } = event.data;
  if (stored === kind) return value;
  if (stored === kind + TEXT_SUFFIX && typeof value === 'string') return JSON.parse(value);
  return undefined;
}
