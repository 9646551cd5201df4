import { adoptSegments, checkForkSeq, forkLineage, LineageSegment } from './fork';
import { errorOf } from './testing/expect-domain-error';

const segment = (source: string, afterSeq: number, throughSeq: number, origin = source): LineageSegment => ({ source, origin, afterSeq, throughSeq });

describe('checkForkSeq', () => {
  it('accepts 1 up to the head', () => {
    expect(() => checkForkSeq(1, 5)).not.toThrow();
    expect(() => checkForkSeq(5, 5)).not.toThrow();
  });

  it.each([0, -1, 6, 2.5])('refuses %p for a head of 5 (400 invalid_fork_seq)', (atSeq) => {
    const error = errorOf(() => checkForkSeq(atSeq, 5));
    expect({ kind: error.kind, code: error.code, details: error.details }).toEqual({ kind: 'invalid', code: 'invalid_fork_seq', details: { headSeq: 5 } });
  });
});

describe('forkLineage', () => {
  it('a fork of a session that is no fork reads 1..atSeq from it', () => {
    // given a parent with no lineage / when forked at 7 / then
    expect(forkLineage('a', null, 7)).toEqual([segment('a', 0, 7)]);
  });

  it("a fork of a fork inherits the parent's segments, then the parent's own rows up to atSeq", () => {
    // given b forked from a at 10
    const b = [segment('a', 0, 10)];
    // when c is forked from b at 15 / then
    expect(forkLineage('b', b, 15)).toEqual([segment('a', 0, 10), segment('b', 10, 15)]);
  });

  it("a fork taken inside an inherited range clips it and reads nothing of the parent's own rows", () => {
    // given b with two inherited segments
    const b = [segment('a', 0, 10), segment('x', 10, 20, 'z')];
    // when forked at 12, then at 10 / then
    expect(forkLineage('b', b, 12)).toEqual([segment('a', 0, 10), segment('x', 10, 12, 'z')]);
    expect(forkLineage('b', b, 10)).toEqual([segment('a', 0, 10)]);
  });
});

describe('adoptSegments', () => {
  it('copies exactly the ranges read from the deleted session, then reads them from itself, origins kept', () => {
    // given c reads 1..10 from a and 11..15 from b
    const c = [segment('a', 0, 10), segment('b', 10, 15)];
    // when a is deleted / then
    expect(adoptSegments(c, 'a', 'c')).toEqual({
      copy: [{ afterSeq: 0, throughSeq: 10 }],
      lineage: [segment('c', 0, 10, 'a'), segment('b', 10, 15)],
    });
  });

  it('copies every range of a source that holds several (earlier copies into it)', () => {
    // given b once adopted a's rows, and c forked from b
    const c = [segment('b', 0, 10, 'a'), segment('b', 10, 15)];
    // when b is deleted / then
    expect(adoptSegments(c, 'b', 'c')).toEqual({
      copy: [{ afterSeq: 0, throughSeq: 10 }, { afterSeq: 10, throughSeq: 15 }],
      lineage: [segment('c', 0, 10, 'a'), segment('c', 10, 15, 'b')],
    });
  });
});
