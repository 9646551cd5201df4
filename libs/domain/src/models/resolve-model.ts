import { MODEL_REGISTRY, ModelEntry, ModelLimits, TokenizerFamily } from './model-registry';

/** OpenCode's OUTPUT_TOKEN_MAX: the output reserve assumed for a model nothing else describes. */
export const DEFAULT_OUTPUT_TOKENS = 32_000;

export type ModelLimitOverrides = Partial<ModelLimits>;

const BY_ID = new Map<string, ModelEntry>(MODEL_REGISTRY.flatMap((entry) => entry.ids.map((id) => [id, entry])));

/**
 * Snapshot and deployment suffixes providers append to a model id: dates
 * (-20250929, -2024-08-06, -09-2025), revisions (-0613, -001), -latest,
 * -preview, -exp, Bedrock's -v1:0 and Vertex's @20250929.
 */
const VERSION_SUFFIX = /(?:-(?:\d{8}|\d{4}-\d{2}-\d{2}|\d{2}-\d{4}|\d{3,4}|latest|preview|exp|v\d+(?::\d+)?)|@\d{8})$/;

/**
 * Reduces what clients send to a registry id: routing prefixes (`openai/`,
 * `models/`, Bedrock's `us.anthropic.`), fine-tune wrappers (`ft:base:org::id`)
 * and OpenRouter's dotted Claude versions (`claude-sonnet-4.5`).
 */
function normalizeModelId(model: string): string {
  let id = model.trim().toLowerCase();
  id = id.slice(id.lastIndexOf('/') + 1);
  id = id.replace(/^(?:[a-z]+\.)?anthropic\./, '');
  id = /^ft:([^:]+)/.exec(id)?.[1] ?? id;
  return id.startsWith('claude-') ? id.replace(/\./g, '-') : id;
}

/** The registry row for a model id, trying the id, then the id without each trailing version suffix. */
export function findModel(model: string): ModelEntry | undefined {
  let id = normalizeModelId(model);
  for (;;) {
    const entry = BY_ID.get(id);
    if (entry) return entry;
    const shorter = id.replace(VERSION_SUFFIX, '');
    if (shorter === id) return undefined;
    id = shorter;
  }
}

/** The tokenizer to estimate with; unknown models get ceil(chars / 4). */
export function tokenizerFor(model: string): TokenizerFamily {
  return findModel(model)?.tokenizer ?? 'approx';
}

/**
 * The limits to plan with: the registry's, field by field replaced by the
 * session's overrides. Overriding `context` drops the registry's separate
 * input cap (the session redefined the window). An unknown model needs at
 * least `context` or `input`; else null, which the API reports as 422.
 */
export function resolveModelLimits(model: string, overrides: ModelLimitOverrides = {}): ModelLimits | null {
  const known = findModel(model)?.limits;
  const input = overrides.input ?? (overrides.context === undefined ? known?.input : undefined);
  const context = overrides.context ?? known?.context;
  if (context === undefined && input === undefined) return null;
  const output = overrides.output ?? known?.output ?? defaultOutput(context);
  const limits: ModelLimits = { context: context ?? input! + output, output };
  return input === undefined ? limits : { ...limits, input };
}

/** A quarter of a small custom window at most, so the reserve never swallows it. */
function defaultOutput(context: number | undefined): number {
  return context ? Math.min(DEFAULT_OUTPUT_TOKENS, Math.floor(context / 4)) : DEFAULT_OUTPUT_TOKENS;
}
