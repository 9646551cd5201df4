/**
 * The summary record as text, in each preset's template: the templates'
 * sections and what each lists, and the rendering. Keeping it within its
 * token budget is summary-eviction's; reading such text back, record-from-text's.
 */
import type { CompactionStrategy } from '../../config/types';
import { CommandItem, ErrorItem, ExcerptItem, FileItem, RecordItem, RecordSection, SummaryRecord, TodoItem, ValueItem } from './summary-record';

export const SUMMARY_TEMPLATE_NAMES = ['opencode', 'codex', 'spec-000', 'spec-001', 'spec-003'] as const;
export type SummaryTemplateName = (typeof SUMMARY_TEMPLATE_NAMES)[number];

/** What a template section lists; several record sections split by status. */
export type Slot =
  | 'goal'
  | 'constraints'
  | 'userMessages'
  | 'latest'
  | 'doneTodos'
  | 'activeTodos'
  | 'openTodos'
  | 'openErrors'
  | 'fixedErrors'
  | 'decisions'
  | 'progress'
  | 'commands'
  | 'files'
  | 'values'
  | 'context'
  | 'excerpts';

export interface TemplateSection {
  heading: string;
  level: 2 | 3;
  slots: readonly Slot[];
}

export interface SummaryTemplate {
  name: SummaryTemplateName;
  sections: readonly TemplateSection[];
  /** Whether the user's messages are kept verbatim in the summary (Codex keeps them in the prefix instead). */
  userMessages: boolean;
}

const h2 = (heading: string, ...slots: Slot[]): TemplateSection => ({ heading, level: 2, slots });
const h3 = (heading: string, ...slots: Slot[]): TemplateSection => ({ heading, level: 3, slots });

/**
 * One template per preset, each the shape its summarizer prompt asks for
 * (prompts.ts): OpenCode's anchored template, Codex's handoff points, seed
 * 000's five numbered parts, seed 001's seven sections, seed 003's terse
 * list. The user's own words get a subsection where the template has room.
 */
export const SUMMARY_TEMPLATES: Readonly<Record<SummaryTemplateName, SummaryTemplate>> = {
  opencode: {
    name: 'opencode',
    userMessages: true,
    sections: [
      h2('Goal', 'goal'),
      h2('Constraints & Preferences', 'constraints'),
      h3('User Messages', 'userMessages'),
      h2('Progress'),
      h3('Done', 'doneTodos', 'fixedErrors', 'progress'),
      h3('In Progress', 'latest', 'activeTodos'),
      h3('Blocked', 'openErrors'),
      h2('Key Decisions', 'decisions'),
      h2('Next Steps', 'openTodos'),
      h2('Critical Context', 'commands', 'values', 'context', 'excerpts'),
      h2('Relevant Files', 'files'),
    ],
  },
  codex: {
    name: 'codex',
    userMessages: false,
    sections: [
      h2('Goal', 'goal'),
      h2('Constraints & Preferences', 'constraints'),
      h2('Progress and Key Decisions', 'doneTodos', 'decisions', 'progress'),
      h2('Errors', 'openErrors', 'fixedErrors'),
      h2('Next Steps', 'latest', 'activeTodos', 'openTodos'),
      h2('Critical Data and References', 'commands', 'files', 'values', 'context', 'excerpts'),
    ],
  },
  'spec-000': {
    name: 'spec-000',
    userMessages: true,
    sections: [
      h2('1. Task Overview'),
      h3('Goal', 'goal'),
      h3('Constraints', 'constraints'),
      h3('User Messages', 'userMessages'),
      h2('2. Current State'),
      h3('Done', 'doneTodos', 'progress'),
      h3('In Progress', 'latest', 'activeTodos'),
      h3('Files', 'files'),
      h2('3. Important Discoveries'),
      h3('Decisions', 'decisions'),
      h3('Errors', 'openErrors', 'fixedErrors'),
      h2('4. Next Steps', 'openTodos'),
      h2('5. Context to Preserve', 'commands', 'values', 'context', 'excerpts'),
    ],
  },
  'spec-001': {
    name: 'spec-001',
    userMessages: true,
    sections: [
      h2('Goal', 'goal', 'constraints'),
      h2('Progress', 'doneTodos', 'progress', 'latest', 'activeTodos'),
      h2('Key Decisions', 'decisions'),
      h2('Files and Commands', 'files', 'commands'),
      h2('Errors', 'openErrors', 'fixedErrors'),
      h2('Next Steps', 'openTodos'),
      h2('Critical Context', 'userMessages', 'values', 'context', 'excerpts'),
    ],
  },
  'spec-003': {
    name: 'spec-003',
    userMessages: true,
    sections: [
      h2('Goals and Constraints', 'goal', 'constraints', 'userMessages'),
      h2('Decisions', 'decisions'),
      h2('Files and Commands', 'files', 'commands'),
      h2('Errors', 'openErrors', 'fixedErrors'),
      h2('Next Steps', 'latest', 'activeTodos', 'openTodos'),
      h2('Done', 'doneTodos', 'progress'),
      h2('Context', 'values', 'context', 'excerpts'),
    ],
  },
};

