/**
 * The built-in summarizer: deterministic, no network. It carries the summary
 * forward as data: the previous compaction's record (or, when that
 * compaction stored none, its text read back into one) is merged with
 * everything the head says, read whole (tool outputs from the full texts the
 * caller passes), then fitted to the budget by the eviction policy and
 * rendered in the preset's template. It answers in the `<summary>` shape the
 * LLM summarizers use, so one parser reads both.
 *
 * This folder is that summarizer, part by part: the record it keeps
 * (summary-record), what it reads from messages and tool outputs (extract,
 * output-digest, user-text, text, head-record), and the record as text
 * (summary-template), kept within budget (summary-eviction) and read back
 * from a summary without one (record-from-text). The LLM path reads the same
 * record for its input and to measure what a summary retained.
 */
import type { CompactionStrategy } from '../../config/types';
import type { Message, ToolResultPart } from '../../events';
import { estimateTokens } from '../../tokens/chars';
import { readHead, ToolOutputs } from './head-record';
import { CriticalFact, criticalFactsOf } from '../fact-retention';
import { SummaryRecord } from './summary-record';
import { recordFromSummaryText } from './record-from-text';
import { EvictedItem, fitRecord } from './summary-eviction';
import { renderRecord, SUMMARY_TEMPLATES, SummaryTemplate, SummaryTemplateName, templateForStrategy } from './summary-template';

export interface HeuristicInput {
  /** The messages to summarize, as written (summarizeHeuristically reads pruned and archived ones whole too). */
  head: readonly Message[];
  /** The previous compaction's record (compaction.completed `data.record`), or null. */
  previous?: SummaryRecord | null;
  /** The previous compaction's summary text: read back into a record only when `previous` is absent. */
  previousSummary?: string | null;
  /** Full tool outputs by call id (or output ref id): texts from the tool-output cache, or streamed digests. */
  outputs?: ToolOutputs;
  /** Upper bound of the reply (retain block and summary) in estimated tokens: the config's summaryMaxTokens. */
  budgetTokens: number;
  /** The template: a name, or the compaction strategy whose preset it belongs to; default OpenCode's. */
  template?: SummaryTemplateName | SummaryTemplate;
  strategy?: CompactionStrategy;
  /** Also list the head's tool output refs in a `<retain>` block (seed 000). */
  retain?: boolean;
  /** The marker's instructions; kept as the requested focus. */
  instructions?: string | null;
  /** Tools whose calls set the todo list / plan (config compaction.todoTools). */
  todoTools?: readonly string[];
  /** Budget of the user's verbatim messages inside the summary; default 40% of the budget. */
  userMessageTokens?: number;
}

export interface HeuristicResult {
  /** The merged, fitted record: store it on compaction.completed as `record`. */
  record: SummaryRecord;
  /** The rendered summary (what goes inside `<summary>`). */
  summary: string;
  /** The `<retain>` block's content, or null. */
  retain: string | null;
  /** The reply as a summarizer gives it: `<retain>…</retain>` (when asked) and `<summary>…</summary>`. */
  text: string;
  /** The head's critical facts, for the retention check (checkRetention) of whichever summary is committed. */
  facts: CriticalFact[];
  /** Items this compaction evicted to fit the budget. */
  evicted: number;
  /** What left the record at this compaction (the first 50, texts clipped): compaction.completed's `evicted`. */
  evictedItems: EvictedItem[];
}

function templateOf(input: HeuristicInput): SummaryTemplate {
  if (typeof input.template === 'object') return input.template;
  if (input.template) return SUMMARY_TEMPLATES[input.template];
  return input.strategy ? templateForStrategy(input.strategy) : SUMMARY_TEMPLATES.opencode;
}

function retainBlock(head: readonly Message[]): string | null {
  const refs = head
    .flatMap((message) => message.parts)
    .filter((part): part is ToolResultPart => part.type === 'tool_result' && part.outputRef !== undefined)
    .map((part) => `- ref=${part.outputRef!.id} (${part.name}, ${part.outputRef!.line_count} lines)`)
    .slice(-10);
  return refs.length > 0 ? refs.join('\n') : null;
}

/**
 * previous record + head → merged record (eviction applied) + its rendering.
 * Deterministic: the same input gives the same record and text.
 */
export function summarizeHeuristically(input: HeuristicInput): HeuristicResult {
  const template = templateOf(input);
  const previous = input.previous ?? (input.previousSummary?.trim() ? recordFromSummaryText(input.previousSummary) : null);
  const reading = readHead(input.head, previous, { outputs: input.outputs, todoTools: input.todoTools, instructions: input.instructions });
  const record = reading.record;
  record.compactions++;
  const facts = criticalFactsOf(reading.touched);

  const retain = input.retain ? retainBlock(input.head) : null;
  const wrapper = estimateTokens(`${retain ? `<retain>\n${retain}\n</retain>\n` : ''}<summary>\n\n</summary>`);
  const budget = Math.max(0, input.budgetTokens - wrapper);
  const userMessageTokens = input.userMessageTokens ?? Math.floor(budget * 0.4);
  const evicted = fitRecord(record, template, budget, { userMessageTokens: Math.min(userMessageTokens, budget) });
  record.evicted += evicted.length;
  const summary = renderRecord(record, template);
  const text = `${retain ? `<retain>\n${retain}\n</retain>\n` : ''}<summary>\n${summary}\n</summary>`;
  return { record, summary, retain, text, facts, evicted: evicted.length, evictedItems: evicted };
}

/** The pre-record interface (text in, text out), kept for callers that only want the reply. */
export interface HeuristicSummaryInput {
  head: readonly Message[];
  previousSummary: string | null;
  /** Upper bound of the reply in estimated tokens (summaryMaxTokens). */
  maxTokens: number;
  retain?: boolean;
  instructions?: string | null;
  previousRecord?: SummaryRecord | null;
  outputs?: ToolOutputs;
  strategy?: CompactionStrategy;
  todoTools?: readonly string[];
}

export function heuristicSummary(input: HeuristicSummaryInput): string {
  return summarizeHeuristically({
    head: input.head,
    previous: input.previousRecord,
    previousSummary: input.previousSummary,
    outputs: input.outputs,
    budgetTokens: input.maxTokens,
    strategy: input.strategy,
    retain: input.retain,
    instructions: input.instructions,
    todoTools: input.todoTools,
  }).text;
}
