/**
 * The summarizer call as a provider-neutral request: the head as plain
 * user/assistant turns, then the instruction (DESIGN.md section 6).
 */
import type { FilePart, Message, Part, Pin, ToolResultPart } from '../events';
import type { CompactionConfig } from '../config/types';
import { clipRunes } from '../prune/clip-runes';
import { inputText } from '../tokens/chars';
import type { ToolOutputs } from './heuristic/head-record';
import { digestToolOutput, isToolOutputDigest } from './heuristic/output-digest';
import { DEFAULT_RETAIN_PROMPT, pinnedContextNote, previousSummaryAnchor, sectionsInstruction } from './prompts';
import type { SummaryRecord } from './heuristic/summary-record';
import { renderRecord, templateForStrategy } from './heuristic/summary-template';

export interface SummarizerMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** Roles alternate, the first and last turns are the user's; no tools. */
export interface SummarizerRequest {
  system: string;
  messages: SummarizerMessage[];
  maxOutputTokens: number;
}

/** What the final instruction is made of. */
export interface InstructionInput {
  config: CompactionConfig;
  previousSummary: string | null;
  /** The previous pivot's record: the model updates it, in the template's sections, rather than the rendered text. */
  previousRecord?: SummaryRecord | null;
  /** The pins in force: the model is told they stay beside the summary verbatim. */
  pins?: readonly Pin[];
  /** The marker's additive instructions for this compaction. */
  instructions?: string | null;
}

export interface SummarizerInput extends InstructionInput {
  head: readonly Message[];
  /** The session's system prompt, used when the config names no summarizer system prompt. */
  sessionSystem?: string | null;
  /** Full tool outputs (tool-output cache) by call id or ref id: their error and last lines join the clipped view. */
  outputs?: ToolOutputs;
}

/** Shown first when the head opens with an assistant turn (providers want a user turn first). */
export const HISTORY_OPENER = '[The conversation continues from an earlier point.]';

const callIdOf = (part: Part) => (part.type === 'tool_call' || part.type === 'tool_result' ? part.callId : null);

/**
 * Seed 000 2.6.1, for every call: a call without its result in `messages`
 * (and a result without its call) is removed; a message left empty is
 * dropped, one with other content keeps that content.
 */
export function stripUnansweredToolCalls(messages: readonly Message[]): Message[] {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const { parts } of messages) {
    for (const part of parts) {
      if (part.type === 'tool_call') calls.add(part.callId);
      else if (part.type === 'tool_result') results.add(part.callId);
    }
  }
  const paired = (part: Part) =>
    (part.type !== 'tool_call' || results.has(part.callId)) && (part.type !== 'tool_result' || calls.has(part.callId));
  return messages.flatMap((message) => {
    if (message.parts.every(paired)) return [message];
    const parts = message.parts.filter(paired);
    return parts.length > 0 ? [{ ...message, parts }] : [];
  });
}

/** OpenCode's text for media it strips from the summarizer input. */
const attached = (file: FilePart) => `[Attached ${file.mediaType}: ${file.filename ?? 'file'}]`;

/**
 * What the clip of a result hides that matters: the error lines (with their
 * file:line), the warnings and salient lines, and the last lines of the whole output, read from the cache's
 * full text when the caller passed it, else from the stored view.
 */
function hiddenFacts(part: ToolResultPart, clipped: string, outputs?: ToolOutputs): string[] {
  const given = outputs?.get(part.callId) ?? (part.outputRef ? outputs?.get(part.outputRef.id) : undefined);
  if (given === undefined && clipped === part.output) return [];
  const digest = given === undefined ? digestToolOutput(part.output) : isToolOutputDigest(given) ? given : digestToolOutput(given);
  const errors = digest.errors
    .filter((error) => !clipped.includes(error.text.slice(0, 80)))
    .map((error) => `line ${error.line}: ${error.text}${error.location ? ` (at ${error.location})` : ''}`);
  const tail = digest.tail.filter((line) => !clipped.includes(line));
  const salient = [...digest.notable, ...(digest.salient ?? [])].filter((line) => !clipped.includes(line) && !tail.includes(line));
  return [
    ...(errors.length > 0 ? [`[Error lines of the full output (${digest.lines} lines):]`, ...errors] : []),
    ...(salient.length > 0 ? ['[Warnings and facts of the full output (hashes, ids, settings):]', ...salient] : []),
    ...(tail.length > 0 ? ['[Last lines of the full output:]', ...tail] : []),
  ];
}

