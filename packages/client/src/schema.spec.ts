import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/**
 * openapi-typescript's Node API in a child process: it loads ESM-only
 * packages (@redocly/openapi-core), which Jest's CommonJS runtime cannot.
 */
const GENERATE = `
  const { default: openapiTS, astToString, COMMENT_HEADER } = await import('openapi-typescript');
  const { pathToFileURL } = await import('node:url');
  const ast = await openapiTS(pathToFileURL('docs/openapi.json'));
  process.stdout.write(COMMENT_HEADER + astToString(ast));
`;

describe('schema.ts', () => {
  it('is what `npm run client:generate` makes of docs/openapi.json (regenerate it after changing the API)', () => {
    // given the committed document, when generated as the script does
    const generated = execFileSync(process.execPath, ['--input-type=module', '-e', GENERATE], { cwd: ROOT, encoding: 'utf8' });
    // then the committed types are current
    expect(readFileSync(join(__dirname, 'schema.ts'), 'utf8')).toBe(generated);
  });
});
