import type { OutboxMessage } from '@app/event-store';
import { sessionJobId } from './job-ids';
import { JobName, PruneJobData } from './queue-names';

/** A session's prune/archive job as an outbox row, `discriminator` telling its runs apart. */
export const pruneMessage = (tenantId: string, sessionId: string, headSeq: number, discriminator: string | number): OutboxMessage => {
  const payload: PruneJobData = { tenantId, sessionId, headSeq };
  return { jobName: JobName.Prune, jobId: sessionJobId(JobName.Prune, tenantId, sessionId, discriminator), payload: { ...payload } };
};

/**
 * The trigger of the run scheduled by a step: while one waits for the
 * session, later steps fold into it (it reads the log when it runs, so it
 * covers them); while one runs, exactly one follow-up is kept.
 */
export function scheduledPruneMessage(tenantId: string, sessionId: string, headSeq: number): OutboxMessage {
  return { ...pruneMessage(tenantId, sessionId, headSeq, headSeq), deduplicationId: sessionJobId(JobName.Prune, tenantId, sessionId, 'session') };
}
