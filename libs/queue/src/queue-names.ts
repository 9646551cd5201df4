/** Every queue and job name, in one place. */
export enum QueueName {
  Maintenance = 'session-maintenance',
}

export enum JobName {
  /** Proves the outbox → BullMQ → worker path; does nothing. */
  Noop = 'noop',
}

/** The queue each job runs on. */
export const JOB_QUEUE: Record<JobName, QueueName> = {
  [JobName.Noop]: QueueName.Maintenance,
};

/** Job data carries ids only: BullMQ stores it in clear text. */
export interface SessionJobData {
  tenantId: string;
  sessionId: string;
}
