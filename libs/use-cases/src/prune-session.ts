import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import { archiveActive, ArchiveDecision, archivedEvent, buildDigestPrompt, compactionFactsOf, composeSessionView, costsOfCommitted, deriveCompactionState, DigestProvenance, eventTokens, finishLlmDigest, heuristicDigest, judgeRewrite, maintenanceWanted, NewEvent, NO_LOOKUP, planRewrite, planStillHolds, PruneDecision, prunedEvent, pruneMode, RewriteCacheCost, RewriteDeferral, RewriteVerdict, rewroteSincePivot, selectArchive, selectMaintenance, selectPruneAfterArchive, SessionConfig, sessionSettings, SessionView } from '@app/domain';
import { logWriter, readWindow, WindowRead } from '@app/event-store';
import { SessionJobData } from '@app/queue';
import { Summarizers } from '@app/summarizer';
import { AppendCommitted } from './append-committed';
import { appendUpkeep } from './append-upkeep';
import { RewriteMetrics } from './rewrite-metrics';

/** Outputs a job chose but left in place for now (cache.rewrites `pay-off`): `reason` says until when. */
type Deferred = { status: 'deferred'; reason: RewriteDeferral; callIds: string[] };

export type PruneResult =
  | { status: 'disabled' | 'nothing' }
  | (Deferred & { tokensFreed: number })
  | ({ status: 'pruned'; seq: number; eventId: string; mode: string; cache: RewriteCacheCost } & PruneDecision);

export type ArchiveResult =
  | { status: 'disabled' | 'nothing' }
  | Deferred
  | ({ status: 'archived'; seq: number; eventId: string; callIds: string[]; digest: string; digestTokens: number; cache: RewriteCacheCost } & DigestProvenance);

/** What a run did: the job's return value and the body of `POST .../prune {wait: true}`. */
export interface PruneReport {
  sessionId: string;
  headSeq: number;
  prune: PruneResult;
  archive: ArchiveResult;
  /** The cache rule's verdict on what the run chose (judgeRewrite), null when it chose nothing. */
  rewrite: RewriteVerdict | null;
}

/** The LLM digest of the planned pairs, or why strategy `llm` falls back to the heuristic one. */
type LlmDigest =
  | { kind: 'none' }
  | { kind: 'digest'; callIds: string[]; text: string; model: string }
  | { kind: 'fallback'; reason: string };

const REPLAN = Symbol('replan');
/** Plans a run makes when the log outruns its LLM digest; the last one commits the heuristic digest instead. */
const MAX_ROUNDS = 3;

/** The report of a run that appended nothing: per job, whether it is off for the session or found nothing. */
const idleReport = (sessionId: string, headSeq: number, config: SessionConfig): PruneReport => ({
  sessionId,
  headSeq,
  prune: { status: config.prune.enabled ? 'nothing' : 'disabled' },
  archive: { status: archiveActive(config.archive) ? 'nothing' : 'disabled' },
  rewrite: null,
});

type Planned = { archive: { callIds: string[]; pairs: ArchiveDecision['pairs'] } | null; prune: PruneDecision | null };

/** A run that chose outputs and waits: what each job chose, and why it waits. */
function deferredReport(sessionId: string, headSeq: number, config: SessionConfig, planned: Planned, verdict: RewriteVerdict): PruneReport {
  const report = { ...idleReport(sessionId, headSeq, config), rewrite: verdict };
  const reason = verdict.deferral!;
  if (planned.archive) report.archive = { status: 'deferred', reason, callIds: planned.archive.callIds };
  if (planned.prune) report.prune = { status: 'deferred', reason, callIds: planned.prune.callIds, tokensFreed: planned.prune.tokensFreed };
  return report;
}

/**
 * The session's config, and the view's token figure when Anthropic's
 * input_tokens trigger needs it: composing the view re-estimates every
 * pruned message, the costliest step of a run that finds nothing, so it is
 * composed once, and only when a figure is needed.
 */
const settingsOf = (read: WindowRead) => {
  const { config } = sessionSettings(read.session);
  const { prune } = config;
  let composed: SessionView | undefined;
  const view = () => (composed ??= composeSessionView(read.session, read));
  const needsFigure = prune.enabled && pruneMode(prune) === 'anthropic' && prune.trigger.type === 'input_tokens';
  return { config, inputTokens: needsFigure ? view().view.tokens.estimated : undefined, view };
};

/**
 * The cache rule's verdict (judgeRewrite) on what a run chose, on the view
 * it would change: whether a compaction is pending or due, the figures the
 * repayment needs, and whether a prune or archive already ran since the
 * pivot. Null when nothing was chosen.
 */
