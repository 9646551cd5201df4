import { ToolOutputsPrunedData } from '../events';
import { estimateTokens, inputText } from './estimate-tokens';
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

/** Outputs (and inputs when cleared too) leave the prompt; the short placeholders are not subtracted. */
function freedTokens(exchange: ToolExchange, clearInputs: boolean): number {
  const input = clearInputs ? estimateTokens(inputText(exchange.input)) : 0;
  return estimateTokens(exchange.result.output) + input;
}

/** A decision for `chosen`, or null when there is nothing to clear or it frees less than `minimumTokens`. */
export function decidePrune(
  chosen: readonly ToolExchange[],
  policy: PrunePolicy,
  clearInputs: boolean,
  minimumTokens: number,
): PruneDecision | null {
  if (chosen.length === 0) return null;
  const tokensFreed = chosen.reduce((sum, exchange) => sum + freedTokens(exchange, clearInputs), 0);
  if (tokensFreed < minimumTokens) return null;
  return {
    callIds: chosen.map((exchange) => exchange.result.callId),
    tokensFreed,
    policy,
    clearInputs,
    cleared_tool_uses: chosen.length,
    cleared_input_tokens: tokensFreed,
  };
}
