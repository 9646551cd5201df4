// Three projects: `unit` (pure domain, milliseconds), `int` (a store's SQL
// against a real PostgreSQL, no HTTP: `*.int-spec.ts` beside the store) and
// `e2e` (real PostgreSQL, Redis and the built service in child processes; see
// test/support).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];
const moduleNameMapper = {
  '^@app/([a-z-]+)$': '<rootDir>/libs/$1/src',
  '^@app/([a-z-]+)/(.*)$': '<rootDir>/libs/$1/src/$2',
  '^@session-store/([a-z-]+)$': '<rootDir>/packages/$1/src',
  // ESM-only, which Jest's loader cannot require: the module its spec's environment loaded (test/support/claude-agent-sdk-environment.ts).
  '^@anthropic-ai/claude-agent-sdk$': '<rootDir>/test/support/claude-agent-sdk.js',
  // Requires an ES module (lodash-es): likewise loaded by its spec's environment (test/support/google-adk-environment.ts).
  '^@google/adk$': '<rootDir>/test/support/google-adk.js',
};
module.exports = {
  // Per spec: e2e specs boot real processes; unit specs finish in milliseconds anyway.
  testTimeout: 120000,
  // A spec that leaks a child process must not keep CI waiting until its time limit;
  // find such leaks with --detectOpenHandles.
  forceExit: true,
  projects: [
    {
      displayName: 'unit',
      testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts', '<rootDir>/packages/**/*.spec.ts', '<rootDir>/.ci/**/*.spec.ts'],
      transform: { '^.+\\.ts$': swc },
      moduleNameMapper,
    },
    {
      displayName: 'int',
      testMatch: ['<rootDir>/libs/**/*.int-spec.ts'],
      transform: { '^.+\\.ts$': swc },
      moduleNameMapper,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      transform: { '^.+\\.ts$': swc },
      moduleNameMapper,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
