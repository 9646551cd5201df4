export * from './types';
export { DEFAULT_PRESET, PRESETS, PRUNE_ENABLED_BY_PRESET } from './presets';
export type { SessionConfigInput } from './schema';
export type { ConfigIssue, ConfigIssueCode } from './validate';
export { applyConfigPatch, resolveSessionConfig, validateSessionConfigInput } from './resolve';
export type { ConfigValidation } from './resolve';
