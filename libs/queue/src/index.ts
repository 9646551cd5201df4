export * from './queue-names';
export * from './job-ids';
export * from './redis-connection';
export * from './job-dispatcher';
export * from './outbox-relay';
export * from './queue-producer.module';
export * from './queue-metrics';
export * from './session-heads';
