import { SseParser, sseMessages } from './sse';

const parseAll = (chunks: string[]) => {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
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

  it('ignores comments (heartbeats) and unknown fields, and dispatches nothing for a message without data', () => {
    expect(parseAll([': heartbeat\n\nretry: 10\nfoo: bar\n\nid: 3\n\n'])).toEqual([]);
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

  it('keeps a line without its end for the next chunk', () => {
    const parser = new SseParser();
    expect(parser.push('data: {"se')).toEqual([]);
    expect(parser.push('q":1}\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ id: '', event: 'message', data: '{"seq":1}' }]);
  });
});

describe('sseMessages', () => {
  it('decodes UTF-8 split across chunks and stops at the end of the body', async () => {
    // given "é" (two bytes) cut between chunks
    const bytes = new TextEncoder().encode('data: é\n\n');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 7));
        controller.enqueue(bytes.slice(7));
        controller.close();
      },
    });
    // when
    const messages = [];
    for await (const message of sseMessages(body)) messages.push(message);
    // then
    expect(messages).toEqual([{ id: '', event: 'message', data: 'é' }]);
  });
});
