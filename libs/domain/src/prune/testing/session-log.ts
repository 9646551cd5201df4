import {
  EventDataByType,
  EventType,
  Message,
  MessageMetadata,
  StoredEvent,
  ToolResultPart,
} from '../../events';
import { ArchiveOptions, PruneOptions } from '../options';

export interface ToolSpec {
  name?: string;
  output?: string;
  input?: unknown;
  isError?: boolean;
  refId?: string;
  /** agentVisible=false on the result's message. */
  hidden?: boolean;
}

/** An output of exactly `tokens` estimated tokens. */
export const outputOf = (tokens: number) => 'x'.repeat(tokens * 4);

export const opencodeOptions = (overrides: Partial<PruneOptions> = {}): PruneOptions => ({
  enabled: true,
  protectTurns: 2,
  protectTokens: 40_000,
  minimumTokens: 20_000,
  protectedTools: ['skill', 'manage_todo_list'],
  ...overrides,
});

export const archiveOptions = (overrides: Partial<ArchiveOptions> = {}): ArchiveOptions => ({
  enabled: true,
  toolCallCutoff: 10,
  strategy: 'heuristic',
  inputClipChars: 12_000,
  outputClipRunes: 1_200,
  heuristicClipRunes: 800,
  ...overrides,
});

/** Builds a session's stored events step by step (seq from 1, fixed clock). */
export function sessionLog() {
  const events: StoredEvent[] = [];
  let calls = 0;

  function append<T extends EventType>(type: T, data: EventDataByType[T]): StoredEvent {
    const seq = events.length + 1;
    const event = { seq, id: `e${seq}`, type, data, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)), tokens: 0 };
    events.push(event as StoredEvent);
    return event as StoredEvent;
  }
  const message = (m: Omit<Message, 'id'>) => append('message.added', { message: { id: `m${events.length + 1}`, ...m } });

  const log = {
    events,
    user(text = 'next step', metadata?: MessageMetadata) {
      message({ role: 'user', parts: [{ type: 'text', text }], metadata });
      return log;
    },
    /** One assistant message calling every tool, then one tool message answering them; returns the call ids. */
    tools(...specs: ToolSpec[]): string[] {
      const ids = specs.map(() => `call${++calls}`);
      message({
        role: 'assistant',
        parts: specs.map((s, i) => ({ type: 'tool_call', callId: ids[i], name: s.name ?? 'bash', input: s.input ?? {} })),
      });
      const results = specs.map(
        (s, i): ToolResultPart => ({
          type: 'tool_result',
          callId: ids[i],
          name: s.name ?? 'bash',
          output: s.output ?? 'ok',
          isError: s.isError,
          outputRef: s.refId ? { id: s.refId, byte_size: 0, line_count: 0 } : undefined,
        }),
      );
      message({ role: 'tool', parts: results, metadata: specs.some((s) => s.hidden) ? { agentVisible: false } : undefined });
      return ids;
    },
    tool(spec: ToolSpec = {}): string {
      return log.tools(spec)[0];
    },
    /** A compaction covering everything so far. */
    compacted() {
      const markerSeq = events.length;
      append('compaction.completed', {
        markerSeq,
        coveredThroughSeq: markerSeq,
        summary: 'summary',
        prefix: [],
        strategy: 'heuristic',
        model: 'test',
        tokensBefore: 0,
        tokensAfter: 0,
        messagesCompacted: markerSeq,
        durationMs: 0,
      });
      return log;
    },
    pruned(data: EventDataByType['tool_outputs.pruned']) {
      append('tool_outputs.pruned', data);
      return log;
    },
    archived(data: EventDataByType['tool_results.archived']) {
      append('tool_results.archived', data);
      return log;
    },
  };
  return log;
}
