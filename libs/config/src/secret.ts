import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * A configured secret (admin or metrics token) checked against a request's
 * bearer token in constant time: both sides are hashed first, so neither the
 * contents nor the length of the secret leak through the comparison's timing.
 */
export class BearerSecret {
  private readonly expected: Buffer;

  constructor(secret: string) {
    this.expected = digest(secret);
  }

  /** `authorization` is the request's raw header value. */
  matches(authorization: string | undefined): boolean {
    const header = authorization ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    return timingSafeEqual(digest(given), this.expected);
  }
}
