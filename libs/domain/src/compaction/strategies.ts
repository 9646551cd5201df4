/**
 * The prefix each strategy puts before the window (the presets' "after the
 * pivot" column). The view shows system + prefix + events after
 * coveredThroughSeq, so this is all a strategy decides besides the cut.
 */
import type { Message, Role, ToolCallPart, ToolResultPart } from '../events';
import type { CompactionConfig } from '../config/types';
import { isUserTurn } from '../prune/tool-exchanges';
import type { CompactionPlan } from './plan';
import {
  CODEX_NO_SUMMARY,
  CODEX_SUMMARY_PREFIX,
  COMPACTED_CONTEXT_MARKER,
  OPENCODE_MARKER_TEXT,
  PREVIOUS_SUMMARY_MARKER,
} from './prompts';
import { approxTokensFromBytes, truncateText } from '../tool-output/codex-truncation';
import { utf8ByteLength } from '../tool-output/utf8';
import { joinText } from './heuristic/text';
import { isRealUserText } from './heuristic/user-text';

/** `metadata.kind` of prefix messages: the view tags them, later compactions find what to carry. */
export const PREFIX_KINDS = {
  summary: 'compaction_summary',
  retain: 'compaction_retain',
  marker: 'compaction_marker',
  userMessage: 'compaction_user_message',
  protectedTool: 'compaction_protected_tool',
} as const;

export interface PrefixInput {
  plan: CompactionPlan;
  summary: string;
  retain: string | null;
  config: CompactionConfig;
}

/** Ids are derived from the marker, so a retried job builds the same prefix. */
function prefixMessage(markerSeq: number, name: string, role: Role, text: string, kind: string): Message {
  return { id: `cmp-${markerSeq}-${name}`, role, parts: [{ type: 'text', text }], metadata: { kind } };
}

/**
 * Codex's token approximation (codex-rs/core/src/truncate.rs,
 * `approx_token_count`): UTF-8 bytes / 4, rounded up. Its user-message budget
 * counts these, so CJK text (3 bytes a character) weighs three times what
 * chars / 4 says.
 */
export function codexApproxTokens(text: string): number {
  return approxTokensFromBytes(utf8ByteLength(text));
}

/**
 * Codex's collect_user_messages + build_compacted_history: the user messages
 * the previous rebuild carried and the head's real ones, newest first within
 * `maxTokens` (Codex tokens: UTF-8 bytes / 4), the one at the boundary
 * middle-truncated, back in order.
 */
export function selectUserMessages(plan: CompactionPlan, maxTokens: number): string[] {
  const carried = plan.previousPrefix.filter((m) => m.metadata?.kind === PREFIX_KINDS.userMessage).map((m) => joinText(m.parts));
  const fresh = plan.head.filter((item) => isUserTurn(item.message)).map((item) => joinText(item.message.parts));
  const selected: string[] = [];
  let remaining = maxTokens;
  for (const text of [...carried, ...fresh].filter(isRealUserText).reverse()) {
    if (remaining <= 0) break;
    const tokens = codexApproxTokens(text);
    selected.push(tokens <= remaining ? text : truncateText(text, { tokens: remaining }));
    remaining -= tokens;
  }
  return selected.reverse();
}

/** The latest call/result pair of each protected tool, from the previous prefix and the head (seed 004). */
function protectedPairs(plan: CompactionPlan, tools: readonly string[]): Array<[ToolCallPart, ToolResultPart]> {
  const calls = new Map<string, ToolCallPart>();
  const latest = new Map<string, [ToolCallPart, ToolResultPart]>();
  const messages = [...plan.previousPrefix, ...plan.head.map((item) => item.message)];
  for (const part of messages.flatMap((message) => message.parts)) {
    if (part.type === 'tool_call' && tools.includes(part.name)) calls.set(part.callId, part);
    const call = part.type === 'tool_result' ? calls.get(part.callId) : undefined;
    if (call && part.type === 'tool_result') {
      latest.delete(call.name);
      latest.set(call.name, [call, part]);
    }
  }
  return [...latest.values()];
}

function userRebuild(input: PrefixInput): Message[] {
  const { plan, summary, config } = input;
  const seq = plan.markerSeq;
  const kind = PREFIX_KINDS.protectedTool;
  return [
    ...selectUserMessages(plan, config.userMessageMaxTokens).map((text, i) =>
      prefixMessage(seq, `user-${i}`, 'user', text, PREFIX_KINDS.userMessage),
    ),
    prefixMessage(seq, 'summary', 'user', summary ? `${CODEX_SUMMARY_PREFIX}\n${summary}` : CODEX_NO_SUMMARY, PREFIX_KINDS.summary),
    ...protectedPairs(plan, config.protectedTools).flatMap(([call, result]): Message[] => [
      { id: `cmp-${seq}-call-${call.callId}`, role: 'assistant', parts: [call], metadata: { kind } },
      { id: `cmp-${seq}-result-${call.callId}`, role: 'tool', parts: [result], metadata: { kind } },
    ]),
  ];
}

function summaryMessages(input: PrefixInput): Message[] {
  const { plan, summary, config } = input;
  const seq = plan.markerSeq;
  switch (config.strategy) {
    case 'summary-tail':
      return [
        prefixMessage(seq, 'marker', 'user', OPENCODE_MARKER_TEXT, PREFIX_KINDS.marker),
        prefixMessage(seq, 'summary', 'assistant', summary, PREFIX_KINDS.summary),
      ];
    case 'retain-summary':
      return [prefixMessage(seq, 'summary', 'user', summary, PREFIX_KINDS.summary)];
    case 'user-rebuild':
      return userRebuild(input);
    case 'recent-tokens':
      return [prefixMessage(seq, 'summary', 'user', `${PREVIOUS_SUMMARY_MARKER}\n${summary}`, PREFIX_KINDS.summary)];
    case 'compacted-context': {
      const text = summary.startsWith(COMPACTED_CONTEXT_MARKER) ? summary : `${COMPACTED_CONTEXT_MARKER}\n${summary}`;
      return [prefixMessage(seq, 'summary', 'assistant', text, PREFIX_KINDS.summary)];
    }
  }
}

/** The new prefix: the `<retain>` block first when there is one (seed 000, 2.7), then the strategy's messages. */
export function buildPrefix(input: PrefixInput): Message[] {
  const retain = input.retain
    ? [prefixMessage(input.plan.markerSeq, 'retain', 'user', input.retain, PREFIX_KINDS.retain)]
    : [];
  return [...retain, ...summaryMessages(input)];
}

/**
 * The last fallback, when no summary could be made: the head is dropped
 * without one and the previous prefix carries over unchanged, so what
 * earlier compactions kept is not lost; the plan's tail stays in the window.
 */
export function buildKeepLastTurnsFallback(plan: CompactionPlan): Message[] {
  return structuredClone(plan.previousPrefix);
}
