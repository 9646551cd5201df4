// Checks that every package in package-lock.json accepts every Node version the
// project's engines accept (so npm ci warns EBADENGINE on none of them), that the
// workspace packages declare the same range, and that the Node versions CI runs
// (argv) are inside it. Needs node_modules (semver); prints one line per problem.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
const range = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines?.node;
const problems = [];
if (!range || !semver.validRange(range)) problems.push(`package.json: engines.node ${JSON.stringify(range)} is not a semver range`);
if (range !== lock.packages?.['']?.engines?.node) problems.push('package-lock.json: engines.node differs from package.json; run npm install');

for (const dir of readdirSync(join(root, 'packages'))) {
  const file = join(root, 'packages', dir, 'package.json');
  if (!existsSync(file)) continue;
  const own = JSON.parse(readFileSync(file, 'utf8')).engines?.node;
  if (own !== range) problems.push(`packages/${dir}/package.json: engines.node ${JSON.stringify(own)}, the project's is ${JSON.stringify(range)}`);
}
for (const version of process.argv.slice(2)) {
  if (!semver.satisfies(version, range)) problems.push(`CI runs Node ${version}, outside engines.node ${range}`);
}
if (problems.length === 0) {
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    const wanted = entry.engines?.node;
    if (path === '' || !wanted || typeof wanted !== 'string') continue;
    if (!semver.validRange(wanted) || !semver.subset(range, wanted)) {
      problems.push(`${path}@${entry.version}: engines.node ${wanted} does not accept every Node of ${range}`);
    }
  }
}
for (const line of problems) console.error(`check-engines: ${line}`);
if (problems.length > 0) process.exit(1);
console.log(`check-engines: every locked package accepts Node ${range}`);
