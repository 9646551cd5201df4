import { estimateTokens } from './estimate-tokens';
import { PruneOptions } from './options';
import { decidePrune, OpenCodePrunePolicy, PruneDecision } from './prune-decision';
import { ToolExchange } from './tool-exchanges';

/**
 * OpenCode's prune: walk results newest first, skipping the last
 * `protectTurns` user turns and protected tools; stop at a result an earlier
 * run pruned (everything older was already decided); once the walked output
 * exceeds `protectTokens`, the result that crossed it and all older ones are
 * chosen. Applied only if they free at least `minimumTokens`.
 */
export function selectOpenCodePrune(exchanges: readonly ToolExchange[], options: PruneOptions): PruneDecision | null {
  const policy: OpenCodePrunePolicy = {
    mode: 'opencode',
    protectTurns: options.protectTurns,
    protectTokens: options.protectTokens,
    minimumTokens: options.minimumTokens,
    protectedTools: options.protectedTools,
  };
  const protectedTools = new Set(options.protectedTools);
  const chosen: ToolExchange[] = [];
  let walked = 0;
  for (let i = exchanges.length - 1; i >= 0; i--) {
    const exchange = exchanges[i];
    if (exchange.userTurnsAfter < options.protectTurns || protectedTools.has(exchange.result.name)) continue;
    if (exchange.pruned) break;
    walked += estimateTokens(exchange.result.output);
    if (walked > options.protectTokens) chosen.push(exchange);
  }
  return decidePrune(chosen.reverse(), policy, false, options.minimumTokens);
}
