export * from './tenants.store';
export * from './sessions.store';
export * from './events.store';
export * from './idempotency.store';
export * from './outbox.store';
export * from './compaction.store';
export * from './usage.store';
