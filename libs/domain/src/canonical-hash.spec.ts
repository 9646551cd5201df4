import { createHash } from 'node:crypto';
import type { NewEvent } from './events';
import { canonicalHash, payloadHash, samePayload } from './canonical-hash';

const said = (id: string): Pick<NewEvent<'message.added'>, 'type' | 'data'> => ({
  type: 'message.added',
  data: { message: { id, role: 'user', parts: [{ type: 'text', text: 'hi' }] } },
});
const event = said('m1');

describe('canonicalHash: one "same body" for the whole service', () => {
  it('given the same JSON with its keys in another order and its numbers spelled otherwise, then the same hash', () => {
    // given
    const a = { b: 1, a: [1.0, { y: 'x', z: null }] };
    const b = JSON.parse('{"a":[1,{"z":null,"y":"x"}],"b":1e0}');
    // when / then
    expect(canonicalHash('POST /v1/sessions', a)).toEqual(canonicalHash('POST /v1/sessions', b));
  });

  it('given another label or another value, then another hash', () => {
    expect(canonicalHash('POST /a', { x: 1 })).not.toEqual(canonicalHash('POST /b', { x: 1 }));
    expect(canonicalHash('POST /a', { x: 1 })).not.toEqual(canonicalHash('POST /a', { x: 2 }));
  });

  it('keeps the Idempotency-Key fingerprint of keys stored before it: "METHOD route\\n" then the canonical body', () => {
    expect(canonicalHash('POST /v1/sessions', { model: 'gpt-4.1' })).toEqual(createHash('sha256').update('POST /v1/sessions\n{"model":"gpt-4.1"}').digest());
  });
});

describe('samePayload: a stored event hash against a retried event', () => {
  it('given a hash stored canonical, then the same event is its body and another is not', () => {
    // given
    const stored = payloadHash(event);
    // when / then
    expect(samePayload(stored, event)).toBe(true);
    expect(samePayload(stored, said('m2'))).toBe(false);
  });

  it('given a hash stored before payload hashes were canonical (JSON.stringify of [type, data]), then the same event is still its body', () => {
    // given
    const legacy = createHash('sha256').update(JSON.stringify([event.type, event.data])).digest();
    // when / then
    expect(legacy.equals(payloadHash(event))).toBe(false);
    expect(samePayload(legacy, event)).toBe(true);
  });
});
