import { DomainError } from '../errors';
import {
  TOOL_FORMATS,
  TOOL_OUTPUT_GREP_TOOL,
  TOOL_OUTPUT_READ_TOOL,
  parseToolOutputCall,
  renderToolOutputTools,
} from './tools';

function errorOf(run: () => unknown): { code: string; kind: string } | undefined {
  try {
    run();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { code: error.code, kind: error.kind };
  }
  return undefined;
}

describe('tool definitions', () => {
  it('renders both tools in every provider format', () => {
    const [read] = renderToolOutputTools('neutral') as Array<{ name: string; parameters: { required: string[] } }>;
    expect(read.name).toBe(TOOL_OUTPUT_READ_TOOL);
    expect(read.parameters.required).toEqual(['ref_id']);

    const schema = (tools: Record<string, unknown>[]) => tools.map((tool) => JSON.stringify(tool));
    expect(renderToolOutputTools('openai')[1]).toEqual({
      type: 'function',
      function: {
        name: TOOL_OUTPUT_GREP_TOOL,
        description: expect.stringContaining('grep -n'),
        parameters: expect.objectContaining({ required: ['ref_id', 'pattern'] }),
      },
    });
    expect(renderToolOutputTools('openai-responses')[0]).toEqual(
      expect.objectContaining({ type: 'function', name: TOOL_OUTPUT_READ_TOOL, strict: false }),
    );
    expect(renderToolOutputTools('anthropic')[0]).toEqual({
      name: TOOL_OUTPUT_READ_TOOL,
      description: expect.any(String),
      input_schema: expect.objectContaining({ type: 'object' }),
    });
    for (const format of TOOL_FORMATS) expect(schema(renderToolOutputTools(format))).toHaveLength(2);
  });
});

describe('parseToolOutputCall', () => {
  it('parses a read call from JSON text or an object, with defaults', () => {
    expect(parseToolOutputCall('tool_output_cache', '{"ref_id":"out_1","offset":40,"limit":20}')).toEqual({
      kind: 'read',
      refId: 'out_1',
      offset: 40,
      limit: 20,
    });
    expect(parseToolOutputCall('tool_output_cache', { ref_id: 'out_1' })).toEqual({
      kind: 'read',
      refId: 'out_1',
      offset: 1,
      limit: 2000,
    });
  });

  it('forgives quoted numbers and a 0-based first offset', () => {
    expect(parseToolOutputCall('tool_output_cache', { ref_id: 'r', offset: '0', limit: ' 5 ' })).toEqual({
      kind: 'read',
      refId: 'r',
      offset: 1,
      limit: 5,
    });
  });

  it('parses a grep call', () => {
    expect(
      parseToolOutputCall('tool_output_cache_grep', '{"ref_id":"r","pattern":"ERROR \\\\d+","ignore_case":true,"context":2}'),
    ).toEqual({ kind: 'grep', refId: 'r', pattern: 'ERROR \\d+', ignoreCase: true, context: 2, limit: 100 });
  });

  it.each([
    ['read_file', { ref_id: 'r' }, 'unknown_tool'],
    ['tool_output_cache', '{"ref_id":', 'invalid_tool_arguments'],
    ['tool_output_cache', '[1]', 'invalid_tool_arguments'],
    ['tool_output_cache', '', 'missing_argument'],
    ['tool_output_cache', { offset: 3 }, 'missing_argument'],
    ['tool_output_cache', { ref_id: 7 }, 'invalid_argument'],
    ['tool_output_cache', { ref_id: 'r', offset: -1 }, 'invalid_argument'],
    ['tool_output_cache', { ref_id: 'r', offset: 1.5 }, 'invalid_argument'],
    ['tool_output_cache', { ref_id: 'r', limit: 0 }, 'invalid_argument'],
    ['tool_output_cache', { ref_id: 'r', limit: 2001 }, 'invalid_argument'],
    ['tool_output_cache', { ref_id: 'r', limit: 'ten' }, 'invalid_argument'],
    ['tool_output_cache', { ref_id: 'r', line: 3 }, 'invalid_argument'],
    ['tool_output_cache_grep', { ref_id: 'r' }, 'missing_argument'],
    ['tool_output_cache_grep', { ref_id: 'r', pattern: 5 }, 'invalid_argument'],
    ['tool_output_cache_grep', { ref_id: 'r', pattern: 'a', context: 11 }, 'invalid_argument'],
    ['tool_output_cache_grep', { ref_id: 'r', pattern: 'a', ignore_case: 'yes' }, 'invalid_argument'],
    ['tool_output_cache_grep', { ref_id: 'r', pattern: '(a)\\1' }, 'invalid_pattern'],
    ['tool_output_cache_grep', { ref_id: 'r', pattern: 'x'.repeat(600) }, 'pattern_too_long'],
  ])('%s %j is refused with %s', (name, args, code) => {
    expect(errorOf(() => parseToolOutputCall(name, args))).toEqual({ code, kind: 'invalid' });
  });
});
