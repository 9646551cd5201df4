export * from './events';
export * from './errors';
export * from './placeholders';
export * from './json-inspection';
export * from './append-validation';
export * from './tool-call-ledger';
export * from './append-retry';
