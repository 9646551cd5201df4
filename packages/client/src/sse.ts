// The Server-Sent Events reader of the client's live stream and of the
// inspector page alike: the inspector's build compiles this file alone into a
// browser module (apps/inspector/tsconfig.sse.json), hence no imports.

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
 * it arrives in arbitrary chunks: one leading BOM is dropped; lines end in
 * CRLF, LF or CR; a blank line dispatches; `:` lines are comments
 * (heartbeats); `data:` lines join with LF; an `id:` holding NUL is ignored.
 * `retry:` is ignored too: both readers time their reconnections themselves.
 */
export class SseParser {
  private buffer = '';
  private started = false;
  /** A CR ended the last chunk: an LF starting the next one belongs to it. */
  private pendingCr = false;
  private lastId = '';
  private event = '';
  private data: string[] = [];

  push(chunk: string): SseMessage[] {
    // An empty chunk (a decoder holding half a character) must not forget a pending CR.
    if (chunk === '') return [];
    let text = chunk;
    if (!this.started && text.startsWith('\uFEFF')) text = text.slice(1);
    this.started = true;
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

/**
 * The messages each chunk of a byte stream completed, one array per chunk
 * read: empty for a heartbeat or a partial line, which still shows the
 * stream alive.
 */
export async function* sseBatches(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage[]> {
  const parser = new SseParser();
  // The parser drops the BOM: the decoder must not drop one too.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    // Also when the consumer stops early: release the connection.
    await reader.cancel().catch(() => undefined);
  }
}

/** The messages of a byte stream, in order. */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  for await (const batch of sseBatches(body)) yield* batch;
}
