/**
 * One preset per system the seeds describe (DESIGN.md section 8), so "behave
 * like OpenCode" is one setting. Values not in a system keep the seeds'
 * defaults, so switching a strategy inside a preset still gets sane numbers.
 */
import { DEFAULT_TODO_TOOLS } from '../compaction/heuristic/head-record';
import { ANTHROPIC_PRUNE_DEFAULTS } from '../prune/options';
import {
  CODEX_SUMMARY_PROMPT,
  OPENCODE_SUMMARY_PROMPT,
  OPENCODE_SYSTEM_PROMPT,
  SPEC_000_SUMMARY_PROMPT,
  SPEC_001_SUMMARY_PROMPT,
  SPEC_001_SYSTEM_PROMPT,
  SPEC_003_SUMMARY_PROMPT,
  SPEC_003_SYSTEM_PROMPT,
} from '../compaction/prompts';
import {
  CacheConfig,
  CompactionConfig,
  PinsConfig,
  PresetName,
  PruneConfig,
  SessionConfig,
  TailBudget,
  ToolOutputConfig,
} from './types';

/**
 * spec-000 is the default: DESIGN section 6's trigger formula and the
 * `<retain>`/`<summary>` reply the one parser reads are seed 000's, and so is
 * the tool-output cache with its view-time trim (DESIGN section 5.3).
 */
export const DEFAULT_PRESET: PresetName = 'spec-000';

/**
 * Whether the prune job runs, per preset. Stated once so docs quote it and it
 * cannot drift: OpenCode documents `compaction.prune` as on by default (seed
 * 002, section 7), so its preset prunes; the other systems shrink tool output
 * by other means (Codex truncates at write time, seed 000 trims at view time,
 * seed 001 archives, seed 003 compacts to a target).
 */
export const PRUNE_ENABLED_BY_PRESET: Readonly<Record<PresetName, boolean>> = {
  opencode: true,
  codex: false,
  'spec-000': false,
  'spec-001': false,
  'spec-003': false,
};

/** OpenCode's tail: 2,000 to 8,000 tokens, 25% of usable between. */
export const OPENCODE_TAIL_BUDGET: TailBudget = { minTokens: 2_000, maxTokens: 8_000, usableRatio: 0.25 };

const COMPACTION_DEFAULTS: Omit<
  CompactionConfig,
  'trigger' | 'thresholdRatio' | 'strategy' | 'summarySystemPrompt' | 'summaryPrompt' | 'retainLastTurns'
> = {
  enabled: true,
  auto: true,
  summarizer: 'heuristic',
  model: null,
  summaryDirectives: [],
  retainPrompt: null,
  retainDirectives: [],
  tailBudget: OPENCODE_TAIL_BUDGET,
  keepRecentTokens: 20_000,
  keepRecentMessages: 5,
  targetRatio: null,
  userMessageMaxTokens: 20_000,
  protectedTools: ['manage_todo_list'],
  todoTools: [...DEFAULT_TODO_TOOLS],
  toolResultClipRunes: 2_000,
  summaryMaxTokens: 8_000,
  maxTokensAfterRatio: 0.5,
  autoContinue: false,
  maxAttempts: 3,
  timeoutMs: 120_000,
  loopGuardRatio: 0.95,
  anticipateGrowth: true,
};

const pruneFor = (preset: PresetName, protectedTools: string[]): PruneConfig => ({
  enabled: PRUNE_ENABLED_BY_PRESET[preset],
  mode: 'opencode',
  protectTurns: 2,
  protectTokens: 40_000,
  minimumTokens: 20_000,
  protectedTools,
  ...ANTHROPIC_PRUNE_DEFAULTS,
  excludeTools: [...ANTHROPIC_PRUNE_DEFAULTS.excludeTools],
});

const ARCHIVE_OFF: SessionConfig['archive'] = {
  enabled: false,
  toolCallCutoff: 10,
  strategy: 'llm',
  inputClipChars: 12_000,
  outputClipRunes: 1_200,
  heuristicClipRunes: 800,
};

const TOOL_OUTPUT_DEFAULTS: ToolOutputConfig = {
  enabled: true,
  contextBudgetTokens: null,
  viewTrim: false,
  trimStep: 0,
  maxMessageBytes: 50 * 1024,
  maxLineLength: 2_000,
  maxLines: 2_000,
  maxChars: 200 * 1024,
  mode: 'head_tail',
  truncation: null,
};

/** No system we compare with has pins: one budget for every preset, small beside any window. */
const PINS_DEFAULTS: PinsConfig = { maxTokens: 4_000 };

