import { Injectable } from '@nestjs/common';
import { RecentSessions } from '../sessions/recent-sessions';

/** Sessions remembered per API process; the oldest entry goes first beyond it (~290 bytes of heap each, key included: ~14 MiB when full). */
const MAX_SESSIONS = 50_000;

export interface ViewBound {
  /** The seq the bound holds at. */
  seq: number;
  /** An upper bound of the view's figure at that seq, and after any rewrite of it (viewTokenBound). */
  tokens: number;
  /** The session's growthThreshold when the bound was taken (a session config change is an event, so it moves `seq`). */
  threshold: number | null;
  /** The session's creation: a session deleted and created again under the same id starts afresh. */
  createdAt: Date;
  /** When this process last appended past the bound (Date.now()). */
  at: number;
  /**
   * With cache-aware timing, the cache's lifetime in ms: an append after a
   * longer silence may open a compaction below the threshold (coldCacheMargin),
   * so the bound is not trusted then and the window is read. Null otherwise.
   */
  coldAfterMs: number | null;
}

/** Whether the bound may have missed a cold cache: this process saw no append for longer than the cache lives. */
export function boundWentCold(bound: ViewBound, now: number): boolean {
  return bound.coldAfterMs !== null && now - bound.at > bound.coldAfterMs;
}

/**
 * Per API process, a hint: an upper bound of the view's figure of each
 * session the append trigger checked lately. An append that only grows the
 * view adds its own stored tokens when nothing else was appended since (no
 * query), or what was stored since (one small query); a miss (another
 * replica served the session, a restart, an eviction) reads the window once.
 * A bound stays an upper bound whatever any replica or the worker appends
 * meanwhile (boundAfterGrowth), so replicas need not share it.
 */
@Injectable()
export class ViewBounds extends RecentSessions<ViewBound> {
  constructor() {
    super(MAX_SESSIONS);
  }
}