function renderPart(part: Part, clip: number, outputs?: ToolOutputs): string | null {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'reasoning':
      return null;
    case 'file':
      return attached(part);
    case 'tool_call':
      return `[Tool call ${part.name} (${part.callId})] ${clipRunes(inputText(part.input), clip)}`;
    case 'tool_result': {
      const tags = [part.isError ? 'error' : '', part.outputRef ? `ref=${part.outputRef.id}` : ''].filter(Boolean);
      const header = `[Tool result ${part.name} (${part.callId})${tags.length > 0 ? ` ${tags.join(', ')}` : ''}]`;
      const clipped = clipRunes(part.output, clip);
      return [header, clipped, ...hiddenFacts(part, clipped, outputs), ...(part.attachments ?? []).map(attached)].join('\n');
    }
  }
}

/**
 * The head as the summarizer reads it: agent-visible messages only, unpaired
 * calls stripped, tool results clipped to `clip` code points, media and
 * reasoning out; tool output becomes a user turn, and same-role turns merge.
 */
export function formatHeadForSummarizer(head: readonly Message[], clip: number, outputs?: ToolOutputs): SummarizerMessage[] {
  const turns: SummarizerMessage[] = [];
  for (const message of stripUnansweredToolCalls(head.filter((m) => m.metadata?.agentVisible !== false))) {
    const content = message.parts
      .map((part) => renderPart(part, clip, outputs))
      .filter((text): text is string => Boolean(text))
      .join('\n');
    if (!content) continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content += `\n\n${content}`;
    else turns.push({ role, content });
  }
  if (turns[0]?.role === 'assistant') turns.unshift({ role: 'user', content: HISTORY_OPENER });
  return turns;
}

const withBullets = (text: string, bullets: readonly string[]) =>
  bullets.length === 0 ? text : `${text}\n${bullets.map((bullet) => `- ${bullet}`).join('\n')}`;

/**
 * The final instruction: OpenCode's update anchor around the previous
 * summary (the previous record rendered in this strategy's template when the
 * pivot stored one), the summary prompt with its directives as bullets, the
 * sections the record has (so an LLM summary and the built-in one share
 * them), the `<retain>` request when configured, the pins, then this
 * request's own instructions.
 */
export function summaryInstruction(input: InstructionInput): string {
  const { config, previousRecord, pins = [], instructions } = input;
  const template = templateForStrategy(config.strategy);
  const previous = previousRecord ? renderRecord(previousRecord, template) : input.previousSummary;
  const retainPrompt = config.retainPrompt ?? (config.retainDirectives.length > 0 ? DEFAULT_RETAIN_PROMPT : null);
  return [
    previous ? previousSummaryAnchor(previous) : null,
    withBullets(config.summaryPrompt, config.summaryDirectives),
    sectionsInstruction(template),
    retainPrompt ? withBullets(retainPrompt, config.retainDirectives) : null,
    pins.length > 0 ? pinnedContextNote(pins.map((pin) => pin.text)) : null,
    instructions?.trim() ? `Additional instructions for this summary:\n${instructions.trim()}` : null,
  ]
    .filter((block): block is string => block !== null)
    .join('\n\n');
}

export function buildSummarizerRequest(input: SummarizerInput): SummarizerRequest {
  const { config } = input;
  const messages = formatHeadForSummarizer(input.head, config.toolResultClipRunes, input.outputs);
  const instruction = summaryInstruction(input);
  const last = messages[messages.length - 1];
  if (last?.role === 'user') last.content += `\n\n---\n\n${instruction}`;
  else messages.push({ role: 'user', content: instruction });
  return {
    system: config.summarySystemPrompt ?? input.sessionSystem ?? '',
    messages,
    maxOutputTokens: config.summaryMaxTokens,
  };
}

export interface TrimmedHead {
  head: Message[];
  trimmed: number;
  /** Codex's notice, or null when nothing was trimmed. */
  notice: string | null;
}

/**
 * Codex's answer to a summarizer input that overflows its own window: drop
 * the oldest `count` head messages, each with its pair (a call takes its
 * results along), and say so. The pivot still covers them.
 */
export function trimSummarizerInputForOverflow(head: readonly Message[], count: number): TrimmedHead {
  let rest = [...head];
  let trimmed = 0;
  while (trimmed < count && rest.length > 0) {
    const [first, ...others] = rest;
    const paired = new Set(first.parts.map(callIdOf).filter((id): id is string => id !== null));
    const unpaired = (part: Part) => {
      const callId = callIdOf(part);
      return callId === null || !paired.has(callId);
    };
    rest = others.flatMap((message) => {
      const parts = message.parts.filter(unpaired);
      if (parts.length === message.parts.length) return [message];
      return parts.length > 0 ? [{ ...message, parts }] : [];
    });
    trimmed++;
  }
  const notice =
    trimmed > 0 ? `Trimmed ${trimmed} older thread item(s) before compacting so the prompt fits the model context window.` : null;
  return { head: rest, trimmed, notice };
}
