import { CompactionFacts, CompactionState, deriveCompactionState } from './compaction/decide';
import { evaluateOverflow, OverflowEvaluation } from './compaction/overflow-policy';
import { compactionFactsOf } from './compaction/trigger';
import { resolveSessionConfig } from './config/resolve';
import { SessionConfig } from './config/types';
import { invalid } from './errors';
import { NewEvent, StoredEvent } from './events';
import { ModelLimits, resolveModelLimits } from './models';
import { estimateMessageTokens } from './tokens';
import { buildModelView, defaultContextBudgetTokens, fitView, ModelView, PendingMode, ViewFit } from './view';
import { approxMessagesTokens } from './tokens/message-tokens';
import { pinnedContextMessage, pinTokens } from './pins/pins';

/** What the store keeps on the session row that the view needs. */
export interface SessionFacts {
  model: string;
  system: string | null;
  systemTokens: number;
  /** The session's own config overrides (validated at creation). */
  config: unknown;
  /** The tenant's defaults. */
  tenantConfig: unknown;
}

/**
 * What every reader of a session gets from its window, computed once: the
 * view with its figures, the effective settings, and the compaction state
 * (from the log, the view's growth, and the worker's lease).
 */
export interface SessionReadModel extends SessionView {
  compaction: CompactionState;
}

export interface SessionWindow {
  session: SessionFacts & { runningMarkerSeq: number | null };
  pivot: StoredEvent<'compaction.completed'> | null;
  events: readonly StoredEvent[];
}

export function readModelOf(window: SessionWindow, pending: PendingMode = 'abort', facts: CompactionFacts = compactionFactsOf(window)): SessionReadModel {
  const composed = composeSessionView(window.session, window, pending);
  const compaction = deriveCompactionState(facts, {
    runningMarkerSeq: window.session.runningMarkerSeq,
    loopGuardRatio: composed.config.compaction.loopGuardRatio,
    view: { tokens: composed.view.tokens.estimated, usable: composed.overflow.usable },
  });
  return { ...composed, compaction };
}

export interface SessionView {
  config: SessionConfig;
  limits: ModelLimits;
  view: ModelView;
  overflow: OverflowEvaluation;
}

/** The effective config and limits of a session; an unknown model without limits is refused (422 at creation). */
export function sessionSettings(facts: Pick<SessionFacts, 'model' | 'config' | 'tenantConfig'>): { config: SessionConfig; limits: ModelLimits } {
  const config = resolveSessionConfig(null, facts.tenantConfig, facts.config);
  const limits = resolveModelLimits(facts.model, config.limits);
  if (!limits) {
    throw invalid('unknown_model', `Model ${JSON.stringify(facts.model)} is not in the registry; give config.limits.context (and output)`, {
      model: facts.model,
    }).withKind('unprocessable');
  }
  return { config, limits };
}

/**
 * The model view of a session plus the figures the API reports with it:
 * one function, so the context endpoint, the session state and the overflow
 * trigger agree on every number.
 */
export function composeSessionView(
  facts: SessionFacts,
  window: { pivot: StoredEvent<'compaction.completed'> | null; events: readonly StoredEvent[] },
  pending: PendingMode = 'abort',
): SessionView {
  const { config, limits } = sessionSettings(facts);
  const contextBudgetTokens = config.toolOutput.viewTrim
    ? (config.toolOutput.contextBudgetTokens ?? defaultContextBudgetTokens(limits.context))
    : Number.POSITIVE_INFINITY;
  const view = buildModelView({
    system: facts.system ?? undefined,
    systemTokens: facts.systemTokens,
    pivot: window.pivot,
    events: window.events,
    model: facts.model,
    options: { pending, contextBudgetTokens, trimStep: config.toolOutput.trimStep },
  });
  const overflow = evaluateOverflow({
    tokens: { total: view.tokens.estimated, expectedGrowth: view.tokens.expectedGrowth },
    limits,
    config: config.compaction,
    messageCount: view.messages.length,
  });
  return { config, limits, view, overflow };
}

/** The most output a read leaves room for where the trigger reserves none (OpenCode's OUTPUT_TOKEN_MAX). */
export const READ_OUTPUT_RESERVE_CAP = 32_000;

/**
 * The tokens a read may hand the model: the usable window, and never more
 * than the window less the model's output (at most READ_OUTPUT_RESERVE_CAP),
 * even where the preset's trigger reserves nothing for it (a ratio trigger
 * without outputReserve): input and output share the window.
 */
export function readBudget(limits: ModelLimits, usable: number): number {
  const output = Math.min(limits.output || READ_OUTPUT_RESERVE_CAP, READ_OUTPUT_RESERVE_CAP);
  return Math.min(usable, limits.input ?? Math.max(0, limits.context - output));
}

/**
 * The view a read hands the model: never over readBudget. Over it (a
 * compaction queued or running while the agent kept appending), the view is
 * fitted for this read (fitView); the session's own figures, the trigger's,
 * stay those of the whole view.
 */
export function readableView(composed: SessionView): SessionView & { fitted: ViewFit | null } {
  const { usable } = composed.overflow;
  if (usable === null) return { ...composed, fitted: null };
  const { view, fitted } = fitView(composed.view, readBudget(composed.limits, usable));
  return { ...composed, view, fitted };
}

/**
 * The token estimate stored with an event at append time: the most it adds
 * to the view (messages, archive digests, pins, a pivot's prefix and the
 * pins it carries); 0 otherwise. So the stored figures of what was appended
 * since a view was checked bound its growth without reading it (boundAfterGrowth).
 */
export function eventTokens(event: NewEvent, model: string): number {
  switch (event.type) {
    case 'message.added':
      return estimateMessageTokens(event.data.message, model);
    case 'tool_results.archived':
      return event.data.digest ? estimateMessageTokens(event.data.digest, model) : 0;
    case 'pin.added':
      return pinTokens(event.data.text, model);
    case 'compaction.completed': {
      const pinned = pinnedContextMessage(event.data.pins ?? []);
      return approxMessagesTokens(pinned ? [...event.data.prefix, pinned] : event.data.prefix);
    }
    default:
      return 0;
  }
}
