/**
 * The session config patch (SessionConfigInput), described once in TypeBox:
 * the description is the JSON Schema that ajv validates with (validate.ts),
 * that drives the merge preset ← tenant ← session (merge.ts) and that the
 * OpenAPI document publishes (json-schema.ts), and SessionConfigInput is its
 * static type. Every key is optional; unknown keys are refused.
 *
 * Two annotations, read by the merge only:
 * - `x-defaults` on an object: what a patch of it starts from when resolving
 *   finds no value of it (null, or a trigger of another type).
 * - `x-null-drops` on an object: a null value removes the key when resolving
 *   (a model limit override: the model's own limit applies again).
 */
import { type Static, type TProperties, type TOptional, type TSchema, Type } from '@sinclair/typebox';
import { OPENCODE_TAIL_BUDGET, PRESETS } from './presets';
import { CACHE_BREAKPOINTS, CACHE_REWRITE_RULES, COMPACTION_STRATEGIES, COMPACTION_TIMINGS, PRESET_NAMES, SUMMARIZERS } from './types';

/** Declared to ajv (strict mode refuses unknown keywords) and left out of the published document. */
export const ANNOTATIONS = ['x-defaults', 'x-null-drops'] as const;

const TOKENS = 100_000_000;
const PROMPT = 50_000;

const optional = <T extends TProperties>(fields: T) =>
  Object.fromEntries(Object.entries(fields).map(([key, field]) => [key, Type.Optional(field)])) as { [K in keyof T]: TOptional<T[K]> };

/** A patch of an object: any subset of its fields. */
const object = <T extends TProperties>(fields: T, options: Record<string, unknown> = {}) =>
  Type.Object(optional(fields), { additionalProperties: false, ...options });

const int = (minimum: number, maximum: number) => Type.Integer({ minimum, maximum });
const ratio = (minimum = 0.01, maximum = 1) => Type.Number({ minimum, maximum });
const text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const strings = (maxItems: number, maxLength: number) => Type.Array(Type.String({ maxLength }), { maxItems });
const nullable = <T extends TSchema>(of: T) => Type.Union([of, Type.Null()]);
// `{type: 'string', enum}` rather than TypeBox's union of literals: one keyword, one error naming the values.
const choice = <const T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values] });
const tag = <const T extends string>(value: T) => Type.Unsafe<T>({ const: value });

/**
 * A trigger variant: `type` names it, and switching to it starts from the
 * trigger of the preset that made that type its own.
 */
const trigger = <N extends string, T extends TProperties>(type: N, preset: keyof typeof PRESETS, fields: T) =>
  Type.Object(
    { type: tag(type), ...optional(fields) },
    { additionalProperties: false, 'x-defaults': { ...PRESETS[preset].compaction.trigger } },
  );

const TRIGGERS = [
  trigger('ratio', 'spec-000', { outputReserve: int(0, TOKENS), tokenLimit: nullable(int(1, TOKENS)) }),
  trigger('reserved', 'opencode', { reserved: nullable(int(0, TOKENS)), buffer: int(0, TOKENS), outputCap: int(1, TOKENS) }),
  trigger('reserve-chain', 'spec-001', { reserveTokens: int(0, TOKENS), maxTokens: int(0, TOKENS), maxMessages: int(0, 1_000_000) }),
];

/**
 * Discriminated by `type` (OpenAPI's oneOf): ajv's discriminator validates
 * the variant the patch names, so an error names its field, not "no branch matched".
 */
const tagged = <T extends TSchema[]>(variants: [...T]) =>
  Type.Unsafe<Static<T[number]>>({ type: 'object', discriminator: { propertyName: 'type' }, oneOf: variants });

/** Exactly one of Codex's Tokens(n) | Bytes(n); replaced whole by a patch. */
const truncation = Type.Unsafe<{ tokens: number } | { bytes: number }>({
  oneOf: [
    Type.Object({ tokens: int(0, TOKENS) }, { additionalProperties: false }),
    Type.Object({ bytes: int(0, 1024 * 1024 * 1024) }, { additionalProperties: false }),
  ],
});

