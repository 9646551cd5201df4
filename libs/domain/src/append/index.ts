export * from './decide-append';
