export * from './append-committed';
export * from './append-upkeep';
export * from './prune-session';
export * from './delete-session';
export * from './index-session';
export * from './rewrite-metrics';
