/**
 * The retention check: before a summary is committed, the critical
 * facts of the head (goal, constraints, decisions, files, commands, errors,
 * open todo items, key values) are looked for in what the model will see
 * after the pivot, the summary and every message kept; the missing ones are
 * added to the summary in a "Carried Forward" section while it stays within
 * its budget. The share found is the retention figure recorded on
 * compaction.completed. Pure; works for any summarizer's text.
 */
import type { CompactionConfig } from '../config/types';
import type { Message } from '../events';
import { estimateTokens, inputText } from '../tokens/chars';
import { normalizeSpace } from './heuristic/extract';
import type { ToolOutputs } from './heuristic/head-record';
import { digestToolOutput, isToolOutputDigest } from './heuristic/output-digest';
import type { CompactionPlan } from './plan';
import { buildPrefix, PREFIX_KINDS } from './strategies';
import type { CommandItem, ErrorItem, ExcerptItem, RecordItem, RecordSection, TodoItem, ValueItem } from './heuristic/summary-record';

export interface CriticalFact {
  kind: RecordSection;
  /** What must appear (spacing aside) for the fact to count as kept. */
  probe: string;
  /** The bullet the Carried Forward section adds when it is missing. */
  bullet: string;
  /** Lower is carried first. */
  rank: number;
}

export interface Retention {
  /** Share (0..1) of the head's critical facts found in the new context: summary (with Carried Forward) and kept messages. */
  ratio: number;
  /** The same share before Carried Forward: what the summarizer kept by itself. */
  summarizerRatio: number;
  /** Critical facts the head had. */
  critical: number;
  /** Of those, found in the end. */
  kept: number;
  /** Added by the Carried Forward section. */
  carried: number;
  /** Up to 20 facts still missing (they did not fit the budget). */
  missing: string[];
}

const PROBE_CHARS = 120;
export const CARRIED_FORWARD_HEADING = '## Carried Forward';

function probeOf(text: string): string {
  const flat = normalizeSpace(text).replace(/…$/, '');
  const points = Array.from(flat);
  return points.length <= PROBE_CHARS ? flat : points.slice(0, PROBE_CHARS).join('');
}

const RANK: Partial<Record<RecordSection, number>> = {
  goal: 0,
  constraints: 1,
  errors: 2,
  todos: 3,
  decisions: 4,
  commands: 5,
  files: 6,
  values: 7,
  excerpts: 8,
};

const FIXED_ERROR_RANK = 9;

function bulletOf(kind: RecordSection, item: RecordItem): string {
  switch (kind) {
    case 'goal':
      return `- Goal: ${normalizeSpace(item.text)}`;
    case 'constraints':
      return `- Constraint: ${item.text}`;
    case 'errors': {
      const error = item as ErrorItem;
      return `- ${error.fixed ? 'Fixed error' : 'Error'}: ${error.text}${error.location && !error.text.includes(error.location) ? ` (at ${error.location})` : ''}`;
    }
    case 'todos':
      return `- Todo [${(item as TodoItem).status === 'in_progress' ? '~' : ' '}] ${item.text}`;
    case 'decisions':
      return `- Decision: ${item.text}`;
    case 'commands': {
      const command = item as CommandItem;
      return `- Command: \`${command.text}\`${command.outcome ? ` → ${command.outcome}` : ''}`;
    }
    case 'files':
      return `- File: ${item.text}`;
    case 'excerpts':
      return outputLineBullet((item as ExcerptItem).source ?? 'a tool', item.text);
    default:
      return `- Value: \`${item.text}\``;
  }
}

/** A line of a tool output, with the call that printed it. */
const outputLineBullet = (source: string, line: string) => `- In \`${source}\` output: ${line}`;

/**
 * Whether an item of the head is a critical fact: finished todos, the user's verbatim messages, turn endings, a
 * tool's last lines and tool-written values are not; lines found in an output (warnings, hashes, ids, settings) are.
 */