const toolNames = strings(200, 200);

export const SESSION_CONFIG_SCHEMA = object(
  {
    preset: choice(PRESET_NAMES),
    limits: object({ context: nullable(int(0, TOKENS)), input: nullable(int(1, TOKENS)), output: nullable(int(1, TOKENS)) }, { 'x-null-drops': true }),
    compaction: object({
      enabled: Type.Boolean(),
      auto: Type.Boolean(),
      trigger: tagged(TRIGGERS),
      thresholdRatio: ratio(),
      strategy: choice(COMPACTION_STRATEGIES),
      summarizer: choice(SUMMARIZERS),
      model: nullable(text(200)),
      summarySystemPrompt: nullable(text(PROMPT)),
      summaryPrompt: text(PROMPT),
      summaryDirectives: strings(50, 2_000),
      retainPrompt: nullable(text(PROMPT)),
      retainDirectives: strings(50, 2_000),
      retainLastTurns: int(0, 1_000),
      tailBudget: nullable(
        object(
          { minTokens: int(0, TOKENS), maxTokens: int(0, TOKENS), usableRatio: ratio(0) },
          { 'x-defaults': { ...OPENCODE_TAIL_BUDGET } },
        ),
      ),
      keepRecentTokens: int(0, TOKENS),
      keepRecentMessages: int(0, 100_000),
      targetRatio: nullable(ratio()),
      userMessageMaxTokens: int(0, TOKENS),
      protectedTools: toolNames,
      todoTools: toolNames,
      toolResultClipRunes: int(100, 1_000_000),
      summaryMaxTokens: int(100, 1_000_000),
      maxTokensAfterRatio: nullable(ratio(0.05)),
      autoContinue: Type.Boolean(),
      maxAttempts: int(1, 10),
      timeoutMs: int(1_000, 3_600_000),
      loopGuardRatio: ratio(),
      anticipateGrowth: Type.Boolean(),
    }),
    prune: object({
      enabled: Type.Boolean(),
      mode: choice(['opencode', 'anthropic']),
      protectTurns: int(0, 1_000),
      protectTokens: int(0, TOKENS),
      minimumTokens: int(0, TOKENS),
      protectedTools: toolNames,
      trigger: object({ type: choice(['input_tokens', 'tool_uses']), value: int(1, TOKENS) }),
      keep: object({ type: choice(['tool_uses']), value: int(0, 100_000) }),
      clearAtLeast: int(0, TOKENS),
      excludeTools: toolNames,
      clearToolInputs: Type.Boolean(),
    }),
    archive: object({
      enabled: Type.Boolean(),
      toolCallCutoff: int(1, 100_000),
      strategy: choice(['llm', 'heuristic', 'off']),
      inputClipChars: int(100, 10_000_000),
      outputClipRunes: int(50, 1_000_000),
      heuristicClipRunes: int(50, 1_000_000),
    }),
    toolOutput: object({
      enabled: Type.Boolean(),
      contextBudgetTokens: nullable(int(1, TOKENS)),
      viewTrim: Type.Boolean(),
      trimStep: ratio(0, 0.9),
      maxMessageBytes: int(1_024, 100 * 1024 * 1024),
      maxLineLength: int(16, 10_000_000),
      maxLines: int(1, 10_000_000),
      maxChars: int(1_024, 100 * 1024 * 1024),
      mode: choice(['head_tail', 'head']),
      truncation: nullable(truncation),
    }),
    pins: object({ maxTokens: int(0, TOKENS) }),
    cache: object({
      breakpoints: choice(CACHE_BREAKPOINTS),
      lifetimeSeconds: int(1, 86_400),
      rewrites: choice(CACHE_REWRITE_RULES),
      timing: choice(COMPACTION_TIMINGS),
      coldMargin: ratio(0, 0.5),
    }),
  },
  { description: 'Session settings, any subset: unset keys come from the tenant defaults, then the preset' },
);

/** A config patch (tenant defaults, session config, a config_changed patch): any subset; a trigger names its type; a null limit drops that override. */
export type SessionConfigInput = Static<typeof SESSION_CONFIG_SCHEMA>;
