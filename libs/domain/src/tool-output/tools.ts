/**
 * The tools a model calls to read what the in-context view left out (seed
 * 000, 1.8): their definitions in each provider's format, and the parsing of
 * a call exactly as the model produced it, so an agent loop can forward it to
 * `POST /v1/sessions/{id}/tool-calls` unchanged.
 */
import { invalid } from '../errors';
import { DEFAULT_GREP_LIMIT, DEFAULT_MAX_PATTERN_LENGTH, compileGrepPattern } from './grep';
import { DEFAULT_MAX_LINE_LENGTH } from './line-format';

export const TOOL_OUTPUT_READ_TOOL = 'tool_output_cache';
export const TOOL_OUTPUT_GREP_TOOL = 'tool_output_cache_grep';

export const READ_DEFAULT_LIMIT = 2000;
export const READ_MAX_LIMIT = 2000;
export const GREP_MAX_LIMIT = 1000;
export const GREP_MAX_CONTEXT = 10;
const MAX_REF_ID_LENGTH = 256;

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

const refIdSchema = {
  type: 'string',
  description: 'The ref_id given in the note at the end of a truncated tool result.',
};

export const TOOL_OUTPUT_TOOLS: readonly ToolDefinition[] = [
  {
    name: TOOL_OUTPUT_READ_TOOL,
    description:
      'Read a tool output that was too long to show in full. A truncated tool result ends with a note giving its ' +
      'ref_id. Returns the requested lines numbered like `cat -n` (line number, tab, text) and a footer with the ' +
      `next offset. Lines longer than ${DEFAULT_MAX_LINE_LENGTH} characters are cut; one read returns at most ` +
      'about 50 KB.',
    parameters: {
      type: 'object',
      properties: {
        ref_id: refIdSchema,
        offset: { type: 'integer', minimum: 1, description: '1-based line number to start reading from. Default 1.' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: READ_MAX_LIMIT,
          description: `Number of lines to read. Default ${READ_DEFAULT_LIMIT}.`,
        },
      },
      required: ['ref_id'],
      additionalProperties: false,
    },
  },
  {
    name: TOOL_OUTPUT_GREP_TOOL,
    description:
      'Search a tool output that was too long to show in full (see tool_output_cache) line by line with a regular ' +
      'expression, like `grep -n`. Matching lines come back as `line:text`, context lines as `line-text`, and ' +
      'separate groups are divided by `--`.',
    parameters: {
      type: 'object',
      properties: {
        ref_id: refIdSchema,
        pattern: {
          type: 'string',
          description:
            `RE2 regular expression, at most ${DEFAULT_MAX_PATTERN_LENGTH} characters. No backreferences or ` +
            'lookaround. Escape . * + ? ( ) [ ] { } | ^ $ \\ to match them literally.',
        },
        ignore_case: { type: 'boolean', description: 'Match case-insensitively. Default false.' },
        context: {
          type: 'integer',
          minimum: 0,
          maximum: GREP_MAX_CONTEXT,
          description: 'Lines of context to show before and after each match. Default 0.',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: GREP_MAX_LIMIT,
          description: `Maximum number of matches. Default ${DEFAULT_GREP_LIMIT}.`,
        },
      },
      required: ['ref_id', 'pattern'],
      additionalProperties: false,
    },
  },
];

export type ToolFormat = 'neutral' | 'openai' | 'openai-responses' | 'anthropic' | 'ai-sdk';
export const TOOL_FORMATS: readonly ToolFormat[] = ['neutral', 'openai', 'openai-responses', 'anthropic', 'ai-sdk'];

/**
 * One definition in a provider's shape. The Responses API treats an omitted
 * `strict` as true, which would reject the optional arguments, so it is
 * spelled out as false. The AI SDK's tools are objects keyed by name holding
 * a schema object, which JSON cannot carry: ai-sdk gives the JSON Schema under
 * the SDK's own key, for `tool({ description, inputSchema: jsonSchema(inputSchema) })`.
 */
export function renderToolDefinition(tool: ToolDefinition, format: ToolFormat): Record<string, unknown> {
  const { name, description, parameters } = tool;
  switch (format) {
    case 'neutral':
      return { name, description, parameters };
    case 'openai':
      return { type: 'function', function: { name, description, parameters } };
    case 'openai-responses':
      return { type: 'function', name, description, parameters, strict: false };
    case 'anthropic':
      return { name, description, input_schema: parameters };
    case 'ai-sdk':
      return { name, description, inputSchema: parameters };
  }
}

export function renderToolOutputTools(format: ToolFormat): Record<string, unknown>[] {
  return TOOL_OUTPUT_TOOLS.map((tool) => renderToolDefinition(tool, format));
}