function isCritical(kind: RecordSection, item: RecordItem): boolean {
  if (RANK[kind] === undefined) return false;
  if (kind === 'todos') return ['pending', 'in_progress'].includes((item as TodoItem).status);
  if (kind === 'values') return (item as ValueItem).origin !== 'tool';
  if (kind === 'excerpts') return (item as ExcerptItem).source !== null;
  return true;
}

/** The critical facts among the items a head added or saw again, most important first, each once. */
export function criticalFactsOf(touched: ReadonlyArray<{ section: RecordSection; item: RecordItem }>): CriticalFact[] {
  const seen = new Set<string>();
  const facts: CriticalFact[] = [];
  for (const { section, item } of touched) {
    if (!isCritical(section, item)) continue;
    const probe = probeOf(item.text);
    if (!probe || seen.has(probe)) continue;
    seen.add(probe);
    // A fixed error still counts, but is carried last: resolved facts are the first to give way.
    const rank = section === 'errors' && (item as ErrorItem).fixed ? FIXED_ERROR_RANK : RANK[section]!;
    facts.push({ kind: section, probe, bullet: bulletOf(section, item), rank });
  }
  return facts.sort((a, b) => a.rank - b.rank);
}

function dedupeFacts(facts: readonly CriticalFact[]): CriticalFact[] {
  const seen = new Set<string>();
  return facts.filter((fact) => !seen.has(fact.probe) && seen.add(fact.probe)).sort((a, b) => a.rank - b.rank);
}

/** The text the model reads of a message: text parts, tool calls (name and input), tool results. */
export function messageText(message: Message): string {
  return message.parts
    .map((part) => {
      switch (part.type) {
        case 'text':
          return part.text;
        case 'tool_call':
          return `${part.name} ${inputText(part.input)}`;
        case 'tool_result':
          return part.output;
        default:
          return '';
      }
    })
    .join('\n');
}

/** What the model sees after the pivot besides the summary: `prefix` (the new prefix's other messages), the pins, the kept messages. */
export function textsAfterPivot(plan: CompactionPlan, prefix: readonly Message[]): string[] {
  return [...[...prefix, ...plan.keptMessages].map(messageText), ...plan.pins.map((pin) => pin.text)];
}

export interface RetentionInput {
  facts: readonly CriticalFact[];
  summary: string;
  /** Everything else the model will see after the pivot (textsAfterPivot): the prefix's other messages, the pins, the kept tail, what came after the marker. */
  kept: readonly string[];
  /** The most the summary may weigh with its Carried Forward section, in estimated tokens. */
  budgetTokens: number;
}

export interface RetentionResult {
  /** The summary, with a Carried Forward section when facts were missing and some fit. */
  summary: string;
  retention: Retention;
}

/** Looks for each fact in the summary and the kept messages; carries the missing ones forward within the budget. */
export function checkRetention(input: RetentionInput): RetentionResult {
  const { facts } = input;
  const haystack = normalizeSpace([input.summary, ...input.kept].join('\n'));
  const missing = facts.filter((fact) => !haystack.includes(fact.probe));
  const found = facts.length - missing.length;
  const share = (count: number) => (facts.length === 0 ? 1 : count / facts.length);

  let summary = input.summary;
  let carried = 0;
  if (missing.length > 0) {
    const lines: string[] = [];
    let tokens = estimateTokens(`${summary}\n\n${CARRIED_FORWARD_HEADING}\n`);
    for (const fact of missing) {
      const cost = estimateTokens(`${fact.bullet}\n`) + 1;
      if (tokens + cost > input.budgetTokens) continue;
      lines.push(fact.bullet);
      tokens += cost;
    }
    if (lines.length > 0) {
      const withSection = `${summary}\n\n${CARRIED_FORWARD_HEADING}\n${lines.join('\n')}`;
      if (estimateTokens(withSection) <= input.budgetTokens) {
        summary = withSection;
        carried = lines.length;
      }
    }
  }
  const stillMissing = carried === 0 ? missing : missing.filter((fact) => !normalizeSpace(summary).includes(fact.probe));
  return {
    summary,
    retention: {
      ratio: share(facts.length - stillMissing.length),
      summarizerRatio: share(found),
      critical: facts.length,
      kept: facts.length - stillMissing.length,
      carried,
      missing: stillMissing.slice(0, 20).map((fact) => fact.probe),
    },
  };
}

