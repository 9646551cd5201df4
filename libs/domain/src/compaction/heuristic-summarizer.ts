/**
 * The built-in summarizer: deterministic, no network. It fills OpenCode's
 * template from what the head shows (requests, constraints, decisions, files,
 * commands, errors, tool use, open items), merges the previous summary, and
 * answers in the `<summary>` shape the LLM summarizers use, so one parser
 * reads both.
 */
import type { Message, ToolCallPart, ToolResultPart } from '../events';
import { estimateTokens } from '../prune/estimate-tokens';
import { isUserTurn } from '../prune/tool-exchanges';
import { SUMMARY_SECTIONS } from './prompts';
import { clipLine, firstLine, joinText } from './text';

export interface HeuristicSummaryInput {
  head: readonly Message[];
  previousSummary: string | null;
  /** Upper bound of the reply in estimated tokens (summaryMaxTokens). */
  maxTokens: number;
  /** Also list the head's tool output refs in a `<retain>` block. */
  retain?: boolean;
  /** The marker's instructions; recorded, as a heuristic cannot follow them. */
  instructions?: string | null;
}

type SectionKey = Exclude<keyof typeof SUMMARY_SECTIONS, 'progress'>;
type Sections = Record<SectionKey, string[]>;

const PROGRESS_KEYS: readonly SectionKey[] = ['done', 'inProgress', 'blocked'];
const LAYOUT: ReadonlyArray<SectionKey | 'progress'> = [
  'goal',
  'constraints',
  'progress',
  'decisions',
  'nextSteps',
  'critical',
  'files',
];

/** Bullets kept per section: the newest, except Goal, where the first request stays. */
const CAPS: Readonly<Record<SectionKey, number>> = {
  goal: 3,
  constraints: 10,
  done: 12,
  inProgress: 3,
  blocked: 3,
  decisions: 8,
  nextSteps: 8,
  critical: 16,
  files: 25,
};

const BULLET_CHARS = 240;
/** Each text is read up to here: bounded work on huge outputs. */
const SCAN_CHARS = 20_000;

