export * from './decide-append';
export * from './session-log-writer';
export * from './ledger-rows';
