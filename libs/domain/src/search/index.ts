export * from './text';
export * from './query';
export * from './snippet';
export * from './documents';