/**
 * Facts the kept messages hold only in the tool-output cache: the error,
 * warning and salient lines (hashes, ids, settings) of a kept result whose in-context view was truncated
 * (OpenCode's and seed 000's head-only views hide the end of a big output,
 * where errors usually are). The model cannot see them in the tail, so they
 * count as critical and are carried forward when missing.
 */
export function hiddenOutputFacts(kept: readonly Message[], outputs?: ToolOutputs): CriticalFact[] {
  if (!outputs || outputs.size === 0) return [];
  const facts: CriticalFact[] = [];
  for (const part of kept.flatMap((message) => message.parts)) {
    if (part.type !== 'tool_result') continue;
    const full = outputs.get(part.callId) ?? (part.outputRef ? outputs.get(part.outputRef.id) : undefined);
    if (full === undefined || full === part.output) continue;
    const digest = isToolOutputDigest(full) ? full : digestToolOutput(full);
    const ref = part.outputRef ? ` (ref=${part.outputRef.id})` : '';
    for (const error of digest.errors) {
      const at = error.location && !error.text.includes(error.location) ? ` (at ${error.location})` : '';
      facts.push({ kind: 'errors', probe: probeOf(error.text), bullet: `- Error in ${part.name} output${ref}: ${error.text}${at}`, rank: RANK.errors! });
    }
    for (const line of [...(digest.notable ?? []), ...(digest.salient ?? [])]) {
      facts.push({ kind: 'excerpts', probe: probeOf(line), bullet: outputLineBullet(`${part.name}${ref}`, line), rank: RANK.excerpts! });
    }
  }
  return facts;
}

export interface PrefixWithRetentionInput {
  plan: CompactionPlan;
  summary: string;
  retain: string | null;
  config: CompactionConfig;
  /** The head's critical facts (summarizeHeuristically's `facts`). */
  facts: readonly CriticalFact[];
  /** Full tool outputs (the tool-output cache): facts the kept results' truncated views hide count too. */
  outputs?: ToolOutputs;
}

/**
 * The strategy's prefix for a summary after the retention check: the facts
 * are looked for in the summary, the prefix's other messages (Codex's user
 * messages, the retain block, protected tools) and the plan's kept messages;
 * the missing ones are carried forward within the window's summary budget
 * (plan.summaryBudgetTokens; an LLM summary already longer than that may
 * still grow by a quarter of it, up to summaryMaxTokens), less the retain
 * block, and the prefix is built on the summary that results.
 */
export function prefixWithRetention(input: PrefixWithRetentionInput): { summary: string; prefix: Message[]; retention: Retention } {
  const { plan, retain, config } = input;
  const draft = buildPrefix({ plan, summary: input.summary, retain, config });
  const others = draft.filter((message) => message.metadata?.kind !== PREFIX_KINDS.summary);
  const room = Math.max(plan.summaryBudgetTokens, Math.min(config.summaryMaxTokens, estimateTokens(input.summary) + Math.floor(plan.summaryBudgetTokens / 4)));
  const hidden = hiddenOutputFacts(plan.keptMessages, input.outputs);
  const { summary, retention } = checkRetention({
    facts: hidden.length > 0 ? dedupeFacts([...input.facts, ...hidden]) : input.facts,
    summary: input.summary,
    kept: textsAfterPivot(plan, others),
    budgetTokens: room - estimateTokens(retain ?? ''),
  });
  const prefix = summary === input.summary ? draft : buildPrefix({ plan, summary, retain, config });
  return { summary, prefix, retention };
}
