/** Builds stored events for compaction tests: seq from 1, a fixed clock, message tokens estimated as the store would. */
import type {
  CompactionReason,
  EventDataByType,
  EventType,
  Message,
  MessageMetadata,
  Part,
  StoredEvent,
  ToolResultPart,
} from '../../events';
import { approxMessageTokens } from '../../tokens/message-tokens';

export interface ResultSpec {
  output?: string;
  isError?: boolean;
  refId?: string;
  name?: string;
}

export function eventLog() {
  const events: StoredEvent[] = [];
  let calls = 0;

  function append<T extends EventType>(type: T, data: EventDataByType[T]): number {
    const seq = events.length + 1;
    const tokens = type === 'message.added' ? approxMessageTokens((data as EventDataByType['message.added']).message) : 0;
    events.push({ seq, id: `e${seq}`, type, data, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)), tokens } as StoredEvent);
    return seq;
  }
  const message = (role: Message['role'], parts: Part[], metadata?: MessageMetadata) =>
    append('message.added', { message: { id: `m${events.length + 1}`, role, parts, metadata } });

  const log = {
    events,
    get head() {
      return events.length;
    },
    user(text = 'please continue', metadata?: MessageMetadata) {
      message('user', [{ type: 'text', text }], metadata);
      return log;
    },
    assistant(text: string) {
      message('assistant', [{ type: 'text', text }]);
      return log;
    },
    /** An assistant message calling `names` (optionally with text); returns the call ids. */
    call(names: string | string[], options: { text?: string; input?: unknown } = {}): string[] {
      const list = Array.isArray(names) ? names : [names];
      const ids = list.map(() => `call${++calls}`);
      const text: Part[] = options.text ? [{ type: 'text', text: options.text }] : [];
      message('assistant', [
        ...text,
        ...list.map((name, i): Part => ({ type: 'tool_call', callId: ids[i], name, input: options.input ?? {} })),
      ]);
      return ids;
    },
    /** One tool message answering `callId`. */
    result(callId: string, spec: ResultSpec = {}) {
      const part: ToolResultPart = {
        type: 'tool_result',
        callId,
        name: spec.name ?? 'bash',
        output: spec.output ?? 'ok',
        isError: spec.isError,
        outputRef: spec.refId ? { id: spec.refId, byte_size: 10, line_count: 3 } : undefined,
      };
      message('tool', [part]);
      return log;
    },
    /** A call and its result; returns the call id. */
    tool(name = 'bash', spec: ResultSpec & { input?: unknown } = {}): string {
      const [id] = log.call(name, { input: spec.input });
      log.result(id, { ...spec, name });
      return id;
    },
    step(total = 1_000, finishReason?: string) {
      append('step.finished', { usage: { input_tokens: total, output_tokens: 0 }, finishReason });
      return log;
    },
    aborted() {
      append('turn.aborted', { reason: 'user' });
      return log;
    },
    marker(auto = true, reason: CompactionReason = 'threshold'): number {
      return append('compaction.requested', { auto, reason });
    },
    append,
  };
  return log;
}
