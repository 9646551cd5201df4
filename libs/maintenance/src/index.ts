export * from './prune-session';
