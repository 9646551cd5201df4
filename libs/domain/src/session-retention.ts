/**
 * Session retention: per tenant, sessions idle longer than an age
 * are archived or deleted by a worker job. This file decides which; the
 * worker reads the facts, takes `now` from its clock and acts.
 */

export const SESSION_RETENTION_ACTIONS = ['archive', 'delete'] as const;
export type SessionRetentionAction = (typeof SESSION_RETENTION_ACTIONS)[number];

/** A tenant's setting; no setting (null) keeps sessions for ever. */
export interface SessionRetentionPolicy {
  idleSeconds: number;
  action: SessionRetentionAction;
}

/**
 * The idle age an admin may set. The floor is an hour so that an age given in
 * the wrong unit (30 meant as days) cannot sweep away every session at once.
 */
export const SESSION_RETENTION_IDLE_SECONDS = { min: 3600, max: 10 * 365 * 24 * 3600 } as const;

/** What the decision needs of a session: its last activity (an append or a config change) and whether it is archived. */
export interface SessionActivity {
  sessionId: string;
  lastActivityAt: Date;
  archivedAt: Date | null;
}

export interface RetentionDecision {
  archive: string[];
  delete: string[];
}

/** Sessions last active before this instant are idle longer than the policy's age. */
export function idleCutoff(now: Date, policy: SessionRetentionPolicy): Date {
  return new Date(now.getTime() - policy.idleSeconds * 1000);
}

/**
 * Which sessions expire at `now`: those last active strictly before the
 * cutoff. `archive` leaves sessions already archived alone (archiving twice
 * changes nothing); `delete` takes archived ones too, since an archived
 * session is as idle as its last activity says.
 */
export function expiredSessions(now: Date, policy: SessionRetentionPolicy, sessions: readonly SessionActivity[]): RetentionDecision {
  const cutoff = idleCutoff(now, policy).getTime();
  const idle = sessions.filter((s) => s.lastActivityAt.getTime() < cutoff);
  switch (policy.action) {
    case 'archive':
      return { archive: idle.filter((s) => s.archivedAt === null).map((s) => s.sessionId), delete: [] };
    case 'delete':
      return { archive: [], delete: idle.map((s) => s.sessionId) };
    default: {
      const unknown: never = policy.action;
      throw new Error(`unknown retention action ${String(unknown)}`);
    }
  }
}
