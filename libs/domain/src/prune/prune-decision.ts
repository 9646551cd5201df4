import { ToolOutputsPrunedData } from '../events';
import { estimateTokens, inputText } from '../tokens/chars';
import { PruneKeep, PruneTrigger } from './options';
import { ToolExchange } from './tool-exchanges';

/** The effective parameters a decision was made with (stored in the event for audit). */
export type OpenCodePrunePolicy = {
  mode: 'opencode';
  protectTurns: number;
  protectTokens: number;
  minimumTokens: number;
  protectedTools: readonly string[];
};

export type AnthropicPrunePolicy = {
  mode: 'anthropic';
  trigger: PruneTrigger;
  keep: PruneKeep;
  clearAtLeast: number;
  excludeTools: readonly string[];
  clearToolInputs: boolean;
  protectedTools: readonly string[];
};

export type PrunePolicy = OpenCodePrunePolicy | AnthropicPrunePolicy;

/** The `tool_outputs.pruned` data to append, with Anthropic's report fields. */
export interface PruneDecision extends ToolOutputsPrunedData {
  policy: PrunePolicy;
  clearInputs: boolean;
  /** Anthropic's name for callIds.length. */
  cleared_tool_uses: number;
  /** Anthropic's name for the prompt tokens removed: equals tokensFreed. */
  cleared_input_tokens: number;
}

export interface DecideOptions {
  /** The token estimate (default ceil(chars / 4); OpenCode's rounds). */
  estimate?: (text: string) => number;
  /** OpenCode applies a prune only when it frees strictly more than the minimum; Anthropic's clear_at_least is "at least". */
  strictlyAbove?: boolean;
}

/** Outputs (and inputs when cleared too) leave the prompt; the short placeholders are not subtracted. */
function freedTokens(exchange: ToolExchange, clearInputs: boolean, estimate: (text: string) => number): number {
  const input = clearInputs ? estimate(inputText(exchange.input)) : 0;
  return estimate(exchange.result.output) + input;
}

/** A decision for `chosen`, or null when there is nothing to clear or it frees too little (below, or for OpenCode not above, `minimumTokens`). */
export function decidePrune(
  chosen: readonly ToolExchange[],
  policy: PrunePolicy,
  clearInputs: boolean,
  minimumTokens: number,
  options: DecideOptions = {},
): PruneDecision | null {
  if (chosen.length === 0) return null;
  const estimate = options.estimate ?? estimateTokens;
  const tokensFreed = chosen.reduce((sum, exchange) => sum + freedTokens(exchange, clearInputs, estimate), 0);
  if (options.strictlyAbove ? tokensFreed <= minimumTokens : tokensFreed < minimumTokens) return null;
  return {
    callIds: chosen.map((exchange) => exchange.result.callId),
    tokensFreed,
    policy,
    clearInputs,
    cleared_tool_uses: chosen.length,
    cleared_input_tokens: tokensFreed,
  };
}
