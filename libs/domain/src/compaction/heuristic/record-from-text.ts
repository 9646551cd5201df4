import { clipMiddle, clipText, normalizeSpace } from './extract';
import { CommandItem, emptyRecord, ErrorItem, ExcerptItem, FileItem, RecordItem, RecordSection, SummaryRecord, TodoItem, ValueItem } from './summary-record';
import { EXCERPT_BULLET } from './summary-template';

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
