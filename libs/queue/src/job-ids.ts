import { createHash } from 'node:crypto';

/**
 * Deterministic BullMQ job id for a job about one session. Session ids may
 * hold characters BullMQ forbids in ids (`:`), so they are hashed.
 */
export function sessionJobId(jobName: string, tenantId: string, sessionId: string, discriminator: string | number): string {
  const session = createHash('sha256').update(`${tenantId}/${sessionId}`).digest('hex').slice(0, 32);
  return `${jobName}-${session}-${discriminator}`;
}
