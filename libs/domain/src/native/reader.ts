import { DomainError, invalid } from '../errors';

/**
 * Readers of a provider's JSON at a path: each returns the value typed or
 * throws a 400 naming where it is wrong (`$.messages[2].content`), so a
 * provider object is checked in the one pass that reads it. SDK objects carry
 * many fields the log has no place for (ids, status, logprobs, annotations):
 * fields not read are ignored, not refused.
 */
export type Json = Record<string, unknown>;

const wrong = (path: string, what: string) => invalid('invalid_native_message', `${path} must be ${what}`, { path });

export function objectAt(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw wrong(path, 'an object');
  return value as Json;
}

export function arrayAt(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw wrong(path, 'an array');
  return value;
}

export function stringAt(value: unknown, path: string): string {
  if (typeof value !== 'string') throw wrong(path, 'a string');
  return value;
}

export const optionalStringAt = (value: unknown, path: string): string | undefined => (value == null ? undefined : stringAt(value, path));

/** The elements of an array, each read at its own path. */
export const eachAt = <T>(value: unknown, path: string, read: (element: unknown, path: string) => T): T[] =>
  arrayAt(value, path).map((element, i) => read(element, `${path}[${i}]`));

/** A string or an array of text parts (`{type: 'text', text}` or the format's text type), as one string. */
export function textAt(value: unknown, path: string, textType = 'text'): string {
  if (typeof value === 'string') return value;
  return eachAt(value, path, (part, at) => {
    const block = objectAt(part, at);
    if (block.type !== textType) throw unsupported(`${at}.type`, String(block.type), `only ${textType} parts are carried here`);
    return stringAt(block.text, `${at}.text`);
  }).join('');
}

/** A well-formed item the log cannot hold: refused whole rather than dropped in silence. */
export function unsupported(path: string, type: string, why: string): DomainError {
  return new DomainError('unprocessable', 'unsupported_native_item', `${path} "${type}" is not supported: ${why}`, { path });
}
