import { Counter, Histogram, Registry } from 'prom-client';
import { RewriteCacheCost, RewriteDeferral } from '@app/domain';

const TOKEN_BUCKETS = [1_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000];

/**
 * What each committed rewrite of the prefix (compaction, prune, archive)
 * cost in prompt cache, and the prunes and archives that waited: the same
 * figures as GET /compactions (docs/compaction.md, "What a rewrite cost"),
 * on the registry of the process that committed it (the worker's, or the
 * API's for `POST .../prune {wait: true}`).
 */
export class RewriteMetrics {
  private readonly invalidated: Histogram<'kind'>;
  private readonly removed: Histogram<'kind'>;
  private readonly breakEven: Histogram<'kind'>;
  private readonly deferredTotal: Counter<'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.invalidated = new Histogram({
      name: 'session_store_rewrite_invalidated_tokens',
      help: "Cached prefix tokens a committed rewrite invalidated (from the last step's usage before it), by kind",
      labelNames: ['kind'],
      buckets: TOKEN_BUCKETS,
      registers,
    });
    this.removed = new Histogram({
      name: 'session_store_rewrite_removed_tokens',
      help: 'Prompt tokens a committed rewrite removed from the context, by kind',
      labelNames: ['kind'],
      buckets: TOKEN_BUCKETS,
      registers,
    });
    this.breakEven = new Histogram({
      name: 'session_store_rewrite_break_even_steps',
      help: 'Steps of saving until a committed rewrite repays its cache write, by kind (rewrites with nothing known of the cache or nothing removed are not observed)',
      labelNames: ['kind'],
      buckets: [0, 1, 2, 5, 10, 20, 50, 100, 200, 500],
      registers,
    });
    this.deferredTotal = new Counter({
      name: 'session_store_rewrites_deferred_total',
      help: 'Prune and archive runs that found outputs to clear but waited (rule cache.rewrites pay-off), by reason',
      labelNames: ['reason'],
      registers,
    });
  }

  observe(cost: RewriteCacheCost): void {
    this.removed.observe({ kind: cost.kind }, cost.removedTokens);
    if (cost.invalidatedTokens !== null) this.invalidated.observe({ kind: cost.kind }, cost.invalidatedTokens);
    if (cost.breakEvenSteps !== null) this.breakEven.observe({ kind: cost.kind }, cost.breakEvenSteps);
  }

  deferred(reason: RewriteDeferral): void {
    this.deferredTotal.inc({ reason });
  }
}
