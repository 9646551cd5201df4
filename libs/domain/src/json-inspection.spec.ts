import { assertNoConstructorKeys, assertSafeJson, assertSafeString, JSON_FILTER_LIMITS, parseJsonFilter } from './json-inspection';
import { errorOf } from './testing/expect-domain-error';

/** `depth` nested arrays around a leaf, built iteratively (a recursive builder would itself overflow). */
function nestedArrays(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

function nestedObjects(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

describe('assertSafeJson', () => {
  const limits = { maxDepth: 64 };

  it('accepts ordinary bodies, astral characters and correctly paired surrogates', () => {
    // given a body with emoji (a surrogate pair in UTF-16), accents and CJK
    const body = { events: [{ type: 'message.added', data: { text: 'ok 😀 é 日本', n: 1, b: true, nil: null } }] };
    // when / then
    expect(() => assertSafeJson(body, limits)).not.toThrow();
  });

  it('accepts scalars at the top level', () => {
    for (const value of [null, 1, 'text', true, undefined]) expect(() => assertSafeJson(value, limits)).not.toThrow();
  });

  it('accepts nesting up to the limit and refuses one level more', () => {
    // given the limit counts containers: 64 arrays deep is the deepest allowed
    expect(() => assertSafeJson(nestedArrays(64), limits)).not.toThrow();
    // when one more level is added
    const error = errorOf(() => assertSafeJson(nestedArrays(65), limits));
    // then
    expect(error.code).toBe('json_too_deep');
    expect(error.kind).toBe('invalid');
    expect(error.details).toMatchObject({ maxDepth: 64 });
  });

  it('rejects a 100,000-deep bomb without overflowing the stack (the walk is iterative)', () => {
    // given a depth bomb of arrays and one of objects
    // when / then both are refused with a clean error, not a RangeError
    expect(errorOf(() => assertSafeJson(nestedArrays(100_000), limits)).code).toBe('json_too_deep');
    expect(errorOf(() => assertSafeJson(nestedObjects(100_000), limits)).code).toBe('json_too_deep');
  });

  it('rejects a NUL character and names the path of the string', () => {
    // given
    const body = { events: [{ data: { parts: [{ text: 'before\u0000after' }] } }] };
    // when
    const error = errorOf(() => assertSafeJson(body, limits));
    // then
    expect(error.code).toBe('nul_character');
    expect(error.details).toEqual({ path: '$.events[0].data.parts[0].text', index: 6 });
  });

  it.each([
    ['a lone high surrogate', 'a\ud800b', 1],
    ['a lone high surrogate at the end', 'ab\ud83d', 2],
    ['a lone low surrogate', 'a\udc00b', 1],
    ['a reversed pair', '\ude00\ud83d', 0],
  ])('rejects %s', (_, text, index) => {
    const error = errorOf(() => assertSafeJson({ text }, limits));
    expect(error.code).toBe('lone_surrogate');
    expect(error.details).toEqual({ path: '$.text', index });
  });

  it('checks object keys too, not only values', () => {
    // given a NUL inside a key: it would reach jsonb as well
    const error = errorOf(() => assertSafeJson({ ['k\u0000']: 1 }, limits));
    // then
    expect(error.code).toBe('nul_character');
  });

  it('finds bad strings inside arrays of arrays', () => {
    const error = errorOf(() => assertSafeJson([['ok'], ['ok', 'bad\ud800']], limits));
    expect(error.details).toMatchObject({ path: '$[1][1]' });
  });

  it('refuses a "__proto__" own key (as JSON.parse creates it) at any depth, and names its path', () => {
    // given what body-parser hands over for a nested "__proto__"
    const body = JSON.parse('{"config": {"compaction": {"__proto__": {"polluted": "x"}}}}');
    // when the walk visits it
    const error = errorOf(() => assertSafeJson(body, limits));
    // then it is refused before anything merges it, and nothing leaked onto Object.prototype
    expect({ code: error.code, path: error.details?.path }).toEqual({ code: 'prototype_key', path: '$.config.compaction' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('lets "constructor" and "prototype" through as ordinary keys (tool inputs may use them; config validation refuses them)', () => {
    expect(() => assertSafeJson(JSON.parse('{"input": {"constructor": 1, "prototype": {"x": 2}}}'), limits)).not.toThrow();
  });
});

describe('assertNoConstructorKeys', () => {
  it('refuses a "constructor" key at any depth, inside arrays too, and names its path', () => {
    const error = errorOf(() => assertNoConstructorKeys(JSON.parse('{"config": {"list": [{"constructor": {"prototype": {}}}]}}')));
    expect({ code: error.code, path: error.details?.path }).toEqual({ code: 'prototype_key', path: '$.config.list[0]' });
  });

  it('passes bodies without one, and "constructor" as a value', () => {
    expect(() => assertNoConstructorKeys({ name: 'constructor', config: { compaction: { enabled: true } }, tags: ['constructor'] })).not.toThrow();
  });
});

describe('assertSafeString', () => {
  it('passes a clean string and fails the first bad index', () => {
    expect(() => assertSafeString('clean 😀', '$.x')).not.toThrow();
    const error = errorOf(() => assertSafeString('ab\u0000c\ud800', '$.x'));
    expect(error.code).toBe('nul_character');
    expect(error.details).toEqual({ path: '$.x', index: 2 });
  });
});

describe('parseJsonFilter', () => {
  it('returns an ordinary filter parsed, and text that is not JSON as it is', () => {
    expect(parseJsonFilter('metadata', '{"project":"atlas","tags":["a","b"]}')).toEqual({ project: 'atlas', tags: ['a', 'b'] });
    expect(parseJsonFilter('metadata', '{not-json')).toBe('{not-json');
  });

  it('accepts a filter at each limit', () => {
    const atDepth = JSON.stringify(nestedObjects(JSON_FILTER_LIMITS.maxDepth));
    const atKeys = JSON.stringify(Object.fromEntries(Array.from({ length: JSON_FILTER_LIMITS.maxKeys }, (_, i) => [`k${i}`, i])));
    const atBytes = JSON.stringify({ k: 'x'.repeat(JSON_FILTER_LIMITS.maxBytes - 8) });
    for (const text of [atDepth, atKeys, atBytes]) expect(() => parseJsonFilter('metadata', text)).not.toThrow();
  });

  it('refuses a filter nested 5,000 levels with invalid_filter naming the depth limit', () => {
    // given 5,000 levels (10 KB: the size limit is lifted, so depth is what refuses it)
    const text = '['.repeat(5000) + ']'.repeat(5000);
    const error = errorOf(() => parseJsonFilter('metadata', text, { ...JSON_FILTER_LIMITS, maxBytes: 1_000_000 }));
    expect([error.kind, error.code]).toEqual(['invalid', 'invalid_filter']);
    expect(error.details).toEqual({ parameter: 'metadata', limit: 'maxDepth', maxDepth: JSON_FILTER_LIMITS.maxDepth });
  });

  it('refuses one level too deep, one key too many, and one byte too many', () => {
    const tooDeep = JSON.stringify(nestedObjects(JSON_FILTER_LIMITS.maxDepth + 1));
    const tooMany = JSON.stringify({ a: Array.from({ length: JSON_FILTER_LIMITS.maxKeys }, (_, i) => i) });
    const tooLarge = JSON.stringify({ k: 'x'.repeat(JSON_FILTER_LIMITS.maxBytes - 7) });
    expect(errorOf(() => parseJsonFilter('metadata', tooDeep)).details.limit).toBe('maxDepth');
    expect(errorOf(() => parseJsonFilter('metadata', tooMany)).details.limit).toBe('maxKeys');
    expect(errorOf(() => parseJsonFilter('metadata', tooLarge)).details.limit).toBe('maxBytes');
  });

  it('counts the size in UTF-8 bytes, not UTF-16 units', () => {
    const text = JSON.stringify({ k: 'é'.repeat(JSON_FILTER_LIMITS.maxBytes / 2) });
    expect(errorOf(() => parseJsonFilter('metadata', text)).details.limit).toBe('maxBytes');
  });

  it('refuses what a body refuses: NUL characters and "__proto__" keys', () => {
    expect(errorOf(() => parseJsonFilter('metadata', '{"a":"x\\u0000"}')).code).toBe('nul_character');
    expect(errorOf(() => parseJsonFilter('metadata', '{"__proto__":{"x":1}}')).code).toBe('prototype_key');
  });
});
