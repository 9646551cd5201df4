import { ANTHROPIC_PRUNE_DEFAULTS, PruneOptions, PruneTrigger } from './options';
import { AnthropicPrunePolicy, decidePrune, PruneDecision } from './prune-decision';
import { ToolExchange } from './tool-exchanges';

function anthropicPolicy(options: PruneOptions): AnthropicPrunePolicy {
  const d = ANTHROPIC_PRUNE_DEFAULTS;
  return {
    mode: 'anthropic',
    trigger: options.trigger ?? d.trigger,
    keep: options.keep ?? d.keep,
    clearAtLeast: options.clearAtLeast ?? d.clearAtLeast,
    excludeTools: options.excludeTools ?? d.excludeTools,
    clearToolInputs: options.clearToolInputs ?? d.clearToolInputs,
    protectedTools: options.protectedTools,
  };
}

/** Without a known input size an input_tokens trigger cannot fire. */
function triggered(trigger: PruneTrigger, exchanges: readonly ToolExchange[], inputTokens: number | undefined): boolean {
  if (trigger.type === 'input_tokens') return inputTokens !== undefined && inputTokens > trigger.value;
  return exchanges.filter((exchange) => !exchange.pruned).length > trigger.value;
}

/**
 * Anthropic's `clear_tool_uses`: once the prompt exceeds `trigger`, clear every
 * tool result except the newest `keep` tool uses (of any tool), never
 * `excludeTools` nor protected tools; applied only if it frees at least
 * `clearAtLeast` tokens (so the prompt-cache break pays off).
 */
export function selectAnthropicPrune(
  exchanges: readonly ToolExchange[],
  options: PruneOptions,
  inputTokens: number | undefined,
): PruneDecision | null {
  const policy = anthropicPolicy(options);
  if (!triggered(policy.trigger, exchanges, inputTokens)) return null;
  const never = new Set([...policy.excludeTools, ...policy.protectedTools]);
  const older = exchanges.slice(0, Math.max(0, exchanges.length - policy.keep.value));
  const chosen = older.filter((exchange) => !exchange.pruned && !never.has(exchange.result.name));
  return decidePrune(chosen, policy, policy.clearToolInputs, policy.clearAtLeast);
}
