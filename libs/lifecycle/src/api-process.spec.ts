import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_ENV, API_NODE_ARGS } from './api-process';

const repo = (path: string) => readFileSync(join(__dirname, '..', '..', '..', path), 'utf8');
const apiMain = 'dist/apps/api/src/main.js';

/** The places that start the API without this module spell its flags and environment themselves. */
describe('how the API process is started', () => {
  it('npm run start:api passes the node flags and the environment (an operator value of the variable kept)', () => {
    const script: string = JSON.parse(repo('package.json')).scripts['start:api'];
    expect(script).toContain(`node ${API_NODE_ARGS.join(' ')} ${apiMain}`);
    for (const [name, value] of Object.entries(API_ENV)) expect(script).toContain(`${name}=\${${name}:-${value}}`);
  });

  it('the Docker image and docker-compose.yml start it with the node flags; the image sets the environment', () => {
    const command = JSON.stringify(['node', ...API_NODE_ARGS, apiMain]).replace(/,/g, ', ');
    const dockerfile = repo('Dockerfile');
    expect(dockerfile).toContain(`CMD ${command}`);
    expect(repo('docker-compose.yml')).toContain(`command: ${command}`);
    for (const [name, value] of Object.entries(API_ENV)) expect(dockerfile).toMatch(new RegExp(`^\\s+${name}=${value}\\b`, 'm'));
  });
});
