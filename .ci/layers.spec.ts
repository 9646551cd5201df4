import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

/**
 * The layer rule's messages on each snippet, linted as the file named (which
 * need not exist) with the repository's eslint.config.mjs. ESLint loads that
 * config as an ES module, which Jest's module system does not, hence the
 * child process (one for all snippets).
 */
function layerMessages(snippets: Record<string, string>): Record<string, string[]> {
  const script = `
    import { ESLint } from 'eslint';
    const eslint = new ESLint({ cwd: ${JSON.stringify(ROOT)} });
    const out = {};
    for (const [filePath, code] of Object.entries(JSON.parse(process.argv[1]))) {
      const [result] = await eslint.lintText(code, { filePath });
      out[filePath] = result.messages.filter((m) => m.ruleId === 'layers/imports').map((m) => m.message);
    }
    process.stdout.write(JSON.stringify(out));`;
  const { status, stdout, stderr } = spawnSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(snippets)], { cwd: ROOT, encoding: 'utf8' });
  if (status !== 0) throw new Error(stderr);
  return JSON.parse(stdout);
}

describe('the layer rules (eslint.config.mjs)', () => {
  const messages = layerMessages({
    'apps/cli/src/example.ts': "import { createApiApp } from '../../api/src/create-api-app';\nexport const app = createApiApp;\n",
    'apps/worker/src/example.ts': "export { EventsService } from '../../../apps/api/src/events/events.service';\n",
    'apps/api/src/example.ts': "import { findSession } from '@app/event-store';\nimport { problem } from './http/problem';\nexport const uses = [findSession, problem];\n",
    'libs/event-store/src/example.ts': "import type { EventsService } from '../../../apps/api/src/events/events.service';\nexport type Uses = EventsService;\n",
    'libs/use-cases/src/example.ts': "import { deleteSession } from '@app/event-store';\nexport const uses = deleteSession;\n",
    'packages/client/src/example.ts': "import { pivotMovedBy } from '@app/domain';\nexport const uses = pivotMovedBy;\n",
    'test/example.ts': "import { createApiApp } from '../apps/api/src/create-api-app';\nexport const app = createApiApp;\n",
  });

  it('given an app importing another app, when linted, then it is refused (relative paths resolved, re-exports too)', () => {
    expect(messages['apps/cli/src/example.ts']).toEqual(['apps never import each other (apps/cli imports apps/api): move what both need into a lib']);
    expect(messages['apps/worker/src/example.ts']).toEqual(['apps never import each other (apps/worker imports apps/api): move what both need into a lib']);
  });

  it('given an app importing libs and its own modules, when linted, then it passes', () => {
    expect(messages['apps/api/src/example.ts']).toEqual([]);
  });

  it('given a store importing a service, even for a type, when linted, then it is refused', () => {
    expect(messages['libs/event-store/src/example.ts']).toEqual(['libs never import apps (libs/event-store imports apps/api)']);
  });

  it('given a lib importing another lib, when linted, then it passes', () => {
    expect(messages['libs/use-cases/src/example.ts']).toEqual([]);
  });

  it('given a package importing a lib, when linted, then it is refused', () => {
    expect(messages['packages/client/src/example.ts']).toEqual(['packages are published on their own and import no libs (packages/client imports libs/domain)']);
  });

  it('given a test importing an app, when linted, then the layer rules do not apply', () => {
    expect(messages['test/example.ts']).toEqual([]);
  });
});
