import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const SCRIPT = join(__dirname, 'import-cycles.mjs');

/** Runs the check on a project made of `files` (path → source) and tsconfig paths like the repository's. */
function check(files: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const root = mkdtempSync(join(tmpdir(), 'import-cycles-'));
  try {
    const tsconfig = { compilerOptions: { baseUrl: '.', module: 'commonjs', moduleResolution: 'node10', paths: { '@app/*': ['libs/*/src'] } } };
    writeFileSync(join(root, 'tsconfig.json'), JSON.stringify(tsconfig));
    for (const [path, source] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), source);
    }
    const { status, stdout, stderr } = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
    return { status, stdout, stderr };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('the import circle check', () => {
  it('given modules that import one way only, when checked, then it passes', () => {
    const result = check({
      'libs/a/src/index.ts': "export * from './row';\nexport * from './store';\n",
      'libs/a/src/row.ts': 'export const row = 1;\n',
      'libs/a/src/store.ts': "import { row } from './row';\nexport const store = row;\n",
      'apps/api/src/main.ts': "import { store } from '@app/a';\nexport const main = store;\n",
    });
    expect(result).toMatchObject({ status: 0, stdout: 'no import circle among 4 modules of apps, libs, packages\n' });
  });

  it('given three stores that import each other, when checked, then it fails and names the circle and one loop of it', () => {
    const result = check({
      'libs/a/src/events.ts': "import { sessions } from './sessions';\nexport const events = () => sessions;\n",
      'libs/a/src/sessions.ts': "import { forks } from './forks';\nexport const sessions = () => forks;\n",
      'libs/a/src/forks.ts': "import { events } from './events';\nexport const forks = () => events;\n",
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'import circle among libs/a/src/events.ts, libs/a/src/forks.ts, libs/a/src/sessions.ts; one of its loops: libs/a/src/events.ts -> libs/a/src/sessions.ts -> libs/a/src/forks.ts -> libs/a/src/events.ts',
    );
  });

  it('given a circle closed by a type-only import through a path alias, when checked, then it fails', () => {
    const result = check({
      'libs/a/src/index.ts': "import type { B } from '@app/b';\nexport type A = { b: B };\n",
      'libs/b/src/index.ts': "import type { A } from '@app/a';\nexport type B = { a?: A };\n",
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('libs/a/src/index.ts -> libs/b/src/index.ts -> libs/a/src/index.ts');
  });

  it('given a circle outside apps, libs and packages (tests), when checked, then it is not looked at', () => {
    const result = check({
      'test/a.ts': "import './b';\n",
      'test/b.ts': "import './a';\n",
      'libs/a/src/index.ts': 'export const a = 1;\n',
    });
    expect(result).toMatchObject({ status: 0, stdout: 'no import circle among 1 modules of apps, libs, packages\n' });
  });
});