const BY_STRATEGY: Readonly<Record<CompactionStrategy, SummaryTemplateName>> = {
  'summary-tail': 'opencode',
  'user-rebuild': 'codex',
  'retain-summary': 'spec-000',
  'recent-tokens': 'spec-001',
  'compacted-context': 'spec-003',
};

export function templateForStrategy(strategy: CompactionStrategy): SummaryTemplate {
  return SUMMARY_TEMPLATES[BY_STRATEGY[strategy]];
}

// ---------------------------------------------------------------- bullets

/** Tags the reply parser looks for are defused inside the rendered text. */
const escapeTags = (text: string) => text.replace(/<(\/?)(summary|retain)>/gi, '‹$1$2›');

const TODO_MARK: Record<TodoItem['status'], string> = { pending: '[ ]', in_progress: '[~]', completed: '[x]', cancelled: '[-]' };
const VALUES_LEAD = '- Key identifiers and values: ';

function errorBullet(error: ErrorItem): string {
  const at = error.location && !error.text.includes(error.location) ? ` (at ${error.location})` : '';
  return `- ${error.fixed ? 'fixed: ' : ''}${error.text}${at}`;
}

function commandBullet(command: CommandItem): string {
  return `- \`${command.text}\`${command.outcome ? ` → ${command.outcome}` : ''}`;
}

/** A file only read or mentioned is listed inline with the others like it; an edited one gets its own bullet. */
export const isPlainFile = (file: FileItem) => !file.actions.includes('edited');
const PLAIN_FILES_LEAD = '- Read or mentioned: ';

function fileBullet(file: FileItem): string {
  if (isPlainFile(file)) return file.text;
  return `- ${file.text} (${file.actions.filter((action) => action !== 'mentioned').join(', ')})`;
}

const inlineValue = (value: ValueItem) => (value.text.includes('`') ? value.text : `\`${value.text}\``);