function rewriteVerdict(read: WindowRead, config: SessionConfig, view: SessionView, planned: Planned): RewriteVerdict | null {
  const plan = planRewrite(read.events, view.view.sources, planned);
  if (!plan) return null;
  const { overflow } = view;
  const { pendingMarkerSeq } = deriveCompactionState(compactionFactsOf(read), { runningMarkerSeq: null, loopGuardRatio: config.compaction.loopGuardRatio });
  // Only an automatic compaction to come bounds the steps a clearing saves over.
  const automatic = overflow.usable !== null && (overflow.reason === 'threshold' || overflow.reason === 'below_threshold');
  return judgeRewrite(
    config.cache.rewrites,
    plan,
    {
      compactionPending: pendingMarkerSeq !== null,
      compactionDue: overflow.overflow,
      figure: view.view.tokens.estimated,
      threshold: automatic ? overflow.threshold : null,
      expectedGrowth: view.view.tokens.expectedGrowth,
    },
    rewroteSincePivot(read.events),
  );
}

/**
 * The prune and archive job: plan on the window without a lock,
 * make the LLM digest if one is wanted (no transaction open meanwhile), then
 * append under the session lock after re-running the selection on the fresh
 * log, so a concurrent run or new events never make it mark anything twice:
 * a second run marks nothing new.
 */
@Injectable()
export class PruneSession {
  private readonly logger = new Logger(PruneSession.name);

