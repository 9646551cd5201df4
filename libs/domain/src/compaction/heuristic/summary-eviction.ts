/**
 * The eviction policy that keeps the rendered summary record within its
 * token budget (fitRecord), explicit and total: no per-section caps; items
 * go only when the whole rendering is over budget, lowest tier first, and
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
import { estimateTokens } from '../../tokens/chars';
import { clipText } from './extract';
import { CommandItem, ConstraintItem, ErrorItem, ExcerptItem, FileItem, RecordItem, RecordSection, SummaryRecord, TodoItem, ValueItem } from './summary-record';
import { bulletOf, isPlainFile, renderRecord, Slot, SLOT_SOURCE, SummaryTemplate } from './summary-template';
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
