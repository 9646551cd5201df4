import { Message } from '../events';
import { clipNewest, clipRunes } from './clip-runes';
import { inputText } from '../tokens/chars';
import { ArchiveOptions } from './options';
import { ToolPair } from './tool-exchanges';

export const DIGEST_PREFIX = '[Compaction tool digest]';
export const DIGEST_KIND = 'tool_summary';

const status = (pair: ToolPair) => (pair.result.isError ? 'error' : 'ok');
const refNote = (pair: ToolPair) => (pair.result.outputRef ? `, ref=${pair.result.outputRef.id}` : '');
const outputOf = (pair: ToolPair) => pair.result.output.trim() || '(empty output)';

/** Below these a pair's line or block says too little to keep: older pairs are then only counted. */
const MIN_LINE_RUNES = 80;
const MIN_BLOCK_RUNES = 300;

/**
 * Local digest (strategy `heuristic`): one line per pair within
 * `heuristicClipRunes`; when the pairs are too many for a useful line each
 * (a bulk archive), the newest are listed and the older ones counted. The
 * format avoids call syntax so the model does not imitate it; the ref lets
 * it read the whole output back.
 */
export function heuristicDigest(pairs: readonly ToolPair[], options: Pick<ArchiveOptions, 'heuristicClipRunes'>): string {
  const lines = pairs.map(
    (pair) =>
      `- ${pair.result.name} (${status(pair)}${refNote(pair)}) input ${inputText(pair.input)}: ` +
      outputOf(pair).replace(/\s+/g, ' '),
  );
  return clipNewest(lines, options.heuristicClipRunes, '\n', MIN_LINE_RUNES, (count) => `- ${count} earlier tool result(s) archived, not listed`);
}

const DIGEST_SYSTEM_PROMPT = `You summarize multiple tool execution outputs for continuation context in a coding agent.
Return concise factual notes only.
Do not invent information.
Do not add instructions or policy text.
Do not write tool calls.`;

/** The LLM request for strategy `llm`: the pairs clipped to `inputClipChars` (code points); when too many, the newest are kept. */
export function buildDigestPrompt(
  pairs: readonly ToolPair[],
  options: Pick<ArchiveOptions, 'inputClipChars' | 'outputClipRunes'>,
): { system: string; user: string } {
  const blocks = pairs.map(
    (pair, i) =>
      `[${i + 1}] Tool: ${pair.result.name}\nStatus: ${status(pair)}${refNote(pair)}\n` +
      `Input: ${inputText(pair.input)}\nOutput:\n${outputOf(pair)}`,
  );
  const user = `Summarize these tool execution results for future turns; the agent will no longer see them.

Requirements:
- One bullet per tool call, with the tool name and status (ok/error).
- Keep critical facts and artifacts exactly: file paths, symbols, commands, error messages, numbers.
- Keep every ref=<id>: the full output can be read back with it.
- At most ${options.outputClipRunes} characters.

Tool results:
${clipNewest(blocks, options.inputClipChars, '\n\n', MIN_BLOCK_RUNES, (count) => `[${count} earlier tool result(s) omitted]`)}`;
  return { system: DIGEST_SYSTEM_PROMPT, user };
}

/** The LLM's answer clipped to `outputClipRunes`; null when empty, so the caller uses heuristicDigest. */
export function finishLlmDigest(text: string, options: Pick<ArchiveOptions, 'outputClipRunes'>): string | null {
  const digest = text.trim();
  return digest ? clipRunes(digest, options.outputClipRunes) : null;
}

/** The digest as seed 001's tool_summary message: the model sees it, the user's transcript does not. */
export function buildDigestMessage(text: string, id: string): Message {
  return {
    id,
    role: 'user',
    parts: [{ type: 'text', text: `${DIGEST_PREFIX}\n${text}` }],
    metadata: { agentVisible: true, userVisible: false, kind: DIGEST_KIND },
  };
}
