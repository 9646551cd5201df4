#!/usr/bin/env node
// CI check (run by `npm run lint`): no import circle among the modules of
// apps/, libs/ and packages/. Imports are read and resolved as the TypeScript
// compiler does, through tsconfig.json's paths (@app/*, @session-store/*);
// type-only imports and re-exports count, since a circle of types is a circle
// of knowledge all the same. Usage: node .ci/import-cycles.mjs [root]
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const AREAS = ['apps', 'libs', 'packages'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage']);

function* sourceFiles(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* sourceFiles(path);
    } else if (/\.(ts|tsx|mts|cts)$/.test(entry.name) && !/\.d\.[mc]?ts$/.test(entry.name)) {
      yield path;
    }
  }
}

/** Each module of the areas → the modules of the areas it imports. */
function importGraph(root) {
  const configPath = join(root, 'tsconfig.json');
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root, undefined, configPath);
  const files = AREAS.flatMap((area) => [...sourceFiles(join(root, area))]);
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set();
    for (const { fileName } of importedFiles) {
      const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule;
      const target = resolved && resolve(resolved.resolvedFileName);
      if (target && known.has(target)) targets.add(target);
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** The strongly connected components of more than one module, or of one that imports itself (Tarjan's algorithm, iterative). */
function circles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, i] = frame;
      const targets = graph.get(node);
      if (i < targets.length) {
        frame[1]++;
        const target = targets[i];
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push([target, 0]);
        } else if (onStack.has(target)) {
          low.set(node, Math.min(low.get(node), index.get(target)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) !== index.get(node)) continue;
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node).includes(node)) found.push(component);
    }
  }
  return found;
}

/** One circle through the component's first module (breadth-first: a shortest one), to show how it closes. */
function circleThrough(graph, component) {
  const members = new Set(component);
  const [start] = [...component].sort();
  const cameFrom = new Map();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const target of graph.get(node)) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
const graph = importGraph(root);
const found = circles(graph);
for (const component of found) {
  const members = component.map((file) => relative(root, file)).sort();
  const path = circleThrough(graph, component).map((file) => relative(root, file));
  console.error(`import circle among ${members.join(', ')}; one of its loops: ${path.join(' -> ')}`);
}
if (found.length > 0) {
  console.error(`${found.length} import circle${found.length === 1 ? '' : 's'} in ${AREAS.join(', ')}: break each by moving what both sides need into a module of its own.`);
  process.exit(1);
}
console.log(`no import circle among ${graph.size} modules of ${AREAS.join(', ')}`);
