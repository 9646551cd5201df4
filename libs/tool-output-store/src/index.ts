export * from './tool-output.store';
export * from './gc.store';
export * from './grep-pool';
