import { Database } from '@app/database';
import { CompactionCompletedData, CompactionPlan, NothingToCompact, planCompaction, SessionView, StoredEvent } from '@app/domain';
import { SummaryChain, SummaryChainInput, SummaryChainResult } from './summary-chain';
import { loadToolOutputs } from './tool-output-loader';

/** A session's window as a compaction reads it: the events after its pivot, the pivot, and the session. */
export interface WindowToSummarize {
  tenantId: string;
  sessionId: string;
  events: readonly StoredEvent[];
  pivot: CompactionCompletedData | null;
  session: { model: string; system: string | null };
  /** The session's view and settings composed on that window. */
  composed: SessionView;
  marker: SummaryChainInput['marker'];
  signal?: AbortSignal;
}

export type WindowSummary = NothingToCompact | ({ kind: 'summary'; plan: CompactionPlan } & SummaryChainResult);

/**
 * The compaction pipeline up to its decision, one for the worker's run and
 * the API's dry run: plan the cut of the window, read the whole tool outputs
 * its views truncated (the head's, and the kept ones' hidden errors), and run
 * the summary chain. Writes nothing: committing is the caller's.
 */
export class WindowSummarizer {
  constructor(
    private readonly db: Database,
    private readonly chain: SummaryChain,
  ) {}

  async summarize(window: WindowToSummarize): Promise<WindowSummary> {
    const { composed, marker } = window;
    const { compaction } = composed.config;
    const plan = planCompaction({ events: window.events, pivot: window.pivot, markerSeq: marker.seq, config: compaction, usable: composed.overflow.usable });
    if (plan.kind === 'nothing') return plan;
    const outputs = await loadToolOutputs(this.db, window.tenantId, window.sessionId, [...plan.sourceHead, ...plan.keptMessages]);
    const result = await this.chain.run({
      plan,
      marker,
      config: compaction,
      session: window.session,
      tokensBefore: composed.view.tokens.estimated,
      overhead: composed.view.tokens.overhead,
      usable: composed.overflow.usable,
      signal: window.signal,
      outputs,
    });
    return { kind: 'summary', plan, ...result };
  }
}
