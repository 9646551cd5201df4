import { SseParser, sseBatches, sseMessages } from './sse';

const parseAll = (chunks: string[]) => {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
};

/** A body that delivers these chunks, then ends. */
const bodyOf = (chunks: Uint8Array[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });

const collect = async <T>(messages: AsyncIterable<T>) => {
  const all: T[] = [];
  for await (const message of messages) all.push(message);
  return all;
};

describe('SseParser', () => {
  it('dispatches a message per blank line with its id, event and data', () => {
    // given two messages as the service sends them
    const text = 'id: 1\nevent: session.created\ndata: {"seq":1}\n\nid: 2\nevent: message.added\ndata: {"seq":2}\n\n';
    // when / then
    expect(parseAll([text])).toEqual([
      { id: '1', event: 'session.created', data: '{"seq":1}' },
      { id: '2', event: 'message.added', data: '{"seq":2}' },
    ]);
  });

  it('reassembles messages split anywhere across chunks, including between CR and LF', () => {
    // given one message cut at every character, with CRLF line ends
    const text = 'id: 7\r\nevent: step.finished\r\ndata: {"seq":7}\r\n\r\n';
    // when
    const messages = parseAll([...text]);
    // then
    expect(messages).toEqual([{ id: '7', event: 'step.finished', data: '{"seq":7}' }]);
  });

  it('keeps a CR that ends a chunk paired with the LF after an empty chunk', () => {
    // an empty chunk is what a decoder returns for half a character
    expect(parseAll(['data: a\r', '', '\ndata: b\r\n\r\n'])).toEqual([{ id: '', event: 'message', data: 'a\nb' }]);
  });

  it('ignores comments (heartbeats) and unknown fields, and dispatches nothing for a message without data', () => {
    expect(parseAll([': heartbeat\n\n:\nfoo: bar\n\nid: 3\n\n'])).toEqual([]);
  });

  it('joins data lines with LF, defaults the event to "message" and keeps the last id for later messages', () => {
    // given an id on the first message only, and lines ended by lone CRs
    const messages = parseAll(['id: 9\rdata: a\rdata:b\r\rdata: c\n\n']);
    // then the value after "data:" loses one leading space only, and the id carries over
    expect(messages).toEqual([
      { id: '9', event: 'message', data: 'a\nb' },
      { id: '9', event: 'message', data: 'c' },
    ]);
  });

  it('reads a line without a colon as a field with an empty value, and keeps colons and further spaces in values', () => {
    expect(parseAll(['data\n\ndata\ndata\n\ndata:  two: spaces\n\n'])).toEqual([
      { id: '', event: 'message', data: '' },
      { id: '', event: 'message', data: '\n' },
      { id: '', event: 'message', data: ' two: spaces' },
    ]);
  });

  it('matches field names exactly: other cases are unknown fields', () => {
    expect(parseAll(['Data: a\nEVENT: b\n\n'])).toEqual([]);
  });

  it('resets the event name after each blank line, even one that dispatches nothing', () => {
    expect(parseAll(['event: first\n\ndata: a\n\nevent: named\ndata: b\n\ndata: c\n\n'])).toEqual([
      { id: '', event: 'message', data: 'a' },
      { id: '', event: 'named', data: 'b' },
      { id: '', event: 'message', data: 'c' },
    ]);
  });

  it('ignores an id that holds NUL, and an empty id resets the last event id', () => {
    expect(parseAll(['id: 1\ndata: a\n\nid: 2\u00003\ndata: b\n\nid\ndata: c\n\n'])).toEqual([
      { id: '1', event: 'message', data: 'a' },
      { id: '1', event: 'message', data: 'b' },
      { id: '', event: 'message', data: 'c' },
    ]);
  });

  it('ignores retry fields, valid or not', () => {
    expect(parseAll(['retry: 3000\ndata: a\nretry: soon\n\n'])).toEqual([{ id: '', event: 'message', data: 'a' }]);
  });

  it('drops one leading byte order mark: a second one is part of the first field name', () => {
    expect(parseAll(['\uFEFFdata: a\n\n'])).toEqual([{ id: '', event: 'message', data: 'a' }]);
    expect(parseAll(['\uFEFF\uFEFFdata: a\n\ndata: b\n\n'])).toEqual([{ id: '', event: 'message', data: 'b' }]);
    expect(parseAll(['data: a\n\n', '\uFEFFdata: b\n\n'])).toEqual([{ id: '', event: 'message', data: 'a' }]);
  });

  it('keeps a line without its end for the next chunk, and never dispatches a message the stream did not finish', () => {
    const parser = new SseParser();
    expect(parser.push('data: {"se')).toEqual([]);
    expect(parser.push('q":1}\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ id: '', event: 'message', data: '{"seq":1}' }]);
    expect(parser.push('data: unfinished\n')).toEqual([]);
  });
});

describe('sseMessages', () => {
  it('decodes UTF-8 split across chunks and stops at the end of the body', async () => {
    // given "é" (two bytes) cut between chunks
    const bytes = new TextEncoder().encode('data: é\n\n');
    // when
    const messages = await collect(sseMessages(bodyOf([bytes.slice(0, 7), bytes.slice(7)])));
    // then
    expect(messages).toEqual([{ id: '', event: 'message', data: 'é' }]);
  });

  it('drops exactly one byte order mark, even one split across chunks', async () => {
    const bom = [0xef, 0xbb, 0xbf];
    const text = new TextEncoder().encode('data: a\n\n');
    expect(await collect(sseMessages(bodyOf([new Uint8Array(bom.slice(0, 1)), new Uint8Array([...bom.slice(1), ...text])])))).toEqual([{ id: '', event: 'message', data: 'a' }]);
    expect(await collect(sseMessages(bodyOf([new Uint8Array([...bom, ...bom, ...text])])))).toEqual([]);
  });
});

describe('sseBatches', () => {
  it('yields one batch per chunk read, empty for a heartbeat, so a reader sees the stream alive', async () => {
    const encode = (text: string) => new TextEncoder().encode(text);
    const batches = await collect(sseBatches(bodyOf([encode(': heartbeat\n\n'), encode('data: a\n\ndata: b\n\n')])));
    expect(batches).toEqual([[], [{ id: '', event: 'message', data: 'a' }, { id: '', event: 'message', data: 'b' }]]);
  });

  it('cancels the body when the reader stops early', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode('data: again\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const batch of sseBatches(body)) if (batch.length > 0) break;
    expect(cancelled).toBe(true);
  });
});
