// The Citus suite (`npm run test:citus`, run by .ci/run): each spec starts its own coordinator and
// workers with scripts/citus-cluster.sh, which builds Citus first where the server lacks it.
const { projects, ...base } = require('./jest.config');
const e2e = projects.find((p) => p.displayName === 'e2e');
module.exports = {
  ...base,
  testTimeout: 300000,
  projects: [{ displayName: 'citus', testMatch: ['<rootDir>/test/citus/**/*.citus-spec.ts'], transform: e2e.transform, moduleNameMapper: e2e.moduleNameMapper }],
};
