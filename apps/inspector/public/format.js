// @ts-check
// How the page writes values: numbers, ratios, and what a session's row says
// of its title, state and origin (fields a deployment lacks are simply absent).

/** @typedef {{ id: string, model: string, metadata: any, headSeq: number, createdAt: string, updatedAt: string, archivedAt?: string | null, forkedFrom?: unknown }} SessionRow */

const fmt = new Intl.NumberFormat('en-US');
/** @param {number | null | undefined} n */
export const num = (n) => (typeof n === 'number' ? fmt.format(n) : '—');

/** @param {unknown} ratio */
export const pct = (ratio) => (typeof ratio === 'number' ? `${(100 * ratio).toFixed(1)}%` : '—');

/** @param {{ metadata?: any }} s */
export function titleOf(s) {
  const m = s.metadata;
  return m && typeof m === 'object' && typeof m.title === 'string' ? m.title : '';
}

/** Archived and forked sessions (retention, forks) say so. @param {SessionRow} s */
export function stateOf(s) {
  const bits = [];
  if (s.archivedAt) bits.push(`archived ${new Date(s.archivedAt).toLocaleString()}`);
  const origin = forkOrigin(s);
  if (origin) bits.push(`fork of ${origin.sessionId}${origin.atSeq !== null ? ` at seq ${origin.atSeq}` : ''}`);
  return bits.join(' · ');
}

/** @param {{ forkedFrom?: any }} s @returns {{ sessionId: string, atSeq: number | null } | null} */
export function forkOrigin(s) {
  const f = s.forkedFrom;
  if (typeof f === 'string') return { sessionId: f, atSeq: null };
  if (!f || typeof f !== 'object') return null;
  const sessionId = f.sessionId ?? f.id;
  return typeof sessionId === 'string' ? { sessionId, atSeq: typeof f.atSeq === 'number' ? f.atSeq : null } : null;
}
