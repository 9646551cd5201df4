/**
 * The shape of SessionConfigInput as data: one description drives strict
 * validation (unknown keys, types, ranges, each with a path and a code) and
 * the deep merge preset ← tenant ← session.
 */
import { OPENCODE_TAIL_BUDGET, PRESETS } from './presets';
import { CACHE_BREAKPOINTS, CACHE_REWRITE_RULES, COMPACTION_STRATEGIES, COMPACTION_TIMINGS, PRESET_NAMES, SUMMARIZERS } from './types';

export type FieldSchema =
  | { kind: 'boolean' }
  | { kind: 'number'; min: number; max: number; integer: boolean }
  | { kind: 'string'; minLength: number; maxLength: number }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'strings'; maxItems: number; maxLength: number }
  | { kind: 'object'; fields: Readonly<Record<string, FieldSchema>> }
  /** Every field optional; `null` removes the key (model limit overrides). */
  | { kind: 'overrides'; fields: Readonly<Record<string, FieldSchema>> }
  /** `null` or the inner value; `whenSet` is what a partial object patch lands on when the current value is null. */
  | { kind: 'nullable'; of: FieldSchema; whenSet?: Record<string, unknown> }
  /** Discriminated by `type`: a patch names its type, and a new type starts from that variant's defaults. */
  | { kind: 'tagged'; variants: Readonly<Record<string, { fields: Record<string, FieldSchema>; defaults: Record<string, unknown> }>> }
  /** An object with exactly one of `keys` (Codex's Tokens(n) | Bytes(n)); replaced whole. */
  | { kind: 'oneKey'; keys: Readonly<Record<string, FieldSchema>> };

export type ConfigIssueCode =
  | 'unknown_key'
  | 'wrong_type'
  | 'out_of_range'
  | 'not_integer'
  | 'invalid_value'
  | 'too_long'
  | 'too_many_items'
  | 'missing_type'
  | 'invalid_combination';

export interface ConfigIssue {
  /** Dotted path inside the config object, e.g. `compaction.thresholdRatio`. */
  path: string;
  code: ConfigIssueCode;
  message: string;
}

const bool: FieldSchema = { kind: 'boolean' };
const int = (min: number, max: number): FieldSchema => ({ kind: 'number', min, max, integer: true });
const ratio = (min = 0.01): FieldSchema => ({ kind: 'number', min, max: 1, integer: false });
const oneOf = (values: readonly string[]): FieldSchema => ({ kind: 'enum', values });
const text = (maxLength: number, minLength = 1): FieldSchema => ({ kind: 'string', minLength, maxLength });
const strings = (maxItems: number, maxLength: number): FieldSchema => ({ kind: 'strings', maxItems, maxLength });
const nullable = (of: FieldSchema, whenSet?: Record<string, unknown>): FieldSchema => ({ kind: 'nullable', of, whenSet });
const object = (fields: Record<string, FieldSchema>): FieldSchema => ({ kind: 'object', fields });

const TOKENS = 100_000_000;
const PROMPT = 50_000;
const toolNames = strings(200, 200);

const TAIL_BUDGET = { minTokens: int(0, TOKENS), maxTokens: int(0, TOKENS), usableRatio: ratio(0) };
// A trigger switched to another type starts from the preset that made that type its own.
const triggerDefaults = (preset: keyof typeof PRESETS) => ({ ...PRESETS[preset].compaction.trigger });

