export * from './run-process';
export * from './startup-checks';
export * from './within';
export * from './prepare-database';
export * from './api-process';
