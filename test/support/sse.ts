/** A Server-Sent Events client for the specs: one open stream, every message parsed as it arrives. */

export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  /** A comment line (the heartbeat). */
  comment?: string;
}

/** One open stream: every message parsed as it arrives; `until` waits for a message that satisfies a predicate. */
export class SseStream {
  readonly messages: SseMessage[] = [];
  /** Resolves when the server ends the body. */
  readonly ended: Promise<void>;
  private waiters: Array<() => void> = [];

  constructor(
    readonly response: Response,
    private readonly abortController: AbortController,
  ) {
    this.ended = this.read();
  }

  private async read(): Promise<void> {
    const reader = this.response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          this.messages.push(parseMessage(buffer.slice(0, cut)));
          buffer = buffer.slice(cut + 2);
        }
        for (const wake of this.waiters.splice(0)) wake();
      }
    } catch (error) {
      if (!this.abortController.signal.aborted) throw error;
    } finally {
      for (const wake of this.waiters.splice(0)) wake();
    }
  }

  /** The parsed events (messages with an id), in arrival order. */
  get events(): any[] {
    return this.messages.filter((m) => m.id !== undefined && m.data !== undefined).map((m) => ({ ...JSON.parse(m.data!), sseId: m.id, sseEvent: m.event }));
  }

  async until(predicate: (messages: SseMessage[]) => boolean): Promise<void> {
    while (!predicate(this.messages)) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  untilSeq(seq: number): Promise<void> {
    return this.until((messages) => messages.some((m) => Number(m.id) >= seq));
  }

  /** The client drops the connection. */
  close(): void {
    this.abortController.abort();
  }
}

export function parseMessage(block: string): SseMessage {
  const message: SseMessage = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) message.comment = line.slice(1).trim();
    else {
      const at = line.indexOf(':');
      const field = line.slice(0, at) as 'id' | 'event' | 'data';
      const value = line.slice(at + 1).replace(/^ /, '');
      message[field] = field === 'data' && message.data !== undefined ? `${message.data}\n${value}` : value;
    }
  }
  return message;
}

export async function openStream(baseUrl: string, key: string, sessionId: string, options: { lastEventId?: number; query?: string } = {}) {
  const abort = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const url = `${baseUrl}/v1/sessions/${encodeURIComponent(sessionId)}/events/stream${options.query ?? ''}`;
  const response = await fetch(url, { headers, signal: abort.signal });
  return { response, stream: response.ok ? new SseStream(response, abort) : undefined };
}
