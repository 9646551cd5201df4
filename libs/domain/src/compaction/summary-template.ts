/**
 * The summary record as text, in each preset's template, and the eviction
 * policy that keeps it within its token budget.
 *
 * Eviction (fitRecord), explicit and total: no per-section caps; items go
 * only when the whole rendering is over budget, lowest tier first, and
 * within a tier the one seen least recently (then the least often):
 *
 *   tier 0  finished todos, fixed errors, turn endings
 *   tier 1  values the assistant or a tool wrote, a tool's last lines, files read or mentioned once
 *   tier 2  the user's messages (their own budget, newest kept), commands that succeeded
 *           (with what they answered), files seen again, carried context, lines found in
 *           outputs (warnings, rare facts: hashes, ids, settings) with the call that printed them
 *   tier 3  decisions and their reasons, failed commands
 *   tier 4  open errors, open and in-progress todos, edited files, the user's values, the user's
 *           sentences kept for the facts they state (no constraint cue)
 *   tier 5  the user's constraints (they stay until revoked; only constraints alone over budget lose their oldest)
 *   tier 6  the goal
 *
 * Value comes before age: what the user wrote (a rate limit, an endpoint)
 * and the files the task changed sit above everything a tool or the
 * assistant adds, so a flood of newer tool output cannot push them out; age
 * only orders items of the same tier.
 */
import type { CompactionStrategy } from '../config/types';
import { estimateTokens } from '../prune/estimate-tokens';
import { clipMiddle, clipText, normalizeSpace } from './extract';
import {
  CommandItem,
  ConstraintItem,
  emptyRecord,
  ErrorItem,
  ExcerptItem,
  FileItem,
  RecordItem,
  RecordSection,
  SummaryRecord,
  TodoItem,
  ValueItem,
} from './summary-record';

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
const isPlainFile = (file: FileItem) => !file.actions.includes('edited');
const PLAIN_FILES_LEAD = '- Read or mentioned: ';

function fileBullet(file: FileItem): string {
  if (isPlainFile(file)) return file.text;
  return `- ${file.text} (${file.actions.filter((action) => action !== 'mentioned').join(', ')})`;
}

const inlineValue = (value: ValueItem) => (value.text.includes('`') ? value.text : `\`${value.text}\``);