export const SESSION_CONFIG_SCHEMA: FieldSchema = object({
  preset: oneOf(PRESET_NAMES),
  limits: { kind: 'overrides', fields: { context: int(0, TOKENS), input: int(1, TOKENS), output: int(1, TOKENS) } },
  compaction: object({
    enabled: bool,
    auto: bool,
    trigger: {
      kind: 'tagged',
      variants: {
        ratio: {
          fields: { outputReserve: int(0, TOKENS), tokenLimit: nullable(int(1, TOKENS)) },
          defaults: triggerDefaults('spec-000'),
        },
        reserved: {
          fields: { reserved: nullable(int(0, TOKENS)), buffer: int(0, TOKENS), outputCap: int(1, TOKENS) },
          defaults: triggerDefaults('opencode'),
        },
        'reserve-chain': {
          fields: { reserveTokens: int(0, TOKENS), maxTokens: int(0, TOKENS), maxMessages: int(0, 1_000_000) },
          defaults: triggerDefaults('spec-001'),
        },
      },
    },
    thresholdRatio: ratio(),
    strategy: oneOf(COMPACTION_STRATEGIES),
    summarizer: oneOf(SUMMARIZERS),
    model: nullable(text(200)),
    summarySystemPrompt: nullable(text(PROMPT)),
    summaryPrompt: text(PROMPT),
    summaryDirectives: strings(50, 2_000),
    retainPrompt: nullable(text(PROMPT)),
    retainDirectives: strings(50, 2_000),
    retainLastTurns: int(0, 1_000),
    tailBudget: nullable(object(TAIL_BUDGET), { ...OPENCODE_TAIL_BUDGET }),
    keepRecentTokens: int(0, TOKENS),
    keepRecentMessages: int(0, 100_000),
    targetRatio: nullable(ratio()),
    userMessageMaxTokens: int(0, TOKENS),
    protectedTools: toolNames,
    todoTools: toolNames,
    toolResultClipRunes: int(100, 1_000_000),
    summaryMaxTokens: int(100, 1_000_000),
    maxTokensAfterRatio: nullable(ratio(0.05)),
    autoContinue: bool,
    maxAttempts: int(1, 10),
    timeoutMs: int(1_000, 3_600_000),
    loopGuardRatio: ratio(),
    anticipateGrowth: bool,
  }),
  prune: object({
    enabled: bool,
    mode: oneOf(['opencode', 'anthropic']),
    protectTurns: int(0, 1_000),
    protectTokens: int(0, TOKENS),
    minimumTokens: int(0, TOKENS),
    protectedTools: toolNames,
    trigger: object({ type: oneOf(['input_tokens', 'tool_uses']), value: int(1, TOKENS) }),
    keep: object({ type: oneOf(['tool_uses']), value: int(0, 100_000) }),
    clearAtLeast: int(0, TOKENS),
    excludeTools: toolNames,
    clearToolInputs: bool,
  }),
  archive: object({
    enabled: bool,
    toolCallCutoff: int(1, 100_000),
    strategy: oneOf(['llm', 'heuristic', 'off']),
    inputClipChars: int(100, 10_000_000),
    outputClipRunes: int(50, 1_000_000),
    heuristicClipRunes: int(50, 1_000_000),
  }),
  toolOutput: object({
    enabled: bool,
    contextBudgetTokens: nullable(int(1, TOKENS)),
    viewTrim: bool,
    trimStep: { kind: 'number', min: 0, max: 0.9, integer: false },
    maxMessageBytes: int(1_024, 100 * 1024 * 1024),
    maxLineLength: int(16, 10_000_000),
    maxLines: int(1, 10_000_000),
    maxChars: int(1_024, 100 * 1024 * 1024),
    mode: oneOf(['head_tail', 'head']),
    truncation: nullable({ kind: 'oneKey', keys: { tokens: int(0, TOKENS), bytes: int(0, 1024 * 1024 * 1024) } }),
  }),
  pins: object({ maxTokens: int(0, TOKENS) }),
  cache: object({
    breakpoints: oneOf(CACHE_BREAKPOINTS),
    lifetimeSeconds: int(1, 86_400),
    rewrites: oneOf(CACHE_REWRITE_RULES),
    timing: oneOf(COMPACTION_TIMINGS),
    coldMargin: { kind: 'number', min: 0, max: 0.5, integer: false },
  }),
});

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const describe = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Appends to `issues` every way `value` (a patch: any subset of fields) breaks `schema`. */
export function collectIssues(schema: FieldSchema, value: unknown, path: string, issues: ConfigIssue[]): void {
  const issue = (code: ConfigIssueCode, message: string, at = path): void => {
    issues.push({ path: at, code, message });
  };
  const at = (key: string) => (path ? `${path}.${key}` : key);
  const wrongType = (expected: string) => issue('wrong_type', `expected ${expected}, got ${describe(value)}`);
  const fieldsOf = (fields: Readonly<Record<string, FieldSchema>>, record: Record<string, unknown>, nullRemoves: boolean) => {
    for (const [key, child] of Object.entries(record)) {
      // Own keys only: "constructor" or "__proto__" must not find Object.prototype's members.
      if (!Object.hasOwn(fields, key)) issue('unknown_key', `unknown setting "${key}"`, at(key));
      else if (!(nullRemoves && child === null)) collectIssues(fields[key], child, at(key), issues);
    }
  };

  switch (schema.kind) {
    case 'boolean':
      if (typeof value !== 'boolean') wrongType('a boolean');
      return;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return wrongType('a finite number');
      if (schema.integer && !Number.isInteger(value)) return issue('not_integer', `expected an integer, got ${value}`);
      if (value < schema.min || value > schema.max) {
        issue('out_of_range', `expected ${schema.min} to ${schema.max}, got ${value}`);
      }
      return;
    case 'string':
      if (typeof value !== 'string') return wrongType('a string');
      if (value.length < schema.minLength) issue('out_of_range', 'must not be empty');
      else if (value.length > schema.maxLength) issue('too_long', `longer than ${schema.maxLength} characters`);
      return;
    case 'enum':
      if (typeof value !== 'string') return wrongType('a string');
      if (!schema.values.includes(value)) issue('invalid_value', `expected one of ${schema.values.join(', ')}`);
      return;
    case 'strings':
      if (!Array.isArray(value)) return wrongType('an array of strings');
      if (value.length > schema.maxItems) issue('too_many_items', `more than ${schema.maxItems} items`);
      value.forEach((item, i) => {
        if (typeof item !== 'string') issue('wrong_type', `expected a string, got ${describe(item)}`, `${path}[${i}]`);
        else if (item.length > schema.maxLength) issue('too_long', `longer than ${schema.maxLength} characters`, `${path}[${i}]`);
      });
      return;
    case 'object':
    case 'overrides':
      if (!isPlainObject(value)) return wrongType('an object');
      return fieldsOf(schema.fields, value, schema.kind === 'overrides');
    case 'nullable':
      if (value !== null) collectIssues(schema.of, value, path, issues);
      return;
    case 'tagged': {
      if (!isPlainObject(value)) return wrongType('an object');
      const names = Object.keys(schema.variants);
      if (value.type === undefined) return issue('missing_type', `name the type: one of ${names.join(', ')}`, at('type'));
      const variant = typeof value.type === 'string' && Object.hasOwn(schema.variants, value.type) ? schema.variants[value.type] : undefined;
      if (!variant) return issue('invalid_value', `expected one of ${names.join(', ')}`, at('type'));
      const { type: _type, ...rest } = value;
      return fieldsOf(variant.fields, rest, false);
    }
    case 'oneKey': {
      if (!isPlainObject(value)) return wrongType('an object');
      const keys = Object.keys(value);
      if (keys.length !== 1) return issue('invalid_value', `expected exactly one of ${Object.keys(schema.keys).join(', ')}`);
      return fieldsOf(schema.keys, value, false);
    }
  }
}

