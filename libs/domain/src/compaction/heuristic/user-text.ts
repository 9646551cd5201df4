/** Which user messages are the user's own words (Codex's collect_user_messages filter). */
import { CODEX_SUMMARY_PREFIX } from '../prompts';

/** Codex's injected user messages that are not user intent (environment, aborted turns, instructions). */
const SESSION_PREFIXES = ['<environment_context>', '<turn_aborted>', '<user_instructions>', '# agents.md instructions'];

export function isRealUserText(text: string): boolean {
  const start = text.trimStart().toLowerCase();
  return start.length > 0 && !SESSION_PREFIXES.some((prefix) => start.startsWith(prefix)) && !text.startsWith(CODEX_SUMMARY_PREFIX);
}
