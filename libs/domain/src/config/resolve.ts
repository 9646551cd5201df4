import { invalid } from '../errors';
import { PruneMode, pruneMode, PruneOptions } from '../prune/options';
import { DEFAULT_PRESET, PRESETS } from './presets';
import { mergeConfig } from './merge';
import type { SessionConfigInput } from './schema';
import { PresetName, SessionConfig } from './types';
import { ConfigIssue, configIssues } from './validate';

export type ConfigValidation = { ok: true; value: SessionConfigInput } | { ok: false; issues: ConfigIssue[] };

/** Strict check of a config patch (tenant defaults, session config, a config_changed patch). */
export function validateSessionConfigInput(input: unknown): ConfigValidation {
  const issues = configIssues(input);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: input as SessionConfigInput };
}

function invalidConfig(source: string, issues: ConfigIssue[]) {
  const list = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  return invalid('invalid_config', `invalid ${source} config: ${list}`, { source, issues });
}

function assertValid(input: unknown, source: string): SessionConfigInput {
  if (input === undefined || input === null) return {};
  const result = validateSessionConfigInput(input);
  if (!result.ok) throw invalidConfig(source, result.issues);
  return result.value;
}

/**
 * The prune mode an input asks for: its explicit mode, else 'anthropic' when
 * it sets an Anthropic parameter (the prune job's own rule, pruneMode). The
 * session's wish beats the tenant's; neither keeps the preset's.
 */
function requestedPruneMode(inputs: readonly SessionConfigInput[]): PruneMode | undefined {
  for (const { prune } of inputs) {
    if (!prune) continue;
    const mode = pruneMode(prune as PruneOptions);
    if (prune.mode !== undefined || mode === 'anthropic') return mode;
  }
  return undefined;
}

/** Rules across fields, checked on the resolved config. */
function consistencyIssues(config: SessionConfig): ConfigIssue[] {
  const budget = config.compaction.tailBudget;
  return budget && budget.minTokens > budget.maxTokens
    ? [{ path: 'compaction.tailBudget', code: 'invalid_combination', message: 'minTokens is above maxTokens' }]
    : [];
}

/**
 * The session's effective config: the preset (the session's, else the
 * tenant's, else `presetName`, else DEFAULT_PRESET), then the tenant's
 * defaults, then the session's overrides on top. Throws an `invalid`
 * DomainError (code invalid_config, details.issues) on bad input.
 */
export function resolveSessionConfig(
  presetName?: PresetName | null,
  tenantDefaults?: unknown,
  sessionOverrides?: unknown,
): SessionConfig {
  // Every append with tool results and every read resolves its session's config: a few distinct ones serve them all.
  const key = JSON.stringify([presetName ?? null, tenantDefaults ?? null, sessionOverrides ?? null]);
  const known = resolved.get(key);
  if (known) return known;
  const config = deepFreeze(resolveUncached(presetName, tenantDefaults, sessionOverrides));
  if (resolved.size >= RESOLVED_CONFIGS) resolved.clear();
  resolved.set(key, config);
  return config;
}

/** Distinct (preset, tenant, session) inputs kept resolved; the map starts over beyond it. */
const RESOLVED_CONFIGS = 1_000;
const resolved = new Map<string, SessionConfig>();

/** Frozen, since every caller with the same inputs shares it. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function resolveUncached(presetName: PresetName | null | undefined, tenantDefaults: unknown, sessionOverrides: unknown): SessionConfig {
  const tenant = assertValid(tenantDefaults, 'tenant');
  const session = assertValid(sessionOverrides, 'session');
  const preset = session.preset ?? tenant.preset ?? presetName ?? DEFAULT_PRESET;
  const merged = [tenant, session].reduce<unknown>(
    (config, input) => mergeConfig(config, input, true),
    PRESETS[preset],
  ) as SessionConfig;
  const config: SessionConfig = { ...merged, preset };
  config.prune.mode = requestedPruneMode([session, tenant]) ?? config.prune.mode;
  const issues = consistencyIssues(config);
  if (issues.length > 0) throw invalidConfig('resolved', issues);
  return config;
}

/**
 * A session's overrides after a `session.config_changed` patch (patch wins,
 * deep). Resolve the result to use it; changing `preset` re-bases the session
 * on the new preset with the tenant's and session's overrides kept on top.
 */
export function applyConfigPatch(overrides: SessionConfigInput, patch: unknown): SessionConfigInput {
  const valid = assertValid(patch, 'patch');
  return mergeConfig(overrides, valid, false) as SessionConfigInput;
}
