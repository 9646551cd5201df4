import { within } from './awaiting';

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
  private done = false;

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
      this.done = true;
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

  /** The first event (already received or still to come) that satisfies `predicate`; rejects naming `what` if the stream ends first or after `timeoutMs`. */
  async event(predicate: (event: any) => boolean, what: string, timeoutMs = 30_000): Promise<any> {
    const found = async () => {
      for (;;) {
        const event = this.events.find(predicate);
        if (event) return event;
        if (this.done) throw new Error(`the stream ended before ${what}`);
        await new Promise<void>((resolve) => this.waiters.push(resolve));
      }
    };
    return within(found(), what, timeoutMs);
  }

  /** The reason of the server's final `end` event, once the stream ended (null if it ended without one); rejects naming `what` after `timeoutMs`. */
  async endReason(what: string, timeoutMs = 30_000): Promise<string | null> {
    await within(this.ended, what, timeoutMs);
    const end = this.messages.find((m) => m.event === 'end');
    return end ? JSON.parse(end.data!).reason : null;
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

/** A stream that must open: 200, or an error with the status and body. */
export async function openedStream(baseUrl: string, key: string, sessionId: string, options: { lastEventId?: number; query?: string } = {}): Promise<SseStream> {
  const { response, stream } = await openStream(baseUrl, key, sessionId, options);
  if (!stream) throw new Error(`event stream of ${sessionId}: ${response.status} ${await response.text()}`);
  return stream;
}

/**
 * The first event of a session's log that satisfies `predicate`, awaited on
 * its live event stream: read from the start, so one appended before the
 * call is found at once.
 */
export async function awaitEvent(baseUrl: string, key: string, sessionId: string, predicate: (event: any) => boolean, what: string, timeoutMs = 30_000): Promise<any> {
  const stream = await openedStream(baseUrl, key, sessionId);
  try {
    return await stream.event(predicate, what, timeoutMs);
  } finally {
    stream.close();
  }
}
