export * from './model-registry';
export * from './resolve-model';
export * from './tokenizer';
export * from './token-estimate';
export * from './text-token-estimate';
