/**
 * Strict validation of a config patch: ajv on SESSION_CONFIG_SCHEMA, compiled
 * once, its errors turned into issues with a dotted path and a stable code.
 */
import Ajv2020, { type ErrorObject } from 'ajv/dist/2020';
import { pointerKeys } from '../schema/json-pointer';
import { isPlainObject } from './json-schema';
import { ANNOTATIONS, SESSION_CONFIG_SCHEMA } from './schema';

export type ConfigIssueCode =
  | 'unknown_key'
  | 'wrong_type'
  | 'out_of_range'
  | 'not_integer'
  | 'invalid_value'
  | 'too_long'
  | 'too_many_items'
  | 'missing_type'
  | 'invalid_combination';

export interface ConfigIssue {
  /** Dotted path inside the config object, e.g. `compaction.thresholdRatio`. */
  path: string;
  code: ConfigIssueCode;
  message: string;
}

// Every issue at once; errors carry the schema and data their messages quote; strict mode knows the merge's annotations.
const ajv = new Ajv2020({ strict: true, allErrors: true, discriminator: true, verbose: true });
for (const keyword of ANNOTATIONS) ajv.addKeyword({ keyword });
const validateSchema = ajv.compile(SESSION_CONFIG_SCHEMA);

type Json = Record<string, unknown>;

const describe = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

const EXPECTED: Readonly<Record<string, string>> = {
  boolean: 'a boolean',
  integer: 'a finite number',
  number: 'a finite number',
  string: 'a string',
  array: 'an array',
  object: 'an object',
};

/** An issue before its path is written: the keys leading to it (a JSON pointer's, then any the error names). */
interface Found {
  keys: string[];
  code: ConfigIssueCode;
  message: string;
}

/**
 * A oneOf without a discriminator (a truncation: exactly one of tokens,
 * bytes): the errors of the one branch whose required keys the value has;
 * else a single issue.
 */
function oneOfIssue(error: ErrorObject, keys: string[]): { branch?: number; issue?: Found } {
  if (!isPlainObject(error.data)) return { issue: { keys, code: 'wrong_type', message: `expected an object, got ${describe(error.data)}` } };
  const branches = error.schema as { required: string[] }[];
  const value = error.data;
  const named = branches.flatMap((branch, i) => (branch.required.every((key) => Object.hasOwn(value, key)) ? [i] : []));
  if (named.length === 1) return { branch: named[0] };
  const names = branches.flatMap((branch) => branch.required).join(', ');
  return { issue: { keys, code: 'invalid_value', message: `expected exactly one of ${names}` } };
}

/** One ajv error as an issue, or null when another error says it better. */
function issueOf(error: ErrorObject): Found | null {
  const keys = pointerKeys(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const parent = error.parentSchema as Json;
  switch (error.keyword) {
    case 'type':
      // The null branch of a nullable field (and below, its anyOf): the other branch's errors say what is wrong.
      if (params.type === 'null') return null;
      if (params.type === 'integer' && Number.isFinite(error.data)) {
        return { keys, code: 'not_integer', message: `expected an integer, got ${String(error.data)}` };
      }
      return { keys, code: 'wrong_type', message: `expected ${EXPECTED[params.type as string]}, got ${describe(error.data)}` };
    case 'anyOf':
      return null;
    case 'minimum':
    case 'maximum':
      return { keys, code: 'out_of_range', message: `expected ${String(parent.minimum)} to ${String(parent.maximum)}, got ${String(error.data)}` };
    case 'minLength':
      return { keys, code: 'out_of_range', message: 'must not be empty' };
    case 'maxLength':
      return { keys, code: 'too_long', message: `longer than ${String(params.limit)} characters` };
    case 'maxItems':
      return { keys, code: 'too_many_items', message: `more than ${String(params.limit)} items` };
    case 'enum':
      return { keys, code: 'invalid_value', message: `expected one of ${(params.allowedValues as string[]).join(', ')}` };
    case 'additionalProperties':
      return { keys: [...keys, String(params.additionalProperty)], code: 'unknown_key', message: `unknown setting "${String(params.additionalProperty)}"` };
    case 'discriminator': {
      const tagName = String(params.tag);
      const names = (parent.oneOf as { properties: Record<string, { const: string }> }[]).map((variant) => variant.properties[tagName].const).join(', ');
      return params.tagValue === undefined
        ? { keys: [...keys, tagName], code: 'missing_type', message: `name the ${tagName}: one of ${names}` }
        : { keys: [...keys, tagName], code: 'invalid_value', message: `expected one of ${names}` };
    }
    default:
      // A keyword the schema does not use yet reads as an invalid value until it gets its own code.
      return { keys, code: 'invalid_value', message: error.message ?? 'is invalid' };
  }
}

/**
 * Where keys lead in the input: the path (`compaction.summaryDirectives[1]`,
 * brackets around array indexes) and each key's index among its container's,
 * to list issues in the input's order.
 */
function locate(input: unknown, keys: readonly string[]): { path: string; rank: number[] } {
  let path = '';
  const rank: number[] = [];
  let value = input;
  for (const key of keys) {
    const list = Array.isArray(value);
    path += list ? `[${key}]` : path ? `.${key}` : key;
    rank.push(list ? Number(key) : isPlainObject(value) ? Object.keys(value).indexOf(key) : -1);
    value = list || isPlainObject(value) ? (value as Json)[key] : undefined;
  }
  return { path, rank };
}

const compareRanks = (a: number[], b: number[]) => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
};

/**
 * Every way `input` breaks the schema, one issue per path, in the input's
 * order (ajv reports keyword by keyword, and a value's type error first).
 */
export function configIssues(input: unknown): ConfigIssue[] {
  if (validateSchema(input)) return [];
  const errors = validateSchema.errors!;
  const found: Found[] = [];
  // Branches of a oneOf whose errors are not the answer: schema path prefixes.
  const skipped: string[] = [];
  for (const error of errors.filter((e) => e.keyword === 'oneOf')) {
    const { branch, issue } = oneOfIssue(error, pointerKeys(error.instancePath));
    const branches = (error.schema as unknown[]).map((_, i) => i).filter((i) => i !== branch);
    skipped.push(...branches.map((i) => `${error.schemaPath}/${i}/`));
    if (issue) found.push(issue);
  }
  for (const error of errors) {
    if (error.keyword === 'oneOf' || skipped.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    const issue = issueOf(error);
    if (issue) found.push(issue);
  }
  const located = found.map((issue) => ({ issue, ...locate(input, issue.keys) })).sort((a, b) => compareRanks(a.rank, b.rank));
  const issues = new Map<string, ConfigIssue>();
  for (const { issue, path } of located) if (!issues.has(path)) issues.set(path, { path, code: issue.code, message: issue.message });
  return [...issues.values()];
}
