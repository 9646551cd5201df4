/**
 * Self time of a V8 CPU profile (`node --cpu-prof`), grouped: each package
 * under node_modules (the innermost one), Node's internals, V8's own entries
 * (GC, program), and our built code by folder (dist/apps/api/src/<folder>,
 * dist/libs/<lib>). Idle time is left out of the shares. `--window=from:to`
 * (µs of the monotonic clock, as bench/http-layer prints per phase) keeps
 * only the samples taken in it, e.g. a load without the start-up.
 * `--by=caller` charges the self time of native code and of Node's internals
 * (a socket's writev, a string's encoding) to the nearest caller on the stack
 * that is a package or ours: whose work it was, rather than where it ran.
 *
 *   node dist/bench/cpu-profile-groups.js /tmp/prof/CPU.*.cpuprofile [--window=from:to] [--top=N] [--functions=N]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export function groupOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? `v8 ${functionName}` : 'v8 (native)';
  if (url.startsWith('node:')) return 'node internals';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return `node_modules/${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const dist = /\/dist\/(apps\/[^/]+\/src\/[^/]+|libs\/[^/]+|bench)/.exec(url);
  if (dist) return `ours: ${dist[1].replace(/\.js$/, '')}`;
  return url;
}

function main(): void {
  const files = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const option = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
  const top = option('top', 30);
  const functions = option('functions', 25);
  const window = process.argv.find((a) => a.startsWith('--window='))?.split('=')[1].split(':').map(Number) ?? [0, Infinity];
  const byGroup = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const byCaller = process.argv.includes('--by=caller');
  let total = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const parents = new Map<number, number>();
    for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n.id);
    /** The group a sample is charged to: its own, or with --by=caller its nearest package or ours. */
    const chargedGroup = (id: number): string => {
      const own = groupOf(nodes.get(id)!.callFrame.url, nodes.get(id)!.callFrame.functionName);
      if (!byCaller || !(own === 'node internals' || own === 'v8 (native)')) return own;
      for (let at = parents.get(id); at !== undefined; at = parents.get(at)) {
        const group = groupOf(nodes.get(at)!.callFrame.url, nodes.get(at)!.callFrame.functionName);
        if (group !== 'node internals' && !group.startsWith('v8 ')) return group;
      }
      return own;
    };
    let at = profile.startTime;
    profile.samples.forEach((id, i) => {
      at += profile.timeDeltas[i] ?? 0;
      if (at < window[0] || at > window[1]) return;
      const node = nodes.get(id)!;
      const { url, functionName, lineNumber } = node.callFrame;
      if (functionName === '(idle)') return;
      const us = profile.timeDeltas[i] ?? 0;
      total += us;
      const group = chargedGroup(id);
      byGroup.set(group, (byGroup.get(group) ?? 0) + us);
      const fn = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|dist)\//, '')}:${lineNumber + 1}`;
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    });
  }
  const print = (title: string, map: Map<string, number>, n: number) => {
    console.log(`\n${title} (of ${(total / 1000).toFixed(0)} ms of non-idle samples)`);
    for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) {
      console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`);
    }
  };
  print('Self time by group', byGroup, top);
  print('Self time by function', byFunction, functions);
}

if (require.main === module) main();
