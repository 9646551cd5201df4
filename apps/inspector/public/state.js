// @ts-check
// The open session: what the page has loaded of it and how it follows it.
// One at a time; every view reads it from here, and an answer for a session
// that is no longer `current` is dropped.

/** @typedef {{ seq: number, id: string, type: string, data: any, createdAt: string, origin?: unknown }} StoredEvent */
/**
 * @typedef {{
 *   id: string, headSeq: number, events: Map<number, StoredEvent>, loading: Set<number>,
 *   selected: number | null, pruned: Set<string>, archived: Set<string>,
 *   covered: { fromSeq: number, throughSeq: number }[], refs: Map<string, string>,
 *   tab: string, live: string, stream: AbortController | null, retry: ReturnType<typeof setTimeout> | null, failures: number,
 *   fallback: string | null, timer: ReturnType<typeof setInterval> | null, polling: boolean,
 *   hits: Set<number>,
 * }} OpenSession
 */

/** @type {OpenSession | null} */
export let current = null;

/** @param {OpenSession | null} session */
export function setCurrent(session) {
  current = session;
}
