/**
 * The summary carried forward as data: what the built-in
 * summarizer knows about the task, section by section, stored on
 * `compaction.completed` (`data.record`) and merged with the next head at the
 * next compaction instead of being re-read from rendered text.
 *
 * Every item keeps when it was first and last seen (a logical clock that
 * runs across compactions) and how often, which is what the eviction policy
 * (summary-template.ts, `fitRecord`) orders by.
 */
import type { TodoStatus } from './extract';
import { normalizeSpace } from './extract';

export const SUMMARY_RECORD_VERSION = 1;

export interface RecordItem {
  /** The fact as rendered: the user's or the tool's own words, clipped. */
  text: string;
  /** Clock of its first sighting; the record's order. */
  first: number;
  /** Clock of its latest sighting (a later head mentioning it again refreshes it). */
  last: number;
  /** Sightings so far. */
  hits: number;
}

export type FileAction = 'edited' | 'read' | 'mentioned';

export interface FileItem extends RecordItem {
  /** text is the path. */
  actions: FileAction[];
}

export interface CommandItem extends RecordItem {
  /** text is the command line. `exit 0`, `exit 2: <first error>`, `failed: …`, `ok`; null when the result was not seen. */
  outcome: string | null;
  ok: boolean | null;
}

export interface ErrorItem extends RecordItem {
  /** Nearest `file:line`, or null. */
  location: string | null;
  /** The command (or tool) whose output showed it. */
  source: string | null;
  /** A later successful run of the same command, or a statement that it was fixed naming what it names. */
  fixed: boolean;
}

export interface TodoItem extends RecordItem {
  status: TodoStatus;
  /**
   * `tool`: the latest list a todo/plan tool set (replaced whole by the next); `checklist`: a markdown `- [ ]` item;
   * `stated`: the assistant's latest "next I will…" sentences (replaced by the next message that states some).
   */
  origin: 'tool' | 'checklist' | 'stated';
}

export interface ConstraintItem extends RecordItem {
  /**
   * False for a user sentence kept for the facts it states (a number, a name, a path, an identifier) without a
   * constraint cue in its language: it ranks below the cued constraints in eviction.
   */
  cued: boolean;
}

export interface ValueItem extends RecordItem {
  /** Who wrote it: user values outrank the assistant's and the tools'. */
  origin: 'user' | 'assistant' | 'tool';
}

export interface ExcerptItem extends RecordItem {
  /**
   * The command (or tool) whose output held the line: a warning or a rare line stating a fact (a hash, an id, a
   * setting). Null for a tool's last lines, whose text names the tool.
   */
  source: string | null;
}

export interface SummaryRecord {
  v: typeof SUMMARY_RECORD_VERSION;
  /** The first real user request (and, from an older summary, its goal lines). */
  goal: RecordItem[];
  /** The user's constraints and preferences in their own words, and their sentences that state facts; they stay until revoked. */
  constraints: ConstraintItem[];
  /** The user's messages verbatim (newest kept first within their budget). */
  userMessages: RecordItem[];
  /** The assistant's conclusions: decisions, diagnoses and their reasons. */
  decisions: RecordItem[];
  /** What each turn ended with (the assistant's last words), lowest priority. */
  progress: RecordItem[];
  /** Open and finished plan and todo items. */
  todos: TodoItem[];
  errors: ErrorItem[];
  commands: CommandItem[];
  files: FileItem[];
  /** Key identifiers and values: URLs, identifiers, code spans, quoted strings, numbers with units. */
  values: ValueItem[];
  /** Carried text without a better home: an older summary in another shape, a requested focus. */
  context: RecordItem[];
  /** Lines of tool outputs: a tool's last lines, warnings and rare facts with the call they came from. */
  excerpts: ExcerptItem[];
  latestRequest: string | null;
  /** The logical clock: the next sighting gets this value. */
  clock: number;
  /** Compactions this record went through. */
  compactions: number;
  /** Items the size budget evicted so far. */
  evicted: number;
}

export const RECORD_SECTIONS = [
  'goal',
  'constraints',
  'userMessages',
  'decisions',
  'progress',
  'todos',
  'errors',
  'commands',
  'files',
  'values',
  'context',
  'excerpts',
] as const;
export type RecordSection = (typeof RECORD_SECTIONS)[number];

export function emptyRecord(clock = 0): SummaryRecord {
  return {
    v: SUMMARY_RECORD_VERSION,
    goal: [],
    constraints: [],
    userMessages: [],
    decisions: [],
    progress: [],
    todos: [],
    errors: [],
    commands: [],
    files: [],
    values: [],
    context: [],
    excerpts: [],
    latestRequest: null,
    clock,
    compactions: 0,
    evicted: 0,
  };
}

