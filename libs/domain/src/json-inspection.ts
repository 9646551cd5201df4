import { invalid } from './errors';

export interface JsonLimits {
  maxDepth: number;
}

/**
 * One iterative pass over a parsed JSON body before any recursive code
 * (class-validator, JSON.stringify, jsonb) sees it: depth bombs overflow the
 * stack there, and NUL or lone surrogates make PostgreSQL reject the row.
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
        stack.push({ value: child, depth: depth + 1, path: `${path}.${key}` });
      }
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
