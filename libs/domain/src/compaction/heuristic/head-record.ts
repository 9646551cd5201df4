/**
 * Reading a head into the summary record: the previous record is the
 * starting point and every message of the head, read whole, adds to it in
 * order (a fact seen again is refreshed, a fix closes the errors it names, a
 * revocation removes the constraints it names, a todo tool's latest list
 * replaces the previous one). Tool results are read from the full output the
 * caller passes (the tool-output cache) when there is one, else from the
 * message. Pure and linear in the head.
 */
import type { Message, Part, ToolCallPart, ToolResultPart } from '../../events';
import { isUserTurn } from '../../prune/tool-exchanges';
import { prunedPlaceholder, trimmedPlaceholder } from '../../placeholders';
import {
  checklistOf,
  clipMiddle,
  clipText,
  commandOf,
  fileActionOf,
  inputPathsOf,
  isConstraintSentence,
  isDecisionSentence,
  isFiller,
  isFixStatement,
  isNextStep,
  isPath,
  isRevocation,
  patchPathsOf,
  Salient,
  salientTokens,
  sentencesOf,
  statesFact,
  structuralOf,
  TodoEntry,
  todoListOf,
} from './extract';
import { digestToolOutput, isToolOutputDigest, ToolOutputDigest } from './output-digest';
import {
  CommandItem,
  ConstraintItem,
  emptyRecord,
  ErrorItem,
  ExcerptItem,
  FileAction,
  FileItem,
  itemKey,
  RECORD_SECTIONS,
  RecordItem,
  RecordSection,
  SummaryRecord,
  TodoItem,
  ValueItem,
} from './summary-record';
import { isRealUserText } from './user-text';
import { joinText } from './text';

/**
 * Full tool outputs by call id (or by output ref id): the whole text from the
 * tool-output cache, or a digest the caller streamed with ToolOutputScanner.
 * A result without an entry is read from its message (its in-context view).
 */
export type ToolOutputs = ReadonlyMap<string, string | ToolOutputDigest>;

/** The tools whose calls set the plan / todo list (configurable: compaction.todoTools). */
export const DEFAULT_TODO_TOOLS: readonly string[] = [
  'todowrite',
  'todo_write',
  'TodoWrite',
  'update_plan',
  'manage_todo_list',
  'write_todos',
  'todo',
  'plan',
];

export interface HeadReadOptions {
  outputs?: ToolOutputs;
  todoTools?: readonly string[];
  /** The marker's instructions: kept as the requested focus. */
  instructions?: string | null;
}

export interface HeadReading {
  record: SummaryRecord;
  /** Items the head added or saw again: what the retention check looks for. */
  touched: Array<{ section: RecordSection; item: RecordItem }>;
}