/** Deduplication key of an item: case and spacing ignored for prose, exact (spacing aside) for code-like values. */
export function itemKey(section: RecordSection, text: string): string {
  const flat = normalizeSpace(text);
  return section === 'values' || section === 'files' || section === 'commands' ? flat : flat.toLowerCase();
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const STATUSES = new Set(['pending', 'in_progress', 'completed', 'cancelled']);
const ACTIONS = new Set(['edited', 'read', 'mentioned']);
const ORIGINS = new Set(['user', 'assistant', 'tool']);

function baseItem(value: unknown): RecordItem | null {
  if (!isObject(value) || typeof value.text !== 'string' || value.text === '') return null;
  const first = isNumber(value.first) ? value.first : 0;
  return { text: value.text, first, last: isNumber(value.last) ? value.last : first, hits: isNumber(value.hits) ? Math.max(1, value.hits) : 1 };
}

function items<T extends RecordItem>(value: unknown, extra: (raw: Record<string, unknown>, base: RecordItem) => T | null): T[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((raw) => {
    const base = baseItem(raw);
    const item = base ? extra(raw as Record<string, unknown>, base) : null;
    return item ? [item] : [];
  });
}

const plain = (_: Record<string, unknown>, base: RecordItem) => base;

/**
 * The record a stored compaction.completed carries, checked field by field
 * (it comes back from jsonb and may predate this version); null when there is
 * none or it is not one, so the caller falls back to the summary's text.
 */
export function parseSummaryRecord(value: unknown): SummaryRecord | null {
  if (!isObject(value) || value.v !== SUMMARY_RECORD_VERSION) return null;
  const record = emptyRecord();
  record.goal = items(value.goal, plain);
  record.constraints = items(value.constraints, (raw, base) => ({ ...base, cued: raw.cued !== false }));
  record.userMessages = items(value.userMessages, plain);
  record.decisions = items(value.decisions, plain);
  record.progress = items(value.progress, plain);
  record.context = items(value.context, plain);
  record.excerpts = items(value.excerpts, (raw, base) => ({ ...base, source: typeof raw.source === 'string' ? raw.source : null }));
  record.todos = items(value.todos, (raw, base) => ({
    ...base,
    status: (STATUSES.has(raw.status as string) ? raw.status : 'pending') as TodoStatus,
    origin: raw.origin === 'tool' || raw.origin === 'stated' ? raw.origin : 'checklist',
  }));
  record.errors = items(value.errors, (raw, base) => ({
    ...base,
    location: typeof raw.location === 'string' ? raw.location : null,
    source: typeof raw.source === 'string' ? raw.source : null,
    fixed: raw.fixed === true,
  }));
  record.commands = items(value.commands, (raw, base) => ({
    ...base,
    outcome: typeof raw.outcome === 'string' ? raw.outcome : null,
    ok: typeof raw.ok === 'boolean' ? raw.ok : null,
  }));
  record.files = items(value.files, (raw, base) => ({
    ...base,
    actions: Array.isArray(raw.actions) ? (raw.actions.filter((a) => ACTIONS.has(a as string)) as FileAction[]) : ['mentioned'],
  }));
  record.values = items(value.values, (raw, base) => ({
    ...base,
    origin: (ORIGINS.has(raw.origin as string) ? raw.origin : 'assistant') as ValueItem['origin'],
  }));
  record.latestRequest = typeof value.latestRequest === 'string' ? value.latestRequest : null;
  const maxSeen = RECORD_SECTIONS.flatMap((section) => (record[section] as RecordItem[]).map((item) => item.last));
  record.clock = Math.max(isNumber(value.clock) ? value.clock : 0, 1 + Math.max(0, ...maxSeen));
  record.compactions = isNumber(value.compactions) ? value.compactions : 0;
  record.evicted = isNumber(value.evicted) ? value.evicted : 0;
  return record;
}

/** Items of every section, with their section, in first-sighting order. */
export function allItems(record: SummaryRecord): Array<{ section: RecordSection; item: RecordItem }> {
  return RECORD_SECTIONS.flatMap((section) => (record[section] as RecordItem[]).map((item) => ({ section, item }))).sort(
    (a, b) => a.item.first - b.item.first,
  );
}

/** Number of items in the record. */
export const recordSize = (record: SummaryRecord) => RECORD_SECTIONS.reduce((sum, section) => sum + record[section].length, 0);
