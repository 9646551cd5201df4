/**
 * Texts of the summarizer prompts and of the messages a pivot puts before the
 * window. Quoted from the systems the presets reproduce where those publish
 * them (OpenCode, Codex, the Anthropic SDK default that seed 000's Python
 * version uses); the seed 001 and 003 prompts are ours, as the seeds name the
 * output shape but not the wording.
 */
import type { SummaryTemplate } from './heuristic/summary-template';

/** OpenCode's compaction agent system prompt (seed 002, 6.1). */
export const OPENCODE_SYSTEM_PROMPT = `You are a helpful AI assistant tasked with summarizing conversations.

When asked to summarize, provide a detailed but concise summary of the conversation.
Focus on information that would be helpful for continuing the conversation, including:
- What was done
- What is currently being worked on
- Which files are being modified
- What needs to be done next
- Key user requests, constraints, or preferences that should persist
- Important technical decisions and why they were made

Your summary should be comprehensive enough to provide context but concise enough to be quickly understood.`;

/** OpenCode's summary sections, in template order; the heuristic summarizer writes the same ones. */
export const SUMMARY_SECTIONS = {
  goal: 'Goal',
  constraints: 'Constraints & Preferences',
  progress: 'Progress',
  done: 'Done',
  inProgress: 'In Progress',
  blocked: 'Blocked',
  decisions: 'Key Decisions',
  nextSteps: 'Next Steps',
  critical: 'Critical Context',
  files: 'Relevant Files',
} as const;

/** OpenCode's runtime instruction (seed 002, 6.2) followed by its anchored-summary template. */
export const OPENCODE_SUMMARY_PROMPT = `Provide a detailed prompt for continuing our conversation above. Focus on information that would be helpful for continuing the conversation, including what we did, what we're doing, which files we're working on, and what we're going to do next considering new session will not have access to our conversation.

Output exactly the Markdown structure shown inside <template> and keep the section order unchanged. Do not include the <template> tags in your response.
<template>
## Goal
- [single-sentence task summary]

## Constraints & Preferences
- [user constraints, preferences, specs, or "(none)"]

## Progress
### Done
- [completed work or "(none)"]

### In Progress
- [current work or "(none)"]

### Blocked
- [blockers or "(none)"]

## Key Decisions
- [decision and why, or "(none)"]

## Next Steps
- [ordered next actions or "(none)"]

## Critical Context
- [important technical facts, errors, open questions, or "(none)"]

## Relevant Files
- [file or directory path: why it matters, or "(none)"]
</template>

Rules:
- Keep every section, even when empty.
- Use terse bullets, not prose paragraphs.
- Preserve exact file paths, commands, error strings, and identifiers when known.
- Do not mention the summary process or that context was compacted.`;

/** OpenCode's anchor when a previous summary exists (reference.md). */
export function previousSummaryAnchor(previousSummary: string): string {
  return [
    'Update the anchored summary below using the conversation history above.',
    'Preserve still-true details, remove stale details, and merge in the new facts.',
    '<previous-summary>',
    previousSummary,
    '</previous-summary>',
  ].join('\n');
}

/** The sections of the summary record's template, which every summarizer is asked to write (ours). */
export function sectionsInstruction(template: SummaryTemplate): string {
  return [
    'Write the summary in exactly these sections, in this order; leave out a section with nothing to say:',
    ...template.sections.map((section) => `${'#'.repeat(section.level)} ${section.heading}`),
  ].join('\n');
}

/** Tells the summarizer about the pinned context, which the agent keeps seeing verbatim after the summary (ours). */
export function pinnedContextNote(texts: readonly string[]): string {
  return [
    'The user pinned the context below: the agent keeps seeing it verbatim right after your summary, so do not repeat it, and keep the summary consistent with it.',
    '<pinned>',
    ...texts,
    '</pinned>',
  ].join('\n');
}

/** OpenCode's compaction marker as the model reads it. */
export const OPENCODE_MARKER_TEXT = 'What did we do so far?';

/** Codex's codex-rs/core/templates/compact/prompt.md. */
export const CODEX_SUMMARY_PROMPT = `You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.

Include:
- Current progress and key decisions made
- Important context, constraints, or user preferences
- What remains to be done (clear next steps)
- Any critical data, examples, or references needed to continue

Be concise, structured, and focused on helping the next LLM seamlessly continue the work.`;

/**
 * Codex's summary_prefix.md as shipped with the rebuild this preset
 * reproduces (newer Codex releases reword it). Fixed, not a setting: user
 * messages starting with it are earlier summaries, never real requests.
 */
export const CODEX_SUMMARY_PREFIX =
  'Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:';

/** Codex's text for a rebuild whose summary came back empty. */
export const CODEX_NO_SUMMARY = '(no summary available)';

/** Seed 000's default: the Python version's prompt (the Anthropic SDK's compaction default, `<summary>` tags). */
export const SPEC_000_SUMMARY_PROMPT = `You have been working on the task described above but have not yet completed it. Write a continuation summary that will allow you (or another instance of yourself) to resume work efficiently in a future context window where the conversation history will be replaced with this summary. Your summary should be structured, concise, and actionable. Include:

1. Task Overview
The user's core request and success criteria
Any clarifications or constraints they specified

2. Current State
What has been completed so far
Files created, modified, or analyzed (with paths if relevant)
Key outputs or artifacts produced

3. Important Discoveries
Technical constraints or requirements uncovered
Decisions made and their rationale
Errors encountered and how they were resolved
What approaches were tried that didn't work (and why)

4. Next Steps
Specific actions needed to complete the task
Any blockers or open questions to resolve
Priority order if multiple steps remain

5. Context to Preserve
User preferences or style requirements
Domain-specific details that aren't obvious
Any promises made to the user

Be concise but complete—err on the side of including information that would prevent duplicate work or repeated mistakes. Write in a way that enables immediate resumption of the task.
Wrap your summary in <summary></summary> tags.`;

/** The `<retain>` instruction used when a session gives retainDirectives but no retainPrompt (ours). */
export const DEFAULT_RETAIN_PROMPT =
  'Before the summary, list inside <retain></retain> tags what must survive verbatim: tool output reference ids worth reading again, exact identifiers, and decisions that must not be lost.';

/** Seed 001's structured checkpoint (our wording). */
export const SPEC_001_SYSTEM_PROMPT =
  'You are a context checkpoint writer. You read an agent conversation and write a structured checkpoint that lets the agent continue without the original messages. You never continue the conversation and never call tools.';

export const SPEC_001_SUMMARY_PROMPT = `Write a structured checkpoint of the conversation above, using exactly these sections:
## Goal
## Progress
## Key Decisions
## Files and Commands
## Errors
## Next Steps
## Critical Context

Use terse bullets and write "(none)" under an empty section. Preserve exact file paths, commands, identifiers and error strings.`;

/** Seed 003's summary marker. */
export const COMPACTED_CONTEXT_MARKER = '[COMPACTED_CONTEXT]';

/** Seed 001's summary marker. */
export const PREVIOUS_SUMMARY_MARKER = '[Previous conversation summary]';

/** Seed 003's summarizer (our wording). */
export const SPEC_003_SYSTEM_PROMPT =
  'You compress agent conversations into a compact context block that replaces them. You never continue the conversation and never call tools.';

export const SPEC_003_SUMMARY_PROMPT = `Summarize the conversation above so the agent can continue with only this summary and its most recent turns. Keep the user's goals and constraints, decisions and their reasons, files and commands, errors and whether they were fixed, and the next steps. Be terse: the summary and the recent turns together must fit in half of the context window.`;
