export * from './database';
export * from './database.module';
export * from './ensure-database';
export * from './migrate-in-thread';
export * from './read-database';
export * from './unavailable';
