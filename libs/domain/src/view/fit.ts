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
import { estimateMessageTokensAs } from '../models';
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

function withoutOutputs(message: Message): Message | null {
  let changed = false;
  const parts = message.parts.map((part): Part => {
    if (part.type !== 'tool_result' || part.output.startsWith('[tool output trimmed') || part.output.startsWith('[Old tool result content cleared')) return part;
    changed = true;
    return replaceOutput(part, trimmedPlaceholder(part.outputRef?.id));
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

  const clear = (i: number) => {
    const cleared = withoutOutputs(messages[i]);
    if (!cleared) return;
    const tokens = approx(cleared);
    if (tokens >= sources[i].tokens) return;
    figure -= sources[i].tokens - tokens;
    clearedOutputs += cleared.parts.filter((part, j) => part !== messages[i].parts[j]).length;
    messages[i] = cleared;
    sources[i] = { ...sources[i], tokens };
  };

  const newestTool = messages.findLastIndex((message, i) => message.role === 'tool' && isLogged(sources[i]));
  for (let i = 0; i < messages.length && figure > budget; i++) {
    if (i !== newestTool && messages[i].role === 'tool' && isLogged(sources[i])) clear(i);
  }

  let droppedThroughSeq: number | null = null;
  const first = sources.findIndex(isLogged);
  if (figure > budget && first >= 0) {
    // Cut before index k: k is a boundary when the message there is not a tool result (results follow their call directly).
    let dropped = 0;
    let cut = -1;
    for (let k = first + 1; k < messages.length; k++) {
      dropped += sources[k - 1].tokens;
      if (messages[k].role === 'tool') continue;
      // A cut that frees less than its notice costs is no cut (a view whose size is the provider's overhead cannot fit).
      if (dropped > approx(fittedNotice(sources[k - 1].seq))) cut = k;
      if (cut === k && figure - dropped + approx(fittedNotice(sources[k - 1].seq)) <= budget) break;
    }
    if (cut > 0) {
      const removed = sources.slice(first, cut);
      droppedThroughSeq = Math.max(...removed.map((source) => source.seq));
      const notice = fittedNotice(droppedThroughSeq);
      const noticeTokens = approx(notice);
      figure += noticeTokens - removed.reduce((sum, source) => sum + source.tokens, 0);
      messages.splice(first, cut - first, notice);
      sources.splice(first, cut - first, { seq: droppedThroughSeq, origin: 'synthetic', tokens: noticeTokens });
    }
  }

  for (let i = messages.length - 1; i >= 0 && figure > budget; i--) {
    if (messages[i].role === 'tool' && isLogged(sources[i])) clear(i);
  }

  return {
    view: { ...view, messages, sources, tokens: { ...view.tokens, estimated: figure } },
    fitted: { tokensBefore, clearedOutputs, droppedThroughSeq },
  };
}
