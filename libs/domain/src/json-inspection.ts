import { invalid } from './errors';

export interface JsonLimits {
  maxDepth: number;
}

/**
 * One iterative pass over a parsed JSON body before any recursive code
 * (class-validator, JSON.stringify, jsonb) sees it: depth bombs overflow the
 * stack there, NUL or lone surrogates make PostgreSQL reject the row, and a
 * "__proto__" key is a prototype-pollution attempt in anything merged.
 * Returns nothing; throws an `invalid` DomainError naming the path.
 */
export function assertSafeJson(value: unknown, limits: JsonLimits): void {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value, depth: 0, path: '$' }];
  while (stack.length > 0) {
    const { value: current, depth, path } = stack.pop()!;
    if (typeof current === 'string') {
      assertSafeString(current, path);
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= limits.maxDepth) {
      throw invalid('json_too_deep', `JSON nesting exceeds ${limits.maxDepth} levels`, { path, maxDepth: limits.maxDepth });
    }
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], depth: depth + 1, path: `${path}[${i}]` });
    } else {
      for (const [key, child] of Object.entries(current)) {
        assertSafeString(key, `${path}{key}`);
        // JSON.parse keeps "__proto__" as an own key; any later spread or merge would set a prototype from it.
        if (key === '__proto__') throw invalid('prototype_key', `${path} has a "__proto__" key`, { path });
        stack.push({ value: child, depth: depth + 1, path: `${path}.${key}` });
      }
    }
  }
}

/**
 * Request bodies mapped onto classes (class-transformer) silently drop or
 * choke on "constructor" keys, so a config patch would lose them instead of
 * being refused; such bodies are refused whole. Event data is not mapped
 * and keeps them (a tool input may say "constructor").
 */
export function assertNoConstructorKeys(value: unknown): void {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: '$' }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    for (const [key, child] of Object.entries(current)) {
      if (key === 'constructor') throw invalid('prototype_key', `${path} has a "constructor" key`, { path });
      stack.push({ value: child, path: Array.isArray(current) ? `${path}[${key}]` : `${path}.${key}` });
    }
  }
}

// U+0000, or a surrogate half without its partner.
const UNSAFE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function assertSafeString(text: string, path: string): void {
  const match = UNSAFE.exec(text);
  if (!match) return;
  const code = match[0] === '\u0000' ? 'nul_character' : 'lone_surrogate';
  const what = code === 'nul_character' ? 'a NUL character' : 'an unpaired UTF-16 surrogate';
  throw invalid(code, `${path} contains ${what} at index ${match.index}`, { path, index: match.index });
}

export interface JsonFilterLimits {
  /** UTF-8 bytes of the JSON text. */
  maxBytes: number;
  maxDepth: number;
  /** Object keys and array elements, all levels together. */
  maxKeys: number;
}

/** A JSON filter in a query string (the sessions list's `metadata`): bounded like a body, since it reaches recursive code and the database. */
export const JSON_FILTER_LIMITS: JsonFilterLimits = { maxBytes: 8 * 1024, maxDepth: 8, maxKeys: 64 };

/**
 * Parses a JSON query parameter within the limits, the size checked before
 * parsing and the rest in one iterative pass; a refusal is 400
 * `invalid_filter` naming the parameter and the limit. Text that is not JSON
 * is returned as it is, for the parameter's own validation to refuse.
 */
export function parseJsonFilter(name: string, text: string, limits: JsonFilterLimits = JSON_FILTER_LIMITS): unknown {
  const refuse = (limit: keyof JsonFilterLimits, what: string) =>
    invalid('invalid_filter', `${name} ${what}`, { parameter: name, limit, [limit]: limits[limit] });
  if (Buffer.byteLength(text, 'utf8') > limits.maxBytes) throw refuse('maxBytes', `exceeds ${limits.maxBytes} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  let keys = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= limits.maxDepth) throw refuse('maxDepth', `nests deeper than ${limits.maxDepth} levels`);
    const children = Object.values(current);
    keys += children.length;
    if (keys > limits.maxKeys) throw refuse('maxKeys', `has more than ${limits.maxKeys} keys and array elements`);
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
  // NUL, lone surrogates and "__proto__" keys, as in a body (the depth is already bounded).
  assertSafeJson(value, { maxDepth: limits.maxDepth + 1 });
  return value;
}