/** A line of an output with the call it came from: `- \`npm test\`: FAILED …`. */
const excerptBullet = (excerpt: ExcerptItem) => (excerpt.source ? `- \`${excerpt.source}\`: ${excerpt.text}` : `- ${excerpt.text}`);
const EXCERPT_BULLET = /^`([^`]+)`: (.+)$/;

/** One item's bullet; values are listed inline in one bullet, so theirs is the list entry. */
function bulletOf(slot: Slot, item: RecordItem): string {
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
const SLOT_SOURCE: Record<Exclude<Slot, 'latest'>, { section: RecordSection; keep?: (item: RecordItem) => boolean }> = {
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

// ---------------------------------------------------------------- eviction

/** The eviction tier of an item (lower goes first); see the file comment. */
export function evictionTier(section: RecordSection, item: RecordItem, record: SummaryRecord): number {
  switch (section) {
    case 'progress':
      return 0;
    case 'excerpts':
      // A line found in an output (a warning, a hash, a setting) outranks a tool's last lines.
      return (item as ExcerptItem).source === null ? 1 : 2;
    case 'todos':
      return ['completed', 'cancelled'].includes((item as TodoItem).status) ? 0 : 4;
    case 'errors':
      return (item as ErrorItem).fixed ? 0 : 4;
    case 'values':
      return (item as ValueItem).origin === 'user' ? 4 : 1;
    case 'commands':
      return (item as CommandItem).ok === true ? 2 : 3;
    case 'userMessages':
    case 'context':
      return 2;
    case 'files':
      // A file the task changed is what it is about; one the agent opened is its context; one only mentioned once is noise.
      return (item as FileItem).actions.includes('edited') ? 4 : (item as FileItem).actions.includes('read') ? 3 : item.hits > 1 ? 2 : 1;
    case 'decisions':
      return 3;
    case 'constraints':
      return (item as ConstraintItem).cued === false ? 4 : 5;
    case 'goal':
      return item === record.goal[0] ? 6 : 5;
  }
}

/**
 * Order of eviction: tier, then least recently seen, then least often, then
 * oldest. Seen-once does not come first: that would put an early fact stated
 * once (the user's rate limit, the endpoint) behind every newer repeated one.
 */
function evictionOrder(record: SummaryRecord, sections: readonly RecordSection[]) {
  const candidates = sections.flatMap((section) =>
    (record[section] as RecordItem[]).map((item) => ({ section, item, tier: evictionTier(section, item, record) })),
  );
  return candidates.sort((a, b) => a.tier - b.tier || a.item.last - b.item.last || a.item.hits - b.item.hits || a.item.first - b.item.first);
}

function removeItem(record: SummaryRecord, section: RecordSection, item: RecordItem): void {
  const list = record[section] as RecordItem[];
  const at = list.indexOf(item);
  if (at !== -1) list.splice(at, 1);
}

export interface FitOptions {
  /** Budget of the user's verbatim messages inside the summary (newest kept). */
  userMessageTokens: number;
}

/** Record sections a template renders; the rest are not kept. */
function renderedSections(template: SummaryTemplate): Set<RecordSection> {
  const sections = new Set<RecordSection>();
  for (const section of template.sections) {
    for (const slot of section.slots) if (slot !== 'latest') sections.add(SLOT_SOURCE[slot].section);
  }
  return sections;
}

/** What one eviction took out of the record. */
export interface EvictedItem {
  section: RecordSection;
  text: string;
}

/** A compaction's receipt is bounded: the first items evicted (the least valuable), texts clipped. */
const RECEIPT_ITEMS = 50;
const RECEIPT_TEXT = 200;

export function evictionReceipt(evicted: readonly EvictedItem[]): EvictedItem[] {
  return evicted.slice(0, RECEIPT_ITEMS).map(({ section, text }) => ({ section, text: clipText(text, RECEIPT_TEXT) }));
}

/**
 * Evicts, in place, until `renderRecord(record, template)` fits `budgetTokens`
 * (estimated as the summary parser does) and the user's messages fit their
 * own budget. Returns the items evicted, in the order they went.
 */
export function fitRecord(record: SummaryRecord, template: SummaryTemplate, budgetTokens: number, options: FitOptions): EvictedItem[] {
  const evicted: EvictedItem[] = [];
  const evict = (section: RecordSection, item: RecordItem) => {
    removeItem(record, section, item);
    evicted.push({ section, text: item.text });
  };
  const rendered = renderedSections(template);
  const sections = (Object.keys(SLOT_SOURCE) as Array<Exclude<Slot, 'latest'>>).map((slot) => SLOT_SOURCE[slot].section);
  for (const section of new Set(sections)) {
    if (!rendered.has(section)) for (const item of [...(record[section] as RecordItem[])]) evict(section, item);
  }

  // The user's messages: newest kept within their own budget.
  const messageTokens = (item: RecordItem) => Math.ceil((item.text.length + 3) / 4);
  let userTokens = record.userMessages.reduce((sum, item) => sum + messageTokens(item), 0);
  for (const item of [...record.userMessages].sort((a, b) => a.last - b.last)) {
    if (userTokens <= options.userMessageTokens) break;
    userTokens -= messageTokens(item);
    evict('userMessages', item);
  }

  // Then the whole rendering. Sizes are tracked per item; the render is checked at the end.
  if (estimateTokens(renderRecord(record, template)) <= budgetTokens) return evicted;
  const order = evictionOrder(record, [...rendered]);
  const size = (section: RecordSection, item: RecordItem) => {
    if (section === 'values') return item.text.length + 4;
    if (section === 'files' && isPlainFile(item as FileItem)) return item.text.length + 2;
    const slot = section === 'todos' ? 'openTodos' : section === 'errors' ? 'openErrors' : (section as Slot);
    return bulletOf(slot, item).length + 1;
  };
  let chars = renderRecord(record, template).length;
  let next = 0;
  while (next < order.length) {
    // Evict by estimate, then confirm with a real render.
    while (next < order.length && Math.ceil(chars / 4) > budgetTokens) {
      const { section, item } = order[next++];
      chars -= size(section, item);
      evict(section, item);
    }
    const text = renderRecord(record, template);
    if (estimateTokens(text) <= budgetTokens) break;
    chars = text.length;
    if (Math.ceil(chars / 4) <= budgetTokens) chars = budgetTokens * 4 + 1;
  }
  return evicted;
}

// ---------------------------------------------------------------- reading an older summary

type Target = RecordSection | 'latest' | 'todosOpen';

const HEADING_TARGETS: ReadonlyArray<[RegExp, Target]> = [
  [/^(?:\d+\.\s*)?goals? and constraints$/, 'constraints'],
  [/^(?:\d+\.\s*)?(?:goal|task overview)$/, 'goal'],
  [/^(?:\d+\.\s*)?constraints(?: & preferences| and preferences)?$/, 'constraints'],
  [/^user messages/, 'userMessages'],
  [/^(?:done|progress|current state)$/, 'progress'],
  [/^in progress$/, 'latest'],
  [/^(?:blocked|errors)$/, 'errors'],
  [/^(?:key decisions|decisions|progress and key decisions|important discoveries)$/, 'decisions'],
  [/^(?:\d+\.\s*)?next steps$/, 'todosOpen'],
  [/^(?:relevant files|files)$/, 'files'],
  [/^files and commands$/, 'commands'],
  [/^(?:\d+\.\s*)?(?:critical context|context to preserve|critical data and references|context|carried forward)$/, 'context'],
];

function targetOf(heading: string): Target | null {
  const key = heading.trim().toLowerCase();
  return HEADING_TARGETS.find(([pattern]) => pattern.test(key))?.[1] ?? null;
}

/**
 * A record from a summary that has none (an older compaction, an LLM's
 * reply): bullets under headings it knows are sorted into sections; text in
 * another shape becomes one "Earlier summary" item. The clock starts at 1.
 */
export function recordFromSummaryText(text: string): SummaryRecord {
  const record = emptyRecord(1);
  const add = <T extends RecordItem>(section: RecordSection, itemText: string, extra: Omit<T, keyof RecordItem> = {} as never) => {
    const at = record.clock++;
    (record[section] as RecordItem[]).push({ text: itemText, first: at, last: at, hits: 1, ...extra });
  };
  const bullets: Array<{ target: Target; text: string }> = [];
  let current: Target | null = null;
  let recognised = false;
  for (const line of text.split('\n')) {
    const heading = /^#{1,4}\s+(.+)$/.exec(line)?.[1];
    if (heading !== undefined) {
      current = targetOf(heading);
      recognised ||= current !== null;
    } else if (current && line.startsWith('- ')) {
      if (line !== '- (none)') bullets.push({ target: current, text: line.slice(2).trim() });
    } else if (current && line.startsWith('  ') && bullets.length > 0) {
      bullets[bullets.length - 1].text += `\n${line.slice(2)}`;
    }
  }
  if (!recognised) {
    const trimmed = text.trim();
    if (trimmed) add('context', `Earlier summary: ${clipMiddle(trimmed, 2_000)}`);
    return record;
  }
  for (const { target, text: bullet } of bullets) {
    const flat = normalizeSpace(bullet);
    if (target === 'latest') {
      if (flat.startsWith('Latest request: ')) record.latestRequest = flat.slice('Latest request: '.length);
      else add<TodoItem>('todos', flat.replace(/^\[[ x~-]\]\s*/, ''), { status: 'in_progress', origin: 'checklist' });
    } else if (target === 'todosOpen' || /^\[[ x~-]\]\s/.test(flat)) {
      const mark = /^\[([ x~-])\]\s*/.exec(flat)?.[1] ?? ' ';
      const status = mark === 'x' ? 'completed' : mark === '~' ? 'in_progress' : mark === '-' ? 'cancelled' : 'pending';
      add<TodoItem>('todos', flat.replace(/^\[[ x~-]\]\s*/, ''), { status, origin: 'checklist' });
    } else if (target === 'errors' || flat.startsWith('fixed: ')) {
      const fixed = flat.startsWith('fixed: ');
      add<ErrorItem>('errors', fixed ? flat.slice('fixed: '.length) : flat, { location: null, source: null, fixed });
    } else if (flat.startsWith('Read or mentioned: ')) {
      for (const path of flat.slice('Read or mentioned: '.length).split(/,\s+/)) if (path) add<FileItem>('files', path, { actions: ['read'] });
    } else if (flat.startsWith('Key identifiers and values: ')) {
      for (const value of flat.slice('Key identifiers and values: '.length).split(/,\s+/)) {
        const unquoted = value.replace(/^`(.*)`$/, '$1');
        if (unquoted) add<ValueItem>('values', unquoted, { origin: 'assistant' });
      }
    } else if (target === 'context' && EXCERPT_BULLET.test(flat)) {
      const [, source, line] = EXCERPT_BULLET.exec(flat)!;
      add<ExcerptItem>('excerpts', line, { source });
    } else if ((target === 'commands' || target === 'context' || target === 'files') && /^`[^`]+`(?: → .*)?$/.test(flat)) {
      const [, command, outcome] = /^`([^`]+)`(?: → (.*))?$/.exec(flat)!;
      add<CommandItem>('commands', command, { outcome: outcome ?? null, ok: outcome === undefined ? null : /^(?:ok|exit 0)$/.test(outcome) });
    } else if (target === 'files' || target === 'commands') {
      const [, path, actions] = /^(.+?)(?: \(([a-z, ]+)\))?$/.exec(flat)!;
      const list = (actions ?? '').split(', ').filter((a): a is FileItem['actions'][number] => a === 'edited' || a === 'read');
      add<FileItem>('files', path, { actions: list.length > 0 ? list : ['mentioned'] });
    } else if (target === 'userMessages') {
      add('userMessages', bullet);
    } else {
      add(target, clipText(flat, target === 'goal' ? 800 : 2_000));
    }
  }
  return record;
}
