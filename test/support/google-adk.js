// What `@google/adk` resolves to under Jest (jest.config.js): the module its environment required.
if (!globalThis.__googleAdk) throw new Error('A spec importing @google/adk needs `@jest-environment ./test/support/google-adk-environment.ts`');
module.exports = globalThis.__googleAdk;
