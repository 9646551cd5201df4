import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { AgentScript } from './provider-stub';

/** The task the examples' stub provider plays: both fake tools called at once, then a final answer (examples/tools.ts). */
export const TOOLS_TASK: AgentScript = {
  calls: [
    { name: 'run_tests', input: { package: 'packages/client' } },
    { name: 'read_file', input: { path: 'build.log' } },
  ],
  finalText: 'All 42 tests pass and build.log shows no errors.',
  usage: {
    calls: { input: 900, cacheRead: 300, cacheWrite: 0, output: 25 },
    final: { input: 150, cacheRead: 1100, cacheWrite: 0, output: 12 },
  },
};

/** Runs a built example (dist/examples/NAME.js) as its own program; its exit code and everything it printed. */
export function runExample(name: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'dist', 'examples', `${name}.js`), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}
