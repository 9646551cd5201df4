import fc from 'fast-check';
import { PRESET_NAMES, PRESETS, validateSessionConfigInput } from '../config';
import { SESSION_CONFIG_SCHEMA } from '../config/schema';
import { createApiValidator } from './validator';

const validateSchema = createApiValidator().get('SessionConfig');

/** A node of SESSION_CONFIG_SCHEMA, as the generator reads it. */
interface Node {
  type?: string;
  const?: string;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  properties?: Record<string, Node>;
  required?: string[];
  anyOf?: Node[];
  oneOf?: Node[];
}

const mapFields = <T>(fields: Readonly<Record<string, Node>>, f: (field: Node) => fc.Arbitrary<T>) =>
  Object.fromEntries(Object.entries(fields).map(([key, field]) => [key, f(field)]));

/** Any JSON value of a different shape, for fields the generator breaks. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 3 }),
  fc.constant([]),
  fc.constant({}),
);

/**
 * Patches shaped by the description itself; with `broken`, any field may be
 * junk or gain an unknown key, so both verdicts come up.
 */
function patchOf(field: Node, broken: boolean): fc.Arbitrary<unknown> {
  const child = (f: Node) => patchOf(f, broken);
  const record = (arbitraries: Record<string, fc.Arbitrary<unknown>>, requiredKeys: string[] = []) => {
    const base = fc.record(arbitraries, { requiredKeys });
    return broken ? fc.tuple(base, fc.option(fc.constantFrom('bogus', 'Enabled', 'constructor'))).map(([r, extra]) => (extra ? { ...r, [extra]: 1 } : r)) : base;
  };
  const valid = (): fc.Arbitrary<unknown> => {
    if (field.const !== undefined) return fc.constant(field.const);
    if (field.enum) return fc.constantFrom(...field.enum);
    if (field.anyOf) return fc.option(child(field.anyOf.find((branch) => branch.type !== 'null')!), { nil: null });
    // The trigger's variants (each requires its `type`) and the truncation's exactly-one-of (each requires its key).
    if (field.oneOf) return fc.oneof(...field.oneOf.map((branch) => record(mapFields(branch.properties!, child), branch.required)));
    switch (field.type) {
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({ min: field.minimum, max: field.maximum });
      case 'number':
        return fc.double({ min: field.minimum, max: field.maximum, noNaN: true });
      case 'string':
        return fc.string({ minLength: field.minLength, maxLength: Math.min(field.maxLength!, 12) });
      case 'array':
        return fc.array(fc.string({ maxLength: 8 }), { maxLength: Math.min(field.maxItems!, 3) });
      case 'object':
        return record(mapFields(field.properties!, child), field.required);
      default:
        throw new Error(`no generator for ${JSON.stringify(field)}`);
    }
  };
  return broken ? fc.oneof({ arbitrary: valid(), weight: 6 }, { arbitrary: junk, weight: 1 }) : valid();
}

describe('SessionConfig: the published JSON Schema of SESSION_CONFIG_SCHEMA', () => {
  it.each(PRESET_NAMES)('accepts the whole %s preset (each seed system as a config)', (name) => {
    // given a preset: every setting, as the seed that it reproduces has it
    const config = { ...PRESETS[name], preset: name };
    // when / then both the schema and the domain's validation accept it
    expect(validateSchema(config)).toBe(true);
    expect(validateSessionConfigInput(config).ok).toBe(true);
  });

  it.each([
    ['an empty patch', {}],
    ['the README example', { preset: 'opencode' }],
    ['a trigger switched to another type, with only its type', { compaction: { trigger: { type: 'reserved' } } }],
    ['a dropped limit override', { limits: { context: null, output: 4096 } }],
    ['a truncation by bytes', { toolOutput: { truncation: { bytes: 40_000 } } }],
  ])('accepts %s', (_, config) => {
    expect(validateSchema(config)).toBe(true);
  });

  it.each([
    ['an unknown top-level key', { presets: 'codex' }],
    ['an unknown nested key', { compaction: { thresholdRation: 0.5 } }],
    ['an unknown key on a trigger variant', { compaction: { trigger: { type: 'ratio', reserved: 1 } } }],
    ['a trigger without its type', { compaction: { trigger: { outputReserve: 1 } } }],
    ['a truncation with both keys', { toolOutput: { truncation: { bytes: 1, tokens: 1 } } }],
    ['a ratio out of range', { compaction: { thresholdRatio: 1.5 } }],
    ['a fractional integer', { compaction: { maxAttempts: 2.5 } }],
    ['an unknown preset', { preset: 'claude-code' }],
  ])('refuses %s, as the domain validation does', (_, config) => {
    expect(validateSchema(config)).toBe(false);
    expect(validateSessionConfigInput(config).ok).toBe(false);
  });

  it('agrees with the domain validation on random patches, valid or broken (property)', () => {
    const verdicts = new Set<boolean>();
    fc.assert(
      fc.property(patchOf(SESSION_CONFIG_SCHEMA as Node, true), (patch) => {
        const ok = validateSessionConfigInput(patch).ok;
        verdicts.add(ok);
        expect(validateSchema(patch)).toBe(ok);
      }),
      { numRuns: 500 },
    );
    // both answers came up: the property compared acceptances and refusals
    expect(verdicts).toEqual(new Set([true, false]));
  });

  it('accepts every patch generated from the description alone (property)', () => {
    fc.assert(
      fc.property(patchOf(SESSION_CONFIG_SCHEMA as Node, false), (patch) => {
        expect(validateSchema(patch)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