const CLIP = { goal: 800, constraint: 300, userMessage: 1_200, decision: 300, progress: 160, error: 400, command: 300, value: 160, excerpt: 240, source: 80 };
const PLACEHOLDER_STARTS = [prunedPlaceholder(), trimmedPlaceholder()].map((text) => text.slice(0, -1));
const CHECKLIST_LINE = /^\s*(?:[-*+]|\d+[.)])\s+\[/;
const EXIT_LINE = /^(?:exit code|process exited|exited with|exit status)\b/i;
/** Generic words that do not tie a fix to an error or a revocation to a constraint. */
const STOP = new Set([
  'error', 'errors', 'failed', 'failure', 'fails', 'failing', 'fixed', 'test', 'tests', 'passes', 'passing', 'exception',
  'undefined', 'cannot', 'found', 'file', 'line', 'with', 'from', 'that', 'this', 'have', 'been', 'now', 'they', 'there',
  'were', 'will', 'when', 'then', 'than', 'into', 'your', 'what', 'which', 'also', 'just', 'only', 'more', 'must', 'should',
  'never', 'always', 'longer', 'anymore', 'again', 'still',
]);

/** Two sentences are about the same thing when they share a structural token, or two other words. */
function overlaps(a: Salient, b: Salient): boolean {
  for (const token of a.structural) if (!STOP.has(token) && b.structural.has(token)) return true;
  let shared = 0;
  for (const word of a.words) if (!STOP.has(word) && b.words.has(word) && ++shared >= 2) return true;
  return false;
}

class RecordBuilder {
  readonly record: SummaryRecord;
  private readonly index = new Map<RecordSection, Map<string, RecordItem>>();
  private readonly touched = new Map<RecordItem, RecordSection>();
  private readonly errorTokens = new Map<RecordItem, Salient>();

  constructor(previous: SummaryRecord | null) {
    this.record = previous ? structuredClone(previous) : emptyRecord();
    for (const section of RECORD_SECTIONS) {
      this.index.set(section, new Map((this.record[section] as RecordItem[]).map((item) => [itemKey(section, item.text), item])));
    }
  }

  tick(): number {
    return this.record.clock++;
  }

  touchedItems(): HeadReading['touched'] {
    return [...this.touched].map(([item, section]) => ({ section, item }));
  }

  find<T extends RecordItem>(section: RecordSection, text: string): T | undefined {
    return this.index.get(section)!.get(itemKey(section, text)) as T | undefined;
  }

  has(section: RecordSection, text: string): boolean {
    return this.index.get(section)!.has(itemKey(section, text));
  }

  /** Adds `text` to `section`, or refreshes the item it already is; `init` fills a new item's own fields. */
  add<T extends RecordItem>(section: RecordSection, text: string, init?: (item: RecordItem) => T, update?: (item: T) => void): T | null {
    if (!text.trim()) return null;
    const key = itemKey(section, text);
    const at = this.tick();
    const known = this.index.get(section)!.get(key) as T | undefined;
    if (known) {
      known.last = at;
      known.hits++;
      update?.(known);
      this.touched.set(known, section);
      return known;
    }
    const base: RecordItem = { text, first: at, last: at, hits: 1 };
    const item = (init ? init(base) : base) as T;
    (this.record[section] as RecordItem[]).push(item);
    this.index.get(section)!.set(key, item);
    this.touched.set(item, section);
    return item;
  }

  remove(section: RecordSection, item: RecordItem): void {
    const list = this.record[section] as RecordItem[];
    const at = list.indexOf(item);
    if (at !== -1) list.splice(at, 1);
    this.index.get(section)!.delete(itemKey(section, item.text));
    this.touched.delete(item);
  }

  file(path: string, action: FileAction): void {
    this.add<FileItem>('files', clipText(path, 300), (base) => ({ ...base, actions: [action] }), (item) => {
      if (!item.actions.includes(action)) item.actions.push(action);
    });
  }

  value(text: string, origin: ValueItem['origin']): void {
    const clipped = clipText(text, CLIP.value);
    if (this.has('files', clipped)) return;
    this.add<ValueItem>('values', clipped, (base) => ({ ...base, origin }), (item) => {
      if (origin === 'user') item.origin = 'user';
    });
  }

  /** Paths, locations, URLs and values of a text. */
  structural(text: string, origin: ValueItem['origin']): void {
    const found = structuralOf(text, { codeBlocks: true });
    for (const path of found.paths) this.file(path, 'mentioned');
    for (const location of found.locations) this.value(location, origin);
    for (const url of found.urls) this.value(url, origin);
    for (const value of found.values) this.value(value, origin);
  }

  error(text: string, location: string | null, source: string | null): void {
    const item = this.add<ErrorItem>('errors', clipText(text, CLIP.error), (base) => ({ ...base, location, source, fixed: false }), (known) => {
      known.fixed = false;
      known.location ??= location;
      known.source = source ?? known.source;
    });
    if (item) this.errorTokens.delete(item);
  }

  /** Closes the open errors a fix names: the same command run again successfully, or shared salient tokens. */
  fix(at: number, evidence: { command?: string; tokens?: Salient }): void {
    for (const error of this.record.errors) {
      if (error.fixed || error.last >= at) continue;
      if (evidence.command !== undefined && error.source === evidence.command) {
        error.fixed = true;
        continue;
      }
      if (!evidence.tokens) continue;
      let tokens = this.errorTokens.get(error);
      if (!tokens) {
        tokens = salientTokens(`${error.text} ${error.location ?? ''}`);
        this.errorTokens.set(error, tokens);
      }
      if (overlaps(evidence.tokens, tokens)) error.fixed = true;
    }
  }

  /** A user's sentence kept in their words: `cued` when it has a constraint cue, else for the facts it states. */
  constraint(sentence: string, cued: boolean): void {
    this.add<ConstraintItem>('constraints', clipText(sentence, CLIP.constraint), (base) => ({ ...base, cued }), (item) => {
      item.cued ||= cued;
    });
  }

  /** Removes the constraints a revoking sentence names (shared salient tokens). */
  revoke(at: number, tokens: Salient): void {
    for (const constraint of [...this.record.constraints]) {
      if (constraint.last < at && overlaps(tokens, salientTokens(constraint.text))) this.remove('constraints', constraint);
    }
  }

  /** The latest answer of a tool: a rerun replaces the excerpt of the run before. */
  excerpt(label: string, body: string): void {
    const prefix = `${label}: `;
    for (const item of this.record.excerpts) {
      if (item.source === null && item.text.startsWith(prefix)) {
        this.remove('excerpts', item);
        break;
      }
    }
    this.add<ExcerptItem>('excerpts', clipText(prefix + body, CLIP.excerpt), (base) => ({ ...base, source: null }));
  }

  /** A line of an output worth keeping (a warning, a rare fact), tied to the call that printed it. */
  outputLine(line: string, source: string): void {
    const from = clipText(source, CLIP.source);
    this.add<ExcerptItem>('excerpts', clipText(line, CLIP.excerpt), (base) => ({ ...base, source: from }), (item) => {
      item.source = from;
    });
  }

  todo(entry: TodoEntry, origin: TodoItem['origin']): void {
    this.add<TodoItem>('todos', entry.text, (base) => ({ ...base, status: entry.status, origin }), (item) => {
      item.status = entry.status;
      item.origin = origin;
    });
  }

  /**
   * A todo tool's list is the whole plan (and the assistant's latest stated next steps are all it still plans to do):
   * the previous list of that origin goes, items the new one keeps keep their history.
   */
  todoList(entries: readonly TodoEntry[], origin: 'tool' | 'stated' = 'tool'): void {
    const keep = new Set(entries.map((entry) => itemKey('todos', entry.text)));
    for (const item of [...this.record.todos]) {
      if (item.origin === origin && !keep.has(itemKey('todos', item.text))) this.remove('todos', item);
    }
    for (const entry of entries) this.todo(entry, origin);
  }
}

function isPlaceholder(text: string): boolean {
  return PLACEHOLDER_STARTS.some((start) => text.startsWith(start));
}

function outputOf(part: ToolResultPart, outputs?: ToolOutputs): ToolOutputDigest | null {
  const given = outputs?.get(part.callId) ?? (part.outputRef ? outputs?.get(part.outputRef.id) : undefined);
  if (given !== undefined) return isToolOutputDigest(given) ? given : digestToolOutput(given);
  return isPlaceholder(part.output) ? null : digestToolOutput(part.output);
}

/**
 * A command's outcome in one line: its exit status and what it said that
 * matters, the first error of a failure, else its last line (a count, a
 * status, the value asked for).
 */
function outcomeOf(result: ToolResultPart, digest: ToolOutputDigest | null): { outcome: string; ok: boolean | null } {
  const exit = digest?.exitCode ?? null;
  const firstError = digest?.errors[0]?.text ?? (result.isError ? (digest?.head[0] ?? '') : '');
  const failed = result.isError === true || (exit !== null && exit !== 0);
  const said = (text: string | undefined) => (text ? `: ${clipText(text, 160)}` : '');
  const last = digest?.tail.filter((line) => !EXIT_LINE.test(line)).at(-1);
  if (exit !== null && exit !== 0) return { outcome: `exit ${exit}${said(firstError || last)}`, ok: false };
  if (failed) return { outcome: `failed${said(firstError || last)}`, ok: false };
  if (digest && digest.errors.length > 0) return { outcome: `reported errors${said(firstError)}`, ok: null };
  return { outcome: `${exit === 0 ? 'exit 0' : 'ok'}${said(last)}`, ok: true };
}

/** Reads a head into the previous record (or an empty one). Messages hidden from the agent are skipped. */
export function readHead(head: readonly Message[], previous: SummaryRecord | null, options: HeadReadOptions = {}): HeadReading {
  const builder = new RecordBuilder(previous);
  const todoTools = new Set(options.todoTools ?? DEFAULT_TODO_TOOLS);
  const calls = new Map<string, ToolCallPart>();
  let turnConclusion: string | null = null;

  const closeTurn = () => {
    const conclusion = turnConclusion === null ? null : clipText(turnConclusion, CLIP.progress);
    // A turn ending already kept as a decision is not repeated as progress.
    if (conclusion && !builder.has('decisions', conclusion)) builder.add('progress', conclusion);
    turnConclusion = null;
  };

  const userText = (text: string) => {
    if (!builder.record.goal.length) builder.add('goal', clipMiddle(text, CLIP.goal));
    else builder.add('userMessages', clipMiddle(text, CLIP.userMessage));
    builder.record.latestRequest = clipText(text, 300);
    const goal = builder.record.goal[0]?.text ?? '';
    for (const sentence of sentencesOf(text)) {
      if (isRevocation(sentence)) {
        builder.revoke(builder.record.clock, salientTokens(sentence));
        builder.constraint(sentence, true);
      } else if (isConstraintSentence(sentence)) {
        builder.constraint(sentence, true);
      } else if (statesFact(sentence) && !goal.includes(sentence)) {
        // Cue words are per language; a sentence naming a number, a name, a path or an identifier is a fact in any.
        builder.constraint(sentence, false);
      }
    }
    builder.structural(text, 'user');
    for (const entry of checklistOf(text)) builder.todo(entry, 'checklist');
    // A pasted log or stack trace: its errors count like a tool's.
    if (text.split('\n', 6).length > 5) for (const error of digestToolOutput(text).errors) builder.error(error.text, error.location, 'user');
  };

  const assistantText = (text: string) => {
    const next: TodoEntry[] = [];
    for (const sentence of sentencesOf(text)) {
      if (isDecisionSentence(sentence)) builder.add('decisions', clipText(sentence, CLIP.decision));
      if (isFixStatement(sentence)) builder.fix(builder.record.clock, { tokens: salientTokens(sentence) });
      if (isNextStep(sentence) && !CHECKLIST_LINE.test(sentence)) next.push({ text: clipText(sentence, CLIP.decision), status: 'pending' });
    }
    if (next.length > 0) builder.todoList(next.slice(-5), 'stated');
    builder.structural(text, 'assistant');
    for (const line of text.split('\n')) {
      if (line.startsWith('$ ') && line.length > 2) builder.add<CommandItem>('commands', clipText(line.slice(2), CLIP.command), (base) => ({ ...base, outcome: null, ok: null }));
    }
    for (const entry of checklistOf(text)) builder.todo(entry, 'checklist');
    turnConclusion = text;
  };

  const toolCall = (part: ToolCallPart) => {
    calls.set(part.callId, part);
    if (todoTools.has(part.name)) {
      const list = todoListOf(part.input);
      if (list) builder.todoList(list);
      return;
    }
    const command = commandOf(part.input);
    if (command) {
      builder.add<CommandItem>('commands', clipText(command, CLIP.command), (base) => ({ ...base, outcome: null, ok: null }));
      for (const path of structuralOf(command).paths) builder.file(path, 'mentioned');
      for (const path of patchPathsOf(command)) builder.file(path, 'edited');
    }
    const action = fileActionOf(part.name) ?? 'mentioned';
    for (const path of inputPathsOf(part.input)) if (isPath(path) || (path.includes('/') && path.length >= 3)) builder.file(path, action);
    if (typeof part.input === 'object' && part.input !== null) {
      for (const value of Object.values(part.input as Record<string, unknown>)) {
        if (typeof value === 'string' && value !== command) for (const path of patchPathsOf(value)) builder.file(path, 'edited');
      }
    } else if (typeof part.input === 'string') {
      for (const path of patchPathsOf(part.input)) builder.file(path, 'edited');
    }
  };

  const toolResult = (part: ToolResultPart) => {
    const call = calls.get(part.callId);
    const digest = outputOf(part, options.outputs);
    if (todoTools.has(part.name) && !(call && todoListOf(call.input))) {
      const list = digest === null ? null : todoListOf(part.output);
      if (list && list.length > 0) builder.todoList(list);
    }
    const command = call ? commandOf(call.input) : null;
    const source = command ? clipText(command, CLIP.command) : part.name;
    if (digest) {
      for (const error of digest.errors) builder.error(error.text, error.location, source);
      if (digest.errors.length === 0 && part.isError) builder.error(digest.head[0] ?? `${part.name} failed`, null, source);
      for (const path of digest.patched) builder.file(path, 'edited');
      // What a tool other than a command answered last (a command's outcome says it); a file's content is not worth an excerpt.
      if (!command && fileActionOf(part.name) !== 'read' && digest.tail.length > 0) {
        const ends = digest.lines <= 3 ? digest.tail.slice(-3) : ['…', ...digest.tail.slice(-2)];
        builder.excerpt(part.name, ends.join(' ⏎ '));
      }
      for (const line of digest.notable ?? []) builder.outputLine(line, source);
      // A file's content is read for itself, not as a log: its settings are the file, not facts it reported.
      if (fileActionOf(part.name) !== 'read') for (const line of digest.salient ?? []) builder.outputLine(line, source);
    } else if (part.isError) {
      builder.error(`${part.name} failed`, null, source);
    }
    if (command) {
      const { outcome, ok } = outcomeOf(part, digest);
      const known = builder.find<CommandItem>('commands', source);
      if (known) {
        // The result completes the call's sighting rather than making another.
        known.outcome = outcome;
        known.ok = ok;
        known.last = builder.tick();
      } else {
        builder.add<CommandItem>('commands', source, (base) => ({ ...base, outcome, ok }));
      }
      if (ok) builder.fix(builder.record.clock, { command: source });
    }
  };

  const part = (p: Part) => {
    if (p.type === 'tool_call') toolCall(p);
    else if (p.type === 'tool_result') toolResult(p);
  };

  for (const message of head) {
    if (message.metadata?.agentVisible === false) continue;
    if (message.role === 'user') {
      if (!isUserTurn(message)) continue;
      closeTurn();
      const text = joinText(message.parts);
      if (text && isRealUserText(text) && !isFiller(text)) userText(text);
      message.parts.forEach(part);
    } else if (message.role === 'assistant') {
      const text = joinText(message.parts);
      if (text) assistantText(text);
      message.parts.forEach(part);
    } else if (message.role === 'tool') {
      message.parts.forEach(part);
    }
  }
  closeTurn();
  if (options.instructions?.trim()) builder.add('context', `Requested focus: ${clipText(options.instructions, 300)}`);
  return { record: builder.record, touched: builder.touchedItems() };
}