/**
 * No system we compare with marks breakpoints for its client: opt-in
 * everywhere. Rewrites pay for themselves and compaction comes early on a
 * cold cache in every preset: neither changes what a seed keeps, only when
 * its rewrites happen (`rewrites: 'always'`, `timing: 'threshold'` restore
 * the seeds' timing).
 */
const CACHE_DEFAULTS: CacheConfig = { breakpoints: 'off', lifetimeSeconds: 300, rewrites: 'pay-off', timing: 'cache-aware', coldMargin: 0.1 };

export const PRESETS: Readonly<Record<PresetName, SessionConfig>> = {
  opencode: {
    preset: 'opencode',
    limits: {},
    compaction: {
      ...COMPACTION_DEFAULTS,
      trigger: { type: 'reserved', reserved: null, buffer: 20_000, outputCap: 32_000 },
      thresholdRatio: 1,
      strategy: 'summary-tail',
      summarySystemPrompt: OPENCODE_SYSTEM_PROMPT,
      summaryPrompt: OPENCODE_SUMMARY_PROMPT,
      retainLastTurns: 2,
      autoContinue: true,
    },
    prune: pruneFor('opencode', ['skill']),
    archive: ARCHIVE_OFF,
    // OpenCode's write-time truncation keeps the head (2,000 lines / 50 KB).
    toolOutput: { ...TOOL_OUTPUT_DEFAULTS, mode: 'head' },
    pins: PINS_DEFAULTS,
    cache: CACHE_DEFAULTS,
  },
  codex: {
    preset: 'codex',
    limits: {},
    compaction: {
      ...COMPACTION_DEFAULTS,
      trigger: { type: 'ratio', outputReserve: 0, tokenLimit: null },
      thresholdRatio: 0.9,
      strategy: 'user-rebuild',
      summarySystemPrompt: null,
      summaryPrompt: CODEX_SUMMARY_PROMPT,
      retainLastTurns: 0,
    },
    prune: pruneFor('codex', ['skill', 'manage_todo_list']),
    archive: ARCHIVE_OFF,
    toolOutput: { ...TOOL_OUTPUT_DEFAULTS, truncation: { tokens: 10_000 } },
    pins: PINS_DEFAULTS,
    cache: CACHE_DEFAULTS,
  },
  'spec-000': {
    preset: 'spec-000',
    limits: {},
    compaction: {
      ...COMPACTION_DEFAULTS,
      trigger: { type: 'ratio', outputReserve: 0, tokenLimit: null },
      thresholdRatio: 0.8,
      strategy: 'retain-summary',
      summarySystemPrompt: null,
      summaryPrompt: SPEC_000_SUMMARY_PROMPT,
      retainLastTurns: 1,
    },
    prune: pruneFor('spec-000', ['skill', 'manage_todo_list']),
    archive: ARCHIVE_OFF,
    // Seed 000 stops the in-context view at maxMessageBytes (head) and trims old outputs at view time.
    toolOutput: { ...TOOL_OUTPUT_DEFAULTS, mode: 'head', viewTrim: true },
    pins: PINS_DEFAULTS,
    cache: CACHE_DEFAULTS,
  },
  'spec-001': {
    preset: 'spec-001',
    limits: {},
    compaction: {
      ...COMPACTION_DEFAULTS,
      trigger: { type: 'reserve-chain', reserveTokens: 16_384, maxTokens: 8_000, maxMessages: 50 },
      thresholdRatio: 1,
      strategy: 'recent-tokens',
      summarySystemPrompt: SPEC_001_SYSTEM_PROMPT,
      summaryPrompt: SPEC_001_SUMMARY_PROMPT,
      retainLastTurns: 0,
      toolResultClipRunes: 1_800,
    },
    prune: pruneFor('spec-001', ['skill', 'manage_todo_list']),
    archive: { ...ARCHIVE_OFF, enabled: true },
    toolOutput: TOOL_OUTPUT_DEFAULTS,
    pins: PINS_DEFAULTS,
    cache: CACHE_DEFAULTS,
  },
  'spec-003': {
    preset: 'spec-003',
    limits: {},
    compaction: {
      ...COMPACTION_DEFAULTS,
      trigger: { type: 'ratio', outputReserve: 0, tokenLimit: null },
      thresholdRatio: 0.75,
      strategy: 'compacted-context',
      summarySystemPrompt: SPEC_003_SYSTEM_PROMPT,
      summaryPrompt: SPEC_003_SUMMARY_PROMPT,
      retainLastTurns: 6,
      tailBudget: null,
      targetRatio: 0.5,
      maxAttempts: 2,
    },
    prune: pruneFor('spec-003', ['skill', 'manage_todo_list']),
    archive: ARCHIVE_OFF,
    toolOutput: TOOL_OUTPUT_DEFAULTS,
    pins: PINS_DEFAULTS,
    cache: CACHE_DEFAULTS,
  },
};