/**
 * Deep merge of a (validated) patch onto `base`. `fill` is true when
 * resolving a full config: a patch landing on null or on another trigger type
 * then starts from that schema's defaults; when merging two patches it simply
 * wins. Arrays and one-key objects are replaced whole; nothing is shared with
 * the inputs.
 */
export function mergeBySchema(schema: FieldSchema, base: unknown, patch: unknown, fill: boolean): unknown {
  if (patch === undefined) return structuredClone(base);
  switch (schema.kind) {
    case 'object':
    case 'overrides': {
      if (!isPlainObject(patch)) return structuredClone(patch);
      const merged: Record<string, unknown> = isPlainObject(base) ? structuredClone(base) : {};
      for (const [key, value] of Object.entries(patch)) {
        // A null override drops the key when resolving, and is kept when merging patches so it still drops a tenant's value.
        if (schema.kind === 'overrides' && value === null && fill) delete merged[key];
        else merged[key] = mergeBySchema(schema.fields[key], merged[key], value, fill);
      }
      return merged;
    }
    case 'nullable': {
      if (patch === null) return null;
      if (base !== null && base !== undefined) return mergeBySchema(schema.of, base, patch, fill);
      return fill && schema.whenSet ? mergeBySchema(schema.of, schema.whenSet, patch, fill) : structuredClone(patch);
    }
    case 'tagged': {
      const type = (patch as { type: string }).type;
      const sameType = isPlainObject(base) && base.type === type;
      if (!sameType && !fill) return structuredClone(patch);
      const start = sameType ? base : schema.variants[type].defaults;
      return { ...structuredClone(start), ...structuredClone(patch as Record<string, unknown>) };
    }
    default:
      return structuredClone(patch);
  }
}