const CONSTRAINT = /\b(?:must|never|always|do not|don't|should(?:n't)?|prefer|avoid|only|without|make sure|keep)\b/i;
const DONE = /\b(?:done|completed?|fixed|implemented|created|added|updated|removed|renamed|passed|resolved|finished)\b/i;
const DECISION = /\b(?:decided|decision|chose|choose|will use|going with|instead of|switch(?:ed)? to|approach|trade-?off)\b/i;
const NEXT = /\b(?:next|then I(?:'ll| will)|todo|remaining|still need|will now|plan to|afterwards)\b/i;
const ERROR_LINE = /^\s*(?:[\w.]*(?:error|exception)\b|fatal\b|panic\b|traceback\b|fail(?:ed|ure)?\b)/i;
const FILE_EXTENSIONS = new Set(
  'ts tsx js jsx mjs cjs json md py go rs java kt rb php c h cc cpp hpp cs swift yml yaml toml ini cfg conf sql sh bash zsh css scss html vue svelte txt lock env xml gradle proto graphql tf'.split(
    ' ',
  ),
);
// Segments split by '/', so no nested ambiguity: linear on each token.
const PATH_TOKEN = /^(?:~|\.{1,2})?\/?[\w@%+-][\w@%+.-]*(?:\/[\w@%+.-]+)*\/?$/;
const TOKEN_SPLIT = /[\s"'`()[\]{}<>,;|=]+/;

const scan = (text: string) => text.slice(0, SCAN_CHARS);

function sentences(text: string): string[] {
  return scan(text)
    .split(/\n+|(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length >= 3);
}

function filePaths(text: string): string[] {
  return scan(text)
    .split(TOKEN_SPLIT)
    .map((token) => token.replace(/[.:!?]+$/, ''))
    .filter((token) => {
      if (token.length < 3 || token.length > 300 || !PATH_TOKEN.test(token)) return false;
      const extension = /\.([A-Za-z0-9]{1,8})$/.exec(token)?.[1]?.toLowerCase();
      // Without a known extension, only a rooted path with two segments or more (not "and/or").
      const rooted = /^(?:~|\.{1,2})?\//.test(token) && token.includes('/', 1);
      return (extension !== undefined && FILE_EXTENSIONS.has(extension)) || rooted;
    });
}

/** A shell command a tool call ran: `command` / `cmd` / `script` as a string or an argv array. */
function commandOf(call: ToolCallPart): string | null {
  const input = call.input as Record<string, unknown> | null;
  if (typeof input !== 'object' || input === null) return null;
  const value = input.command ?? input.cmd ?? input.script;
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    // Codex's shell runs ["bash", "-lc", "<script>"]: the script is what matters.
    return value.length === 3 && /^-\w*c$/.test(value[1]) ? value[2] : value.join(' ');
  }
  return null;
}

function errorLines(result: ToolResultPart): string[] {
  if (result.isError) return [`${result.name}: ${firstLine(result.output, BULLET_CHARS)}`];
  return scan(result.output)
    .split('\n')
    .filter((line) => ERROR_LINE.test(line))
    .slice(0, 3)
    .map((line) => `${result.name}: ${clipLine(line, BULLET_CHARS)}`);
}

const emptySections = (): Sections => ({
  goal: [],
  constraints: [],
  done: [],
  inProgress: [],
  blocked: [],
  decisions: [],
  nextSteps: [],
  critical: [],
  files: [],
});

/** What the head shows, section by section, oldest first. */
function extract(head: readonly Message[], instructions?: string | null): Sections {
  const sections = emptySections();
  const requests: string[] = [];
  const toolUse = new Map<string, number>();
  const calls = new Map<string, ToolCallPart>();
  const answered = new Set<string>();
  let lastResult: ToolResultPart | null = null;

  for (const message of head) {
    const text = joinText(message.parts);
    if (isUserTurn(message) && text) {
      requests.push(text);
      sections.constraints.push(...sentences(text).filter((s) => CONSTRAINT.test(s)));
    } else if (message.role === 'assistant' && text) {
      const said = sentences(text);
      sections.done.push(...said.filter((s) => DONE.test(s)));
      sections.decisions.push(...said.filter((s) => DECISION.test(s)));
      sections.nextSteps.push(...said.filter((s) => NEXT.test(s)));
    }
    sections.files.push(...filePaths(text));
    sections.critical.push(
      ...scan(text)
        .split('\n')
        .filter((line) => line.startsWith('$ '))
        .map((line) => `Command: ${line.slice(2)}`),
    );
    for (const part of message.parts) {
      if (part.type === 'tool_call') {
        calls.set(part.callId, part);
        toolUse.set(part.name, (toolUse.get(part.name) ?? 0) + 1);
        const command = commandOf(part);
        if (command) sections.critical.push(`Command: ${command}`);
        sections.files.push(...filePaths(JSON.stringify(part.input) ?? ''));
      } else if (part.type === 'tool_result') {
        answered.add(part.callId);
        lastResult = part;
        sections.critical.push(...errorLines(part));
        sections.files.push(...filePaths(part.output));
      }
    }
  }

  if (requests.length > 0) sections.goal.push(requests[0]);
  if (requests.length > 0) sections.inProgress.push(`Latest request: ${requests[requests.length - 1]}`);
  sections.done.push(...[...toolUse].map(([name, count]) => `Called ${name} ${count}×`));
  if (lastResult?.isError) sections.blocked.push(`${lastResult.name} failed: ${firstLine(lastResult.output, BULLET_CHARS)}`);
  for (const [callId, call] of calls) {
    if (!answered.has(callId)) sections.nextSteps.push(`Unfinished tool call: ${call.name} (${callId})`);
  }
  if (instructions?.trim()) sections.critical.push(`Requested focus: ${instructions.trim()}`);
  return sections;
}

const HEADING_TO_KEY = new Map<string, SectionKey>(
  (Object.entries(SUMMARY_SECTIONS) as Array<[SectionKey | 'progress', string]>)
    .filter((entry): entry is [SectionKey, string] => entry[0] !== 'progress')
    .map(([key, heading]) => [heading.toLowerCase(), key]),
);

/** The bullets of a summary in this template; null when it is in another shape. */
function parseSections(summary: string): Sections | null {
  const sections = emptySections();
  let current: SectionKey | null = null;
  let recognised = false;
  for (const raw of summary.split('\n')) {
    const line = raw.trim();
    const heading = /^#{2,3}\s+(.+)$/.exec(line)?.[1];
    if (heading !== undefined) {
      current = HEADING_TO_KEY.get(heading.toLowerCase()) ?? null;
      recognised ||= current !== null;
    } else if (current && line.startsWith('- ') && line !== '- (none)') {
      sections[current].push(line.slice(2));
    }
  }
  return recognised ? sections : null;
}

/** Previous bullets first, then the new; In Progress and Blocked are replaced when the head says anything. */
function merge(previous: Sections, next: Sections): Sections {
  const merged = emptySections();
  for (const key of Object.keys(merged) as SectionKey[]) {
    const replace = (key === 'inProgress' || key === 'blocked') && next[key].length > 0;
    merged[key] = replace ? next[key] : [...previous[key], ...next[key]];
  }
  return merged;
}

/** Clipped, deduplicated, capped (newest kept, Goal's first kept). */
function tidy(sections: Sections): Sections {
  const tidied = emptySections();
  for (const key of Object.keys(tidied) as SectionKey[]) {
    const unique = [...new Set(sections[key].map((bullet) => clipLine(bullet, BULLET_CHARS)))].filter(Boolean);
    tidied[key] = key === 'goal' ? unique.slice(0, CAPS[key]) : unique.slice(-CAPS[key]);
  }
  return tidied;
}

const bullets = (items: readonly string[]) => (items.length > 0 ? items.map((item) => `- ${item}`) : ['- (none)']);

function render(sections: Sections): string {
  const lines: string[] = [];
  for (const entry of LAYOUT) {
    lines.push(`## ${SUMMARY_SECTIONS[entry]}`);
    if (entry === 'progress') {
      for (const key of PROGRESS_KEYS) lines.push('', `### ${SUMMARY_SECTIONS[key]}`, ...bullets(sections[key]));
    } else {
      lines.push(...bullets(sections[entry]));
    }
    lines.push('');
  }
  return lines.join('\n').trimEnd();
}

/** Drops bullets, from the longest section's oldest (Goal's newest), until the text fits. */
function fit(sections: Sections, maxTokens: number): string {
  let text = render(sections);
  while (estimateTokens(text) > maxTokens) {
    const keys = Object.keys(sections) as SectionKey[];
    const longest = keys.reduce((a, b) => (sections[b].length > sections[a].length ? b : a));
    if (sections[longest].length === 0) break;
    if (longest === 'goal') sections.goal.pop();
    else sections[longest].shift();
    text = render(sections);
  }
  return text;
}

function retainBlock(head: readonly Message[]): string | null {
  const refs = head
    .flatMap((message) => message.parts)
    .filter((part): part is ToolResultPart => part.type === 'tool_result' && part.outputRef !== undefined)
    .map((part) => `- ref=${part.outputRef!.id} (${part.name}, ${part.outputRef!.line_count} lines)`)
    .slice(-10);
  return refs.length > 0 ? `<retain>\n${refs.join('\n')}\n</retain>\n` : null;
}

export function heuristicSummary(input: HeuristicSummaryInput): string {
  const fresh = extract(input.head, input.instructions);
  const previousText = input.previousSummary?.trim();
  const previous = previousText ? parseSections(previousText) : null;
  const sections = tidy(previous ? merge(previous, fresh) : fresh);
  // A previous summary in another shape is kept whole as one (longer) bullet.
  if (previousText && !previous) sections.critical.unshift(clipLine(`Earlier summary: ${previousText}`, 2_000));
  const retain = input.retain ? retainBlock(input.head) : null;
  const wrapper = estimateTokens(`${retain ?? ''}<summary>\n\n</summary>`);
  return `${retain ?? ''}<summary>\n${fit(sections, input.maxTokens - wrapper)}\n</summary>`;
}
