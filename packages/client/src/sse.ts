/** One dispatched Server-Sent Events message. */
export interface SseMessage {
  /** The last `id:` seen on the stream so far (the spec's "last event ID"), '' before any. */
  id: string;
  /** `event:`, 'message' when the message names none. */
  event: string;
  data: string;
}

/**
 * The event-stream parsing rules of the HTML standard (§9.2.6), fed text as
 * it arrives in arbitrary chunks: lines end in CRLF, LF or CR; a blank line
 * dispatches; `:` lines are comments (heartbeats); `data:` lines join with LF.
 * Retry fields are ignored: reconnect timing is the client's own.
 */
export class SseParser {
  private buffer = '';
  /** A CR ended the last chunk: an LF starting the next one belongs to it. */
  private pendingCr = false;
  private lastId = '';
  private event = '';
  private data: string[] = [];

  push(chunk: string): SseMessage[] {
    let text = chunk;
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = text.endsWith('\r');
    this.buffer += text;
    const lines = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = lines.pop()!;
    const messages: SseMessage[] = [];
    for (const line of lines) {
      const message = this.line(line);
      if (message) messages.push(message);
    }
    return messages;
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const message = { id: this.lastId, event: this.event || 'message', data: this.data.join('\n') };
    const empty = this.data.length === 0;
    this.event = '';
    this.data = [];
    return empty ? undefined : message;
  }
}

/** The messages of a byte stream, in order. */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    // Also when the consumer stops early: release the connection.
    await reader.cancel().catch(() => undefined);
  }
}
