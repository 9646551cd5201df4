import { opencodeEstimateTokens } from '../tokens/chars';
import { PruneOptions } from './options';
import { decidePrune, OpenCodePrunePolicy, PruneDecision } from './prune-decision';
import { ToolExchange } from './tool-exchanges';

/**
 * OpenCode's prune (packages/opencode/src/session/compaction.ts, `prune`):
 * walk results newest first, skipping the last `protectTurns` user turns and
 * protected tools; only completed results count, an errored one is neither
 * counted nor pruned; stop at a result an earlier run pruned (everything
 * older was already decided); once the walked output exceeds
 * `protectTokens`, the result that crossed it and all older ones are chosen.
 * Applied only if they free strictly more than `minimumTokens`
 * (`if (pruned > PRUNE_MINIMUM)`), counted with OpenCode's
 * `Token.estimate`: Math.round(chars / 4).
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
    // OpenCode looks at `status === "completed"` parts only: an errored result stays whole.
    if (exchange.result.isError) continue;
    if (exchange.pruned) break;
    walked += opencodeEstimateTokens(exchange.result.output);
    if (walked > options.protectTokens) chosen.push(exchange);
  }
  return decidePrune(chosen.reverse(), policy, false, options.minimumTokens, { estimate: opencodeEstimateTokens, strictlyAbove: true });
}
