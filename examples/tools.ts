/**
 * The examples' tools: fake and deterministic, so that a run can be checked.
 * `run_tests` reports a short test run; `read_file` returns a build log long
 * enough that the context shows it cut, while the store keeps it whole.
 */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input, ready for strict mode: every property required, no others. */
  parameters: ToolParameters;
}

type ToolParameters = {
  type: 'object';
  properties: Record<string, { type: 'string'; description: string }>;
  required: string[];
  additionalProperties: false;
};

export interface ToolOutput {
  output: string;
  isError: boolean;
}

export const TOOLS: ToolSpec[] = [
  {
    name: 'run_tests',
    description: 'Run the test suite of one package and report the results.',
    parameters: {
      type: 'object',
      properties: { package: { type: 'string', description: 'The package directory, e.g. packages/client' } },
      required: ['package'],
      additionalProperties: false,
    },
  },
  {
    name: 'read_file',
    description: 'Read a file of the repository.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'The path from the repository root, e.g. build.log' } },
      required: ['path'],
      additionalProperties: false,
    },
  },
];

const BUILD_LOG = Array.from({ length: 3000 }, (_, i) => `[build] compiled module ${i + 1} of 3000 in ${(i * 7) % 50} ms`).join('\n');
const FILES: Record<string, string> = { 'build.log': `${BUILD_LOG}\n[build] done: 3000 modules, 0 errors\n` };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function stringArg(input: unknown, key: string): string | undefined {
  const value = isObject(input) ? input[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** Runs a tool the model called; a bad call is an error result the model sees, not a crash. */
export function runTool(name: string, input: unknown): ToolOutput {
  switch (name) {
    case 'run_tests': {
      const pkg = stringArg(input, 'package');
      if (pkg === undefined) return { output: 'run_tests needs {"package": string}', isError: true };
      return { output: `${pkg}: 42 passed, 0 failed (3.1 s)`, isError: false };
    }
    case 'read_file': {
      const path = stringArg(input, 'path');
      if (path === undefined) return { output: 'read_file needs {"path": string}', isError: true };
      const text = FILES[path];
      return text === undefined ? { output: `${path}: no such file`, isError: true } : { output: text, isError: false };
    }
    default:
      return { output: `unknown tool ${name}`, isError: true };
  }
}

/** A model's JSON arguments; text that is not JSON is passed on as is, for the tool to refuse. */
export function parseArguments(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}
