import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { components } from './schema';

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

type GeneratedContext = components['schemas']['Context'];

/** What a client generated from the document reads, with no cast: narrowing on `format` types `messages`. */
function firstRole(context: GeneratedContext): string | undefined {
  switch (context.format) {
    case 'neutral':
    case 'openai':
    case 'anthropic':
    case 'ai-sdk':
      return context.messages[0]?.role;
    case 'openai-responses': {
      const item = context.messages[0];
      return item?.type === 'message' ? item.role : undefined;
    }
  }
}

describe('the generated Context type', () => {
  it('types messages by format, so messages[0].role reads without a cast', () => {
    // given contexts as the document describes them
    const common = {
      model: 'gpt-4.1',
      tokens: { estimated: 1, basis: 'estimate', overhead: 0, expectedGrowth: 0, usable: null, limit: null, threshold: null, ratio: null },
      pivotSeq: null,
      headSeq: 2,
      atSeq: null,
      pendingToolCalls: [],
      repairs: { abortedCallIds: [], droppedResultCallIds: [], droppedCallIds: [] },
      compaction: { state: 'idle', lastError: null, pendingMarkerSeq: null, suppressedReason: null },
      fitted: null,
    } satisfies Omit<components['schemas']['NeutralContext'], 'format' | 'messages'>;
    const neutral: GeneratedContext = { ...common, format: 'neutral', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] };
    const responses: GeneratedContext = {
      ...common,
      format: 'openai-responses',
      messages: [
        { type: 'function_call', call_id: 'c1', name: 'ls', arguments: '{}' },
        { type: 'message', role: 'assistant', content: 'done' },
      ],
    };
    const anthropic: GeneratedContext = { ...common, format: 'anthropic', system: 'be brief', messages: [{ role: 'assistant', content: [{ type: 'text', text: 'ok' }] }] };
    // then the role reads through the generated types
    expect([neutral, responses, anthropic].map(firstRole)).toEqual(['user', undefined, 'assistant']);
  });
});