/** A line of an output with the call it came from: `- \`npm test\`: FAILED …`. */
const excerptBullet = (excerpt: ExcerptItem) => (excerpt.source ? `- \`${excerpt.source}\`: ${excerpt.text}` : `- ${excerpt.text}`);
/** An excerpt bullet's call and line, as record-from-text reads them back. */
export const EXCERPT_BULLET = /^`([^`]+)`: (.+)$/;

/** One item's bullet; values are listed inline in one bullet, so theirs is the list entry. */
export function bulletOf(slot: Slot, item: RecordItem): string {
  switch (slot) {
    case 'userMessages':
      return `- ${item.text.replace(/\n/g, '\n  ')}`;
    case 'doneTodos':
    case 'activeTodos':
    case 'openTodos':
      return `- ${TODO_MARK[(item as TodoItem).status]} ${item.text}`;
    case 'openErrors':
    case 'fixedErrors':
      return errorBullet(item as ErrorItem);
    case 'commands':
      return commandBullet(item as CommandItem);
    case 'files':
      return fileBullet(item as FileItem);
    case 'values':
      return inlineValue(item as ValueItem);
    case 'excerpts':
      return excerptBullet(item as ExcerptItem);
    default:
      return `- ${item.text}`;
  }
}

/** Which record section a slot reads, and which of its items. */
export const SLOT_SOURCE: Record<Exclude<Slot, 'latest'>, { section: RecordSection; keep?: (item: RecordItem) => boolean }> = {
  goal: { section: 'goal' },
  constraints: { section: 'constraints' },
  userMessages: { section: 'userMessages' },
  doneTodos: { section: 'todos', keep: (item) => ['completed', 'cancelled'].includes((item as TodoItem).status) },
  activeTodos: { section: 'todos', keep: (item) => (item as TodoItem).status === 'in_progress' },
  openTodos: { section: 'todos', keep: (item) => (item as TodoItem).status === 'pending' },
  openErrors: { section: 'errors', keep: (item) => !(item as ErrorItem).fixed },
  fixedErrors: { section: 'errors', keep: (item) => (item as ErrorItem).fixed },
  decisions: { section: 'decisions' },
  progress: { section: 'progress' },
  commands: { section: 'commands' },
  files: { section: 'files' },
  values: { section: 'values' },
  context: { section: 'context' },
  excerpts: { section: 'excerpts' },
};

function slotItems(record: SummaryRecord, slot: Exclude<Slot, 'latest'>): RecordItem[] {
  const { section, keep } = SLOT_SOURCE[slot];
  const list = record[section] as RecordItem[];
  return keep ? list.filter(keep) : list;
}

const latestLine = (record: SummaryRecord) => (record.latestRequest ? `- Latest request: ${record.latestRequest}` : null);

/** The bullets of one template section, in first-sighting order. */
function sectionLines(record: SummaryRecord, section: TemplateSection): string[] {
  const lines: string[] = [];
  for (const slot of section.slots) {
    if (slot === 'latest') {
      const latest = latestLine(record);
      if (latest) lines.push(latest);
    } else if (slot === 'values') {
      const values = slotItems(record, slot);
      if (values.length > 0) lines.push(VALUES_LEAD + values.map((value) => bulletOf(slot, value)).join(', '));
    } else if (slot === 'files') {
      const files = slotItems(record, slot) as FileItem[];
      lines.push(...files.filter((file) => !isPlainFile(file)).map(fileBullet));
      const plain = files.filter(isPlainFile);
      if (plain.length > 0) lines.push(PLAIN_FILES_LEAD + plain.map(fileBullet).join(', '));
    } else {
      lines.push(...slotItems(record, slot).map((item) => bulletOf(slot, item)));
    }
  }
  return lines;
}

/**
 * The record in `template`'s Markdown, sections in the template's order. An
 * empty section is left out (its heading too: no tokens spent on "(none)"),
 * and a parent heading goes with its last subsection; an empty record keeps
 * its first section, "(none)", so a summary is never blank.
 */
export function renderRecord(record: SummaryRecord, template: SummaryTemplate): string {
  const { sections } = template;
  const bodies = sections.map((section) => sectionLines(record, section));
  if (bodies.every((body) => body.length === 0)) bodies[sections.findIndex((section) => section.slots.length > 0)] = ['- (none)'];
  const lines: string[] = [];
  sections.forEach((section, i) => {
    let shown = bodies[i].length > 0;
    // A parent heading (no slots of its own) is shown while one of its subsections is.
    for (let j = i + 1; !shown && section.slots.length === 0 && j < sections.length && sections[j].level > section.level; j++) {
      shown = bodies[j].length > 0;
    }
    if (shown) lines.push(`${'#'.repeat(section.level)} ${section.heading}`, ...bodies[i], '');
  });
  return escapeTags(lines.join('\n').trimEnd());
}
