export * from './app-config';
export * from './load-config';
export * from './config.module';
export * from './log-levels';
export * from './secret';
