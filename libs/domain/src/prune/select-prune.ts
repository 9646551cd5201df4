import { StoredEvent } from '../events';
import { selectAnthropicPrune } from './anthropic-prune';
import { selectOpenCodePrune } from './opencode-prune';
import { PruneOptions, pruneMode } from './options';
import { PruneDecision } from './prune-decision';
import { toolExchangesInView } from './tool-exchanges';

/**
 * What the prune job should mark now, as `tool_outputs.pruned` data, or null.
 * `currentInputTokens` (the latest usage, or the view's estimate) feeds
 * Anthropic's input_tokens trigger; OpenCode mode does not use it.
 */
export function selectPrune(
  events: readonly StoredEvent[],
  options: PruneOptions,
  currentInputTokens?: number,
): PruneDecision | null {
  if (!options.enabled) return null;
  const exchanges = toolExchangesInView(events);
  return pruneMode(options) === 'anthropic'
    ? selectAnthropicPrune(exchanges, options, currentInputTokens)
    : selectOpenCodePrune(exchanges, options);
}