export interface ReadCommand {
  kind: 'read';
  refId: string;
  /** 1-based first line. */
  offset: number;
  limit: number;
}

export interface GrepCommand {
  kind: 'grep';
  refId: string;
  pattern: string;
  ignoreCase: boolean;
  context: number;
  limit: number;
}

export type ToolOutputCommand = ReadCommand | GrepCommand;

type Args = Record<string, unknown>;

function argumentsObject(raw: unknown): Args {
  let value = raw;
  if (typeof raw === 'string') {
    // Some providers send "" for a call without arguments.
    if (raw.trim() === '') return {};
    try {
      value = JSON.parse(raw);
    } catch {
      throw invalid('invalid_tool_arguments', 'tool arguments are not valid JSON');
    }
  }
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid('invalid_tool_arguments', 'tool arguments must be a JSON object');
  }
  return value as Args;
}

function onlyKnown(args: Args, tool: ToolDefinition): void {
  const known = Object.keys(tool.parameters.properties as object);
  const unknown = Object.keys(args).filter((key) => !known.includes(key));
  if (unknown.length > 0) {
    const message = `unknown argument ${unknown.join(', ')}; ${tool.name} takes ${known.join(', ')}`;
    throw invalid('invalid_argument', message, { arguments: unknown });
  }
}

function refIdArg(args: Args): string {
  const value = args.ref_id;
  if (value === undefined || value === null || value === '') {
    throw invalid('missing_argument', 'ref_id is required', { argument: 'ref_id' });
  }
  if (typeof value !== 'string' || value.length > MAX_REF_ID_LENGTH) {
    const message = `ref_id must be a string of at most ${MAX_REF_ID_LENGTH} characters`;
    throw invalid('invalid_argument', message, { argument: 'ref_id' });
  }
  return value;
}

/** Models often quote numbers, so a string of digits is accepted as the integer it spells. */
function integerArg(args: Args, name: string, fallback: number, min: number, max: number): number {
  const raw = args[name];
  if (raw === undefined || raw === null) return fallback;
  const value = typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid('invalid_argument', `${name} must be an integer from ${min} to ${max}`, { argument: name });
  }
  return value;
}

function booleanArg(args: Args, name: string): boolean {
  const raw = args[name];
  if (raw === undefined || raw === null) return false;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw invalid('invalid_argument', `${name} must be a boolean`, { argument: name });
}

/**
 * A model's call of one of the tools, validated. `args` is the arguments
 * object or its JSON text. Throws a DomainError: `unknown_tool`,
 * `invalid_tool_arguments`, `missing_argument`, `invalid_argument`,
 * `invalid_pattern` or `pattern_too_long`. An offset of 0 reads from line 1,
 * for callers used to 0-based offsets.
 */
export function parseToolOutputCall(name: string, args: unknown): ToolOutputCommand {
  const tool = TOOL_OUTPUT_TOOLS.find((candidate) => candidate.name === name);
  if (!tool) {
    const expected = `${TOOL_OUTPUT_READ_TOOL} or ${TOOL_OUTPUT_GREP_TOOL}`;
    throw invalid('unknown_tool', `unknown tool ${JSON.stringify(name)}; expected ${expected}`, { tool: name });
  }
  const parsed = argumentsObject(args);
  onlyKnown(parsed, tool);
  const refId = refIdArg(parsed);
  if (tool.name === TOOL_OUTPUT_READ_TOOL) {
    return {
      kind: 'read',
      refId,
      offset: Math.max(1, integerArg(parsed, 'offset', 1, 0, Number.MAX_SAFE_INTEGER)),
      limit: integerArg(parsed, 'limit', READ_DEFAULT_LIMIT, 1, READ_MAX_LIMIT),
    };
  }
  if (parsed.pattern === undefined || parsed.pattern === null || parsed.pattern === '') {
    throw invalid('missing_argument', 'pattern is required', { argument: 'pattern' });
  }
  if (typeof parsed.pattern !== 'string') {
    throw invalid('invalid_argument', 'pattern must be a string', { argument: 'pattern' });
  }
  const ignoreCase = booleanArg(parsed, 'ignore_case');
  compileGrepPattern(parsed.pattern, { ignoreCase });
  return {
    kind: 'grep',
    refId,
    pattern: parsed.pattern,
    ignoreCase,
    context: integerArg(parsed, 'context', 0, 0, GREP_MAX_CONTEXT),
    limit: integerArg(parsed, 'limit', DEFAULT_GREP_LIMIT, 1, GREP_MAX_LIMIT),
  };
}
