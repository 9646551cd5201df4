export * from './prune-session';
export * from './delete-session';
