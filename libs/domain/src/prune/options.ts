/**
 * Settings of the prune and archive jobs. The config module supplies these
 * objects (same field names); the defaults live there, except the Anthropic
 * ones below, which only apply once Anthropic mode is chosen.
 */

export type PruneMode = 'opencode' | 'anthropic';

export interface PruneTrigger {
  type: 'input_tokens' | 'tool_uses';
  value: number;
}

export interface PruneKeep {
  type: 'tool_uses';
  value: number;
}

export interface PruneOptions {
  enabled: boolean;
  /** Without it, setting any Anthropic parameter selects 'anthropic' (see pruneMode). */
  mode?: PruneMode;
  protectTurns: number;
  protectTokens: number;
  minimumTokens: number;
  /** Never pruned, in either mode. */
  protectedTools: readonly string[];
  trigger?: PruneTrigger;
  keep?: PruneKeep;
  clearAtLeast?: number;
  excludeTools?: readonly string[];
  clearToolInputs?: boolean;
}

export type ArchiveStrategy = 'llm' | 'heuristic' | 'off';

export interface ArchiveOptions {
  enabled: boolean;
  toolCallCutoff: number;
  strategy: ArchiveStrategy;
  inputClipChars: number;
  outputClipRunes: number;
  heuristicClipRunes: number;
}

/** Anthropic's `clear_tool_uses_20250919` defaults. */
export const ANTHROPIC_PRUNE_DEFAULTS: Readonly<
  Required<Pick<PruneOptions, 'trigger' | 'keep' | 'clearAtLeast' | 'excludeTools' | 'clearToolInputs'>>
> = {
  trigger: { type: 'input_tokens', value: 100_000 },
  keep: { type: 'tool_uses', value: 3 },
  clearAtLeast: 0,
  excludeTools: [],
  clearToolInputs: false,
};

/**
 * The explicit `mode`, else 'anthropic' as soon as an Anthropic parameter is
 * set. Values that mean "nothing" (an empty excludeTools, clearToolInputs
 * false) do not switch modes, so a config filling them in stays OpenCode.
 */
export function pruneMode(options: PruneOptions): PruneMode {
  if (options.mode) return options.mode;
  const anthropic =
    options.trigger !== undefined ||
    options.keep !== undefined ||
    options.clearAtLeast !== undefined ||
    (options.excludeTools?.length ?? 0) > 0 ||
    options.clearToolInputs === true;
  return anthropic ? 'anthropic' : 'opencode';
}