  constructor(
    private readonly db: Database,
    private readonly summarizers: Summarizers,
    private readonly metrics: RewriteMetrics,
    private readonly appendCommitted: AppendCommitted,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Null when the session does not exist (for this tenant). */
  async run({ tenantId, sessionId }: SessionJobData, options: { signal?: AbortSignal } = {}): Promise<PruneReport | null> {
    for (let round = 1; ; round++) {
      const read = await this.db.tenantTx(tenantId, (tx) => readWindow(tx, sessionId));
      if (!read) return null;
      const { config, inputTokens, view } = settingsOf(read);
      const planned = maintenanceWanted(config) ? selectMaintenance(read.events, config, inputTokens) : { archive: null, prune: null };
      // Nothing now: a later step schedules the next run, so the lock is not worth taking.
      if (!planned.archive && !planned.prune) return idleReport(sessionId, read.session.headSeq, config);
      // Waiting: no lock and no LLM digest either; the verdict is taken again under the lock before anything is written.
      const verdict = rewriteVerdict(read, config, view(), planned);
      if (verdict && !verdict.apply) {
        this.metrics.deferred(verdict.deferral!);
        return deferredReport(sessionId, read.session.headSeq, config, planned, verdict);
      }
      const llm = planned.archive && config.archive.strategy === 'llm' ? await this.llmDigest(read, config, planned.archive, options.signal) : { kind: 'none' as const };
      const committed = await this.commit(tenantId, sessionId, llm, round === MAX_ROUNDS);
      if (committed === REPLAN) continue;
      // The events committed: a prune record, an archive record, or both.
      const appended = committed ? [committed.prune.status === 'pruned', committed.archive.status === 'archived'].filter(Boolean).length : 0;
      if (committed && appended > 0) await this.appendCommitted.after({ tenantId, sessionId, appended, headSeq: committed.headSeq, outbox: [], pruneAfterSeq: null });
      return committed;
    }
  }

  private async commit(tenantId: string, sessionId: string, llm: LlmDigest, lastRound: boolean): Promise<PruneReport | null | typeof REPLAN> {
    return this.db.tenantTx(tenantId, async (tx) => {
      const lockRead = await logWriter.lock(tx, sessionId, NO_LOOKUP);
      if (!lockRead) return null;
      const locked = lockRead.state;
      // Read after the lock: the fresh log, with every concurrent append and run committed.
      const read = (await readWindow(tx, sessionId))!;
      const { config, inputTokens, view } = settingsOf(read);
      const fresh = selectArchive(read.events, config.archive);
      let archive: { callIds: string[]; digest: string; provenance: DigestProvenance } | null = null;
      if (fresh) {
        const holds = llm.kind === 'digest' && planStillHolds(llm.callIds, fresh.callIds);
        const wantsLlm = config.archive.strategy === 'llm' && llm.kind !== 'fallback';
        if (wantsLlm && !holds && !lastRound) return REPLAN;
        const strategy = config.archive.strategy;
        archive =
          holds && llm.kind === 'digest'
            ? { callIds: llm.callIds, digest: llm.text, provenance: { strategy, digestBy: 'llm', model: llm.model } }
            : {
                callIds: fresh.callIds,
                digest: heuristicDigest(fresh.pairs, config.archive),
                provenance: {
                  strategy,
                  digestBy: 'heuristic',
                  ...(llm.kind === 'fallback' ? { fallback: llm.reason } : wantsLlm ? { fallback: 'log_changed' } : {}),
                },
              };
      }
      const prune = selectPruneAfterArchive(read.events, archive?.callIds ?? [], config.prune, inputTokens);
      const chosen: Planned = { archive: archive && { callIds: archive.callIds, pairs: fresh!.pairs.filter((pair) => archive.callIds.includes(pair.result.callId)) }, prune };
      const verdict = archive || prune ? rewriteVerdict(read, config, view(), chosen) : null;
      if (verdict && !verdict.apply) {
        this.metrics.deferred(verdict.deferral!);
        return deferredReport(sessionId, locked.headSeq, config, chosen, verdict);
      }
      const report = { ...idleReport(sessionId, locked.headSeq, config), rewrite: verdict };
      const events: NewEvent[] = [];
      const seq = () => locked.headSeq + events.length + 1;
      if (archive) events.push(archivedEvent(seq(), archive.callIds, archive.digest, archive.provenance));
      if (prune) events.push(prunedEvent(seq(), prune));
      if (events.length === 0) return report;
      const committed = events.map((event, i) => ({ seq: locked.headSeq + i + 1, event }));
      const costs = new Map(costsOfCommitted(read.events, committed).map((cost) => [cost.seq, cost]));
      for (const { seq: at, event } of committed) {
        const cache = costs.get(at)!;
        if (event.type === 'tool_results.archived') {
          const digestTokens = eventTokens(event, locked.model);
          report.archive = { status: 'archived', seq: at, eventId: event.id, callIds: archive!.callIds, digest: archive!.digest, digestTokens, ...archive!.provenance, cache };
        } else if (event.type === 'tool_outputs.pruned') {
          report.prune = { status: 'pruned', seq: at, eventId: event.id, mode: prune!.policy.mode, ...prune!, cache };
        }
      }
      report.headSeq = await appendUpkeep(tx, locked, events);
      // Observed once the events are in; a rolled-back commit of this transaction is retried by the job, which observes again.
      for (const cost of costs.values()) this.metrics.observe(cost);
      this.logger.log(
        `session ${sessionId}: ${prune ? `pruned ${prune.callIds.length} result(s), ${prune.tokensFreed} tokens` : 'nothing pruned'}; ` +
          `${archive ? `archived ${archive.callIds.length} pair(s) (${archive.provenance.digestBy} digest)` : 'nothing archived'}`,
      );
      return report;
    });
  }

  /**
   * Strategy `llm` with the session's compaction summarizer and model. With
   * no LLM (summarizer `heuristic`, the default, or a provider this process
   * has no endpoint for), or when the call fails or answers nothing, the
   * heuristic digest is used and the reason recorded.
   */
  private async llmDigest(read: WindowRead, config: SessionConfig, decision: ArchiveDecision, signal?: AbortSignal): Promise<LlmDigest> {
    const kind = config.compaction.summarizer;
    if (kind === 'heuristic') return { kind: 'fallback', reason: 'no_llm_configured' };
    const summarizer = this.summarizers.get(kind);
    if (!summarizer) return { kind: 'fallback', reason: `${kind}_not_configured` };
    const model = config.compaction.model ?? read.session.model;
    const { system, user } = buildDigestPrompt(decision.pairs, config.archive);
    // A token is at least a rune in practice, so the clip bounds what is worth generating.
    const maxTokens = config.archive.outputClipRunes;
    const timeout = AbortSignal.timeout(Math.min(config.compaction.timeoutMs, this.config.summarizer.timeoutMs));
    try {
      const text = await summarizer.summarize(
        {
          prompt: { system, messages: [{ role: 'user', content: user }], maxOutputTokens: maxTokens },
          head: [],
          previousSummary: null,
          instructions: null,
          retain: false,
          maxTokens,
        },
        { model, signal: signal ? AbortSignal.any([signal, timeout]) : timeout },
      );
      const digest = finishLlmDigest(text, config.archive);
      return digest ? { kind: 'digest', callIds: decision.callIds, text: digest, model } : { kind: 'fallback', reason: 'llm_empty' };
    } catch (error) {
      // Shutdown: fail the job so another worker retries it, rather than commit a fallback.
      if (signal?.aborted) throw error;
      return { kind: 'fallback', reason: `llm_failed: ${(error instanceof Error ? error.message : String(error)).slice(0, 300)}` };
    }
  }
}
