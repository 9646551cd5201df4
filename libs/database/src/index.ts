export * from './database';
export * from './database.module';
export * from './migrate';
export * from './read-database';
export * from './unavailable';
