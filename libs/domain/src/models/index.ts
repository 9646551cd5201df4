export * from './model-registry';
export * from './resolve-model';
