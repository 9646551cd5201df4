/**
 * A view that fits the usable window. The trigger asks for a compaction
 * before the window fills, but the agent keeps appending and reading while it
 * is queued or running; a read must never hand the model a request the
 * provider will refuse. So a view over the budget is fitted for that read
 * only (the log is unchanged and the compaction still runs), in this order:
 *
 * 1. old tool outputs, oldest first, become the trim placeholder with their
 *    ref (the agent can still read them through the tool-output cache); the
 *    newest result stays, it is what the model is about to read;
 * 2. the oldest post-pivot messages are dropped, at a boundary that never
 *    splits a tool call from its result, and a notice says what was left out;
 * 3. as a last resort, the newest outputs are cleared too.
 *
 * The pivot's prefix, the pins and the system prompt are never touched.
 */
import { Message, Part } from '../events';
import { estimateMessageTokensAs } from '../tokens';
import { trimmedPlaceholder } from '../placeholders';
import { replaceOutput } from './fold';
import { ModelView, ViewSource } from './types';

/** What fitting changed, reported with the read. */
export interface ViewFit {
  /** The view's figure before fitting. */
  tokensBefore: number;
  /** Tool results shown as the placeholder for this read. */
  clearedOutputs: number;
  /** The seq of the newest message left out (all before it went too), or null when none was. */
  droppedThroughSeq: number | null;
}

export interface FittedView {
  view: ModelView;
  /** Null when the view fitted as it was. */
  fitted: ViewFit | null;
}

/** Metadata kind of the notice that stands for the messages a fitted view left out. */
export const FITTED_NOTICE_KIND = 'fitted_context';

export function fittedNotice(droppedThroughSeq: number): Message {
  return {
    id: `fitted-through-${droppedThroughSeq}`,
    role: 'user',
    parts: [
      {
        type: 'text',
        text: `[Earlier messages through seq ${droppedThroughSeq} are left out of this context to fit the model's window; a compaction will summarize them.]`,
      },
    ],
    metadata: { kind: FITTED_NOTICE_KIND, userVisible: false },
  };
}

const approx = (message: Message) => estimateMessageTokensAs(message, 'approx');
const isLogged = (source: ViewSource) => source.origin === 'log' || source.origin === 'synthetic';

/** The message with its outputs as the placeholder, where that is shorter; null when none is (placeholders already, tiny outputs). */
function withoutOutputs(message: Message): Message | null {
  let changed = false;
  const parts = message.parts.map((part): Part => {
    if (part.type !== 'tool_result') return part;
    const placeholder = trimmedPlaceholder(part.outputRef?.id);
    if (part.output.length <= placeholder.length && !part.attachments?.length) return part;
    changed = true;
    return replaceOutput(part, placeholder);
  });
  return changed ? { ...message, parts } : null;
}

/** Fits `view` within `budget` tokens of its own figure (ModelView.tokens.estimated). */
export function fitView(view: ModelView, budget: number): FittedView {
  const tokensBefore = view.tokens.estimated;
  if (tokensBefore <= budget) return { view, fitted: null };
  const messages = [...view.messages];
  const sources = [...view.sources];
  let figure = tokensBefore;
  let clearedOutputs = 0;
  let droppedThroughSeq: number | null = null;

  /** What clearing message i's outputs would save, and the cleared message. */
  const clearing = (i: number) => {
    const cleared = messages[i].role === 'tool' && isLogged(sources[i]) ? withoutOutputs(messages[i]) : null;
    const tokens = cleared ? approx(cleared) : sources[i].tokens;
    return cleared && tokens < sources[i].tokens ? { cleared, tokens, saved: sources[i].tokens - tokens } : null;
  };
  const clear = (i: number) => {
    const found = clearing(i);
    if (!found) return;
    figure -= found.saved;
    clearedOutputs += found.cleared.parts.filter((part, j) => part !== messages[i].parts[j]).length;
    messages[i] = found.cleared;
    sources[i] = { ...sources[i], tokens: found.tokens };
  };

  // 1. Old outputs, oldest first; the newest logged result stays.
  const newestResult = messages.findLastIndex((message, i) => message.role === 'tool' && sources[i].origin === 'log');
  for (let i = 0; i < messages.length && figure > budget; i++) if (i !== newestResult) clear(i);
  if (figure <= budget) return done();

  // The window after the prefix and the pins; a leading result whose call is in the prefix stays with it.
  let first = sources.findLastIndex((source) => !isLogged(source)) + 1;
  while (first < messages.length && messages[first].role === 'tool') first++;
  // Boundaries k (drop [first, k)): the message at k is no tool result, since results follow their call directly.
  const boundaries: Array<{ k: number; dropped: number }> = [];
  let dropped = 0;
  for (let k = first + 1; k < messages.length; k++) {
    dropped += sources[k - 1].tokens;
    if (messages[k].role !== 'tool') boundaries.push({ k, dropped });
  }
  const notice = (k: number) => approx(fittedNotice(sources[k - 1].seq));
  // A view that cannot fit whatever is dropped (the provider's overhead alone is over the budget) keeps its turns.
  const deepest = boundaries.at(-1);
  const newestSaving = messages.reduce((sum, _, i) => sum + (i >= (deepest?.k ?? 0) ? (clearing(i)?.saved ?? 0) : 0), 0);
  if (!deepest || figure - deepest.dropped + notice(deepest.k) - newestSaving > budget) return done();

  // 2. The oldest messages, up to the first boundary that frees enough (else the deepest), behind a notice.
  const cut = boundaries.find(({ k, dropped: freed }) => figure - freed + notice(k) <= budget) ?? deepest;
  const removed = sources.slice(first, cut.k);
  droppedThroughSeq = Math.max(...removed.map((source) => source.seq));
  const message = fittedNotice(droppedThroughSeq);
  const noticeTokens = approx(message);
  figure += noticeTokens - cut.dropped;
  messages.splice(first, cut.k - first, message);
  sources.splice(first, cut.k - first, { seq: droppedThroughSeq, origin: 'synthetic', tokens: noticeTokens });

  // 3. Last resort: the newest outputs too.
  for (let i = messages.length - 1; i >= 0 && figure > budget; i--) clear(i);
  return done();

  function done(): FittedView {
    return {
      view: { ...view, messages, sources, tokens: { ...view.tokens, estimated: figure } },
      fitted: { tokensBefore, clearedOutputs, droppedThroughSeq },
    };
  }
}
