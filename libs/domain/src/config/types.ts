/**
 * A session's configuration, resolved: preset ← tenant defaults ← session
 * overrides, every field present. Every number in the seeds is a setting here
 * with the seed's default (see presets.ts for which preset uses which).
 */
import type { ModelLimitOverrides } from '../models/resolve-model';
import type { ArchiveOptions, PruneKeep, PruneMode, PruneTrigger } from '../prune/options';
import type { TruncationPolicy } from '../tool-output/codex-truncation';

export const PRESET_NAMES = ['opencode', 'codex', 'spec-000', 'spec-001', 'spec-003'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/** `heuristic` is built in and needs no network; the others are LLM providers. */
export const SUMMARIZERS = ['heuristic', 'openai', 'anthropic'] as const;
export type SummarizerKind = (typeof SUMMARIZERS)[number];

/** What the model sees before the window after a pivot (DESIGN.md section 8, "after the pivot"). */
export const COMPACTION_STRATEGIES = [
  /** OpenCode: marker "What did we do so far?", assistant summary, last N user turns. */
  'summary-tail',
  /** Seed 000: `<retain>` block and summary as user messages, last N turns. */
  'retain-summary',
  /** Codex: earlier real user messages (≤ userMessageMaxTokens), summary with the handoff prefix, protected tool results. */
  'user-rebuild',
  /** Seed 001: `[Previous conversation summary]`, recent messages within keepRecentTokens. */
  'recent-tokens',
  /** Seed 003: assistant `[COMPACTED_CONTEXT]` summary, last N user turns, fit to targetRatio. */
  'compacted-context',
] as const;
export type CompactionStrategy = (typeof COMPACTION_STRATEGIES)[number];

/** How the automatic trigger's token threshold is derived from the model's limits. */
export type CompactionTrigger =
  /** DESIGN section 6: usable = limit.input ?? (limit.context - outputReserve); threshold = usable * thresholdRatio, at most tokenLimit. */
  | { type: 'ratio'; outputReserve: number; tokenLimit: number | null }
  /**
   * OpenCode: maxOutput = min(limit.output, outputCap); reserved = reserved ?? min(buffer, maxOutput);
   * usable = limit.input ? limit.input - reserved : limit.context - maxOutput.
   */
  | { type: 'reserved'; reserved: number | null; buffer: number; outputCap: number }
  /**
   * Seed 001: usable = limit.input ?? (limit.context - reserveTokens) when the window is known (context > 0),
   * else maxTokens, else a count of maxMessages visible messages (0 switches a step off).
   */
  | { type: 'reserve-chain'; reserveTokens: number; maxTokens: number; maxMessages: number };
export type CompactionTriggerType = CompactionTrigger['type'];

/** OpenCode's tail budget: min(maxTokens, max(minTokens, usable * usableRatio)). */
export interface TailBudget {
  minTokens: number;
  maxTokens: number;
  usableRatio: number;
}

export interface CompactionConfig {
  /** false: no automatic or forced compaction (manual requests still run). */
  enabled: boolean;
  /** false: the threshold no longer triggers compaction; forced ones (finish_length, overflow) still do. */
  auto: boolean;
  trigger: CompactionTrigger;
  thresholdRatio: number;
  strategy: CompactionStrategy;
  summarizer: SummarizerKind;
  /** The compaction model; null = the session's model. */
  model: string | null;
  /** System prompt of the summarizer call; null = the session's own system prompt (Codex and seed 000 compact inside the conversation). */
  summarySystemPrompt: string | null;
  /** The final instruction after the history. */
  summaryPrompt: string;
  /** Appended to summaryPrompt as bullets (seed 000, 2.6.3). */
  summaryDirectives: string[];
  /** Asks for a `<retain>` block; null = none unless retainDirectives are given (seed 000, 2.6.4). */
  retainPrompt: string | null;
  retainDirectives: string[];
  /** User turns kept verbatim after the pivot (OpenCode 2, seed 000 1, seed 003 6, Codex 0). */
  retainLastTurns: number;
  /** Token budget of those turns; null = no budget beyond targetRatio. */
  tailBudget: TailBudget | null;
  /** Seed 001: recent messages kept by tokens (clamped to half the effective limit); 0 = keep keepRecentMessages messages instead. */
  keepRecentTokens: number;
  keepRecentMessages: number;
  /** Seed 003: the view after compaction must fit targetRatio * usable, else keep-last-turns; null = no target. */
  targetRatio: number | null;
  /** Codex: earlier user messages carried into the rebuild, newest first. */
  userMessageMaxTokens: number;
  /** Codex rebuild: the latest result of these tools survives the pivot (seed 004). */
  protectedTools: string[];
  /**
   * Tools whose calls set the plan or todo list (OpenCode's `todowrite`, Codex's `update_plan`,
   * VS Code's `manage_todo_list`…): the summary record keeps their latest list as the open items.
   */
  todoTools: string[];
  /** Each tool result is clipped to this many code points in the summarizer input (OpenCode 2,000; seed 001 1,800). */
  toolResultClipRunes: number;
  /** Target size of the summary: the summarizer's output limit and the validation bound. */
  summaryMaxTokens: number;
  /**
   * After a compaction the context holds at most this share of the trigger threshold (≤ 50% by default):
   * the tail budget and the built-in summary's budget are sized to fit it. null = the strategy's own budgets only.
   */
  maxTokensAfterRatio: number | null;
  /** After an automatic compaction, append OpenCode's synthetic "Continue if you have next steps…" user message. */
  autoContinue: boolean;
  /** Tries of one summarizer (errors, timeouts) before the next fallback. */
  maxAttempts: number;
  timeoutMs: number;
  /** An automatic compaction that left tokens at or above this share of the figure before it is not repeated. */
  loopGuardRatio: number;
  /**
   * Ask for the compaction when the view plus the next step's expected growth
   * (the last step's, at most a quarter of the usable window) would cross the
   * threshold, so the pivot usually lands before it is needed. False: the
   * view's own figure alone, as OpenCode's isOverflow and the seeds compare.
   */
  anticipateGrowth: boolean;
}

/** Field names match the prune job's PruneOptions; mode is always resolved, never inferred there. */
export interface PruneConfig {
  enabled: boolean;
  mode: PruneMode;
  protectTurns: number;
  protectTokens: number;
  minimumTokens: number;
  protectedTools: string[];
  trigger: PruneTrigger;
  keep: PruneKeep;
  clearAtLeast: number;
  excludeTools: string[];
  clearToolInputs: boolean;
}

/** Field names match the tool-output view's ToolOutputViewConfig (truncation null there is absent). */
export interface ToolOutputConfig {
  /** Seed 000: the tool-output cache and in-context views. */
  enabled: boolean;
  /** View-time trim budget; null = clamp(context_window * 0.25, 20_000, 60_000). */
  contextBudgetTokens: number | null;
  /** Whether the view-time trim (seed 000, 1.7) runs at all. */
  viewTrim: boolean;
  /**
   * Trims in steps: 0 trims the oldest kept output as soon as the kept run
   * exceeds the budget (seed 000, a prefix rewrite at almost every result
   * once over it); above 0, a trim moves the kept run's start so that it
   * holds at most (1 - trimStep) of the budget, freeing a step's worth at
   * once (docs/compaction.md, "Trims in steps").
   */
  trimStep: number;
  maxMessageBytes: number;
  maxLineLength: number;
  maxLines: number;
  /** Seed 001's MaxChars, in code points. */
  maxChars: number;
  mode: 'head_tail' | 'head';
  /** Codex's head/tail truncation at write time; null = off. */
  truncation: TruncationPolicy | null;
}

/** Pinned context (POST .../pins): shown verbatim after the pivot's prefix, never summarized. */
export interface PinsConfig {
  /** What all pins of a session may hold together (the session model's tokenizer); a pin beyond it is refused (413). */
  maxTokens: number;
}

/** `off`, or the lifetime of the Anthropic format's prompt-cache breakpoints (the Messages API's `cache_control` TTLs). */
export const CACHE_BREAKPOINTS = ['off', '5m', '1h'] as const;
export type CacheBreakpoints = (typeof CACHE_BREAKPOINTS)[number];

/**
 * When prune and archive may rewrite the prefix: `pay-off` (the rule of
 * docs/compaction.md "Rewrites that pay for themselves") or `always` (each
 * job's own rule alone, as the seeds have it).
 */
export const CACHE_REWRITE_RULES = ['pay-off', 'always'] as const;
export type CacheRewriteRule = (typeof CACHE_REWRITE_RULES)[number];

/** When compaction runs: `cache-aware` (early on a cold cache) or `threshold` (at the trigger only, as the seeds). */
export const COMPACTION_TIMINGS = ['cache-aware', 'threshold'] as const;
export type CompactionTiming = (typeof COMPACTION_TIMINGS)[number];

/** The provider's prompt cache. */
export interface CacheConfig {
  /**
   * The Anthropic view carries `cache_control` breakpoints (system, the end of
   * the pivot's prefix and pins, the last block; tools when returned) with this
   * lifetime. A read's `cacheBreakpoints` overrides it. Off by default: a
   * client that places its own markers would exceed the API's four.
   */
  breakpoints: CacheBreakpoints;
  /** How long the provider keeps an unused prefix (Anthropic: 300 s, 3,600 with 1-hour breakpoints). */
  lifetimeSeconds: number;
  rewrites: CacheRewriteRule;
  timing: CompactionTiming;
  /**
   * With `cache-aware` timing: an append that comes after more than
   * lifetimeSeconds of silence (the cache is cold, the next call rewrites
   * it anyway) opens the compaction once the view is within this share of
   * the threshold, instead of at the next busy step that crosses it.
   */
  coldMargin: number;
}

export interface SessionConfig {
  preset: PresetName;
  /** Overrides of the model registry's limits (absent = the registry's figure). */
  limits: ModelLimitOverrides;
  compaction: CompactionConfig;
  prune: PruneConfig;
  archive: ArchiveOptions;
  toolOutput: ToolOutputConfig;
  pins: PinsConfig;
  cache: CacheConfig;
}
