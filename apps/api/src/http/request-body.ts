import { UnsupportedMediaTypeException } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Readable } from 'node:stream';

/**
 * No part of the body arrived for the idle timeout. Shaped like body-parser's
 * errors (`status`, `type`), which problem.ts answers with that status and
 * code: 408 `upload_idle_timeout`.
 */
export class BodyIdleTimeout extends Error {
  readonly status = 408;
  readonly type = 'upload_idle_timeout';

  constructor(idleMs: number) {
    super(`No part of the body arrived for ${idleMs} ms; the upload was ended and nothing was stored`);
  }
}

/** How many bytes of a streamed body the service has read so far (the tenant's byte budget is charged with it, not the declared length). */
export interface StreamedBodySize {
  receivedBytes?: number;
}

function noteReceived(req: Readable, bytes: number): void {
  const sized = req as Readable & StreamedBodySize;
  sized.receivedBytes = (sized.receivedBytes ?? 0) + bytes;
}

/**
 * The request body, piece by piece, with backpressure. Unlike `for await` on
 * the request itself, stopping early does not destroy the request (and with
 * it the socket), so the error response still reaches the client. Waiting
 * on the client longer than `idleTimeoutMs` throws BodyIdleTimeout; time the
 * consumer spends between pieces does not count.
 */
export async function* bodyPieces(req: Readable, idleTimeoutMs?: number): AsyncGenerator<Buffer> {
  for (;;) {
    const piece: Buffer | null = req.read();
    if (piece !== null) {
      noteReceived(req, piece.length);
      yield piece;
      continue;
    }
    if (req.readableEnded) return;
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        clearTimeout(idle);
        req.off('readable', onReadable).off('end', onReadable).off('error', settle).off('close', onClose);
        if (error) reject(error);
        else resolve();
      };
      const onReadable = () => settle();
      const onClose = () => settle(req.readableEnded ? undefined : new Error('the client closed the upload'));
      const idle = idleTimeoutMs === undefined ? undefined : setTimeout(() => settle(new BodyIdleTimeout(idleTimeoutMs)), idleTimeoutMs);
      req.on('readable', onReadable).on('end', onReadable).on('error', settle).on('close', onClose);
    });
  }
}

/** How much of a refused upload's remaining body is read (and dropped) so the client gets the answer. */
const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024;
const DISCARD_LIMIT_MS = 10_000;

/**
 * Reads and drops what is left of a refused request body, up to a bound.
 * Answering at once and closing makes a client still sending fail with EPIPE
 * instead of reading the answer; past the bound the connection is cut anyway.
 */
export function discardRest(req: Readable, maxBytes = DISCARD_LIMIT_BYTES, maxMs = DISCARD_LIMIT_MS): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', count);
      resolve();
    };
    const count = (piece: Buffer) => {
      seen += piece.length;
      noteReceived(req, piece.length);
      if (seen > maxBytes) done();
    };
    const timer = setTimeout(done, maxMs);
    req.on('data', count);
    req.once('end', done);
    req.once('error', done);
    req.once('close', done);
    req.resume();
  });
}

/** A request with a body, read or not: a Content-Length above zero, or a chunked one. */
export const hasBody = (req: Request) => Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

/**
 * How long, and how much, of an unread body is dropped before a refusal
 * (bad credentials, a limit) is answered. Short: the client is not known,
 * and one that never sends its body holds the connection this long, not
 * until HTTP_REQUEST_TIMEOUT_MS. Long enough for an honest client's small
 * body already in flight, so it reads the answer rather than a reset.
 */
export const REFUSED_BODY_DRAIN = { maxBytes: 1024 * 1024, maxMs: 1000 };

const settled = new WeakSet<Request>();

/**
 * Before answering a request whose body was not (fully) read: the
 * connection is closed after the answer, and what is left of the body is
 * first read and dropped within `drain` (none: a stalled client sends
 * nothing more to wait for). Once per request.
 */
export async function settleUnreadBody(req: Request, res: Response, drain: { maxBytes: number; maxMs: number } | null): Promise<void> {
  if (req.complete || !hasBody(req) || settled.has(req)) return;
  settled.add(req);
  if (!res.headersSent) res.setHeader('connection', 'close');
  if (drain) await discardRest(req, drain.maxBytes, drain.maxMs);
}

/**
 * Hands a streamed request body to `consume`: a media type outside `types`
 * or any Content-Encoding is 415 (the bytes are read as sent). When
 * `consume` fails before the whole body arrived (refused, too large, idle),
 * the rest is dropped, bounded, and the connection closed, so the client
 * still reads the answer.
 */
export async function consumeStreamedBody<T>(
  req: Request,
  res: Response,
  accept: { types: readonly string[]; hint: string; idleTimeoutMs: number },
  consume: (body: AsyncGenerator<Buffer>) => Promise<T>,
): Promise<T> {
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (!accept.types.includes(mediaType)) throw new UnsupportedMediaTypeException(`${accept.hint} as ${accept.types.join(' or ')}`);
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity') throw new UnsupportedMediaTypeException('Content-Encoding is not supported: the bytes are read as sent');
  try {
    return await consume(bodyPieces(req, accept.idleTimeoutMs));
  } catch (error) {
    // An authenticated upload gets the long drain; a stalled one sends nothing more to wait for.
    await settleUnreadBody(req, res, error instanceof BodyIdleTimeout ? null : { maxBytes: DISCARD_LIMIT_BYTES, maxMs: DISCARD_LIMIT_MS });
    throw error;
  }
}
