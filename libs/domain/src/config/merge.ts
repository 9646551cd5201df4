/**
 * The deep merge preset ← tenant ← session, driven by SESSION_CONFIG_SCHEMA
 * and its merge annotations (schema.ts).
 */
import { isPlainObject } from './json-schema';
import { SESSION_CONFIG_SCHEMA } from './schema';

/** The parts of a schema node the merge reads. */
interface MergeNode {
  type?: string;
  properties?: Record<string, MergeNode>;
  anyOf?: MergeNode[];
  oneOf?: MergeNode[];
  discriminator?: { propertyName: string };
  const?: unknown;
  'x-defaults'?: Record<string, unknown>;
  'x-null-drops'?: boolean;
}

/**
 * Deep merge of a (validated) patch onto `base`. `fill` is true when
 * resolving a full config: a patch landing on null or on another trigger type
 * then starts from that object's `x-defaults`, and a null under `x-null-drops`
 * removes its key; when merging two patches the patch simply wins (a null
 * limit is kept, so it still drops a tenant's override). Arrays and
 * one-of objects are replaced whole; nothing is shared with the inputs.
 */
export function mergeConfig(base: unknown, patch: unknown, fill: boolean): unknown {
  return mergeAt(SESSION_CONFIG_SCHEMA as MergeNode, base, patch, fill);
}

function mergeAt(schema: MergeNode, base: unknown, patch: unknown, fill: boolean): unknown {
  if (patch === undefined) return structuredClone(base);
  const nullable = schema.anyOf?.find((branch) => branch.type !== 'null');
  if (nullable) return patch === null ? null : mergeAt(nullable, base ?? undefined, patch, fill);
  if (!isPlainObject(patch)) return structuredClone(patch);
  if (schema.discriminator) {
    const tag = schema.discriminator.propertyName;
    const variant = schema.oneOf!.find((branch) => branch.properties![tag].const === patch[tag])!;
    return mergeAt(variant, isPlainObject(base) && base[tag] === patch[tag] ? base : undefined, patch, fill);
  }
  if (!schema.properties) return structuredClone(patch);
  const start = isPlainObject(base) ? base : fill ? schema['x-defaults'] : undefined;
  const merged: Record<string, unknown> = structuredClone(start) ?? {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null && fill && schema['x-null-drops']) delete merged[key];
    else merged[key] = mergeAt(schema.properties[key], merged[key], value, fill);
  }
  return merged;
}
