import { given } from '../testing/given';
import { type ConfigIssueCode, configIssues } from './validate';

describe('configIssues: ajv errors as config issues', () => {
  it('accepts a valid patch with no issue', () => {
    given({ compaction: { trigger: { type: 'reserved', reserved: null }, model: null }, limits: { context: null } })
      .when(configIssues)
      .then([]);
  });

  it.each<[string, unknown, string, ConfigIssueCode, string]>([
    ['unknown_key: a key the schema lacks, at its own path', { prune: { protectTurnz: 1 } }, 'prune.protectTurnz', 'unknown_key', 'unknown setting "protectTurnz"'],
    ['wrong_type: the expected type and the given one', { cache: { breakpoints: 5 } }, 'cache.breakpoints', 'wrong_type', 'expected a string, got number'],
    ['wrong_type: an array item, with its index', { prune: { excludeTools: ['a', null] } }, 'prune.excludeTools[1]', 'wrong_type', 'expected a string, got null'],
    ['wrong_type: a nullable field names its non-null type, not null', { toolOutput: { contextBudgetTokens: '5' } }, 'toolOutput.contextBudgetTokens', 'wrong_type', 'expected a finite number, got string'],
    ['out_of_range: both bounds', { archive: { toolCallCutoff: 0 } }, 'archive.toolCallCutoff', 'out_of_range', 'expected 1 to 100000, got 0'],
    ['out_of_range: an empty text', { compaction: { model: '' } }, 'compaction.model', 'out_of_range', 'must not be empty'],
    ['not_integer: a fraction where an integer goes, though out of range too', { pins: { maxTokens: -0.5 } }, 'pins.maxTokens', 'not_integer', 'expected an integer, got -0.5'],
    ['invalid_value: the allowed values', { toolOutput: { mode: 'tail' } }, 'toolOutput.mode', 'invalid_value', 'expected one of head_tail, head'],
    ['invalid_value: an unknown trigger type', { compaction: { trigger: { type: 'window' } } }, 'compaction.trigger.type', 'invalid_value', 'expected one of ratio, reserved, reserve-chain'],
    ['invalid_value: a trigger type that is no string', { compaction: { trigger: { type: 1 } } }, 'compaction.trigger.type', 'invalid_value', 'expected one of ratio, reserved, reserve-chain'],
    ['invalid_value: neither of exactly-one-of', { toolOutput: { truncation: {} } }, 'toolOutput.truncation', 'invalid_value', 'expected exactly one of tokens, bytes'],
    ['too_long: the limit', { compaction: { model: 'm'.repeat(201) } }, 'compaction.model', 'too_long', 'longer than 200 characters'],
    ['too_many_items: the limit', { compaction: { retainDirectives: Array(51).fill('x') } }, 'compaction.retainDirectives', 'too_many_items', 'more than 50 items'],
    ['missing_type: a trigger must name its type', { compaction: { trigger: { buffer: 1 } } }, 'compaction.trigger.type', 'missing_type', 'name the type: one of ratio, reserved, reserve-chain'],
  ])('%s', (_, input, path, code, message) => {
    given(input).when(configIssues).then([{ path, code, message }]);
  });

  it('validates the trigger variant its type names: errors name that variant\'s fields', () => {
    given({ compaction: { trigger: { type: 'reserve-chain', maxMessages: -1, buffer: 1 } } })
      .when(configIssues)
      .then([
        { path: 'compaction.trigger.maxMessages', code: 'out_of_range', message: 'expected 0 to 1000000, got -1' },
        { path: 'compaction.trigger.buffer', code: 'unknown_key', message: 'unknown setting "buffer"' },
      ]);
  });

  it('reports the errors of the one branch an exactly-one-of value names, and a non-object as such', () => {
    given({ toolOutput: { truncation: { bytes: -1 } } })
      .when(configIssues)
      .then([{ path: 'toolOutput.truncation.bytes', code: 'out_of_range', message: 'expected 0 to 1073741824, got -1' }]);
    given({ toolOutput: { truncation: 10 } })
      .when(configIssues)
      .then([{ path: 'toolOutput.truncation', code: 'wrong_type', message: 'expected an object, got number' }]);
  });

  it('lists the issues in the order of the input\'s keys, one per path', () => {
    given({ pins: { maxTokens: 'x' }, compaction: { summaryDirectives: [1, 'ok', 2], thresholdRatio: 5 }, nope: true })
      .when((input) => configIssues(input).map(({ path, code }) => `${path} ${code}`))
      .then([
        'pins.maxTokens wrong_type',
        'compaction.summaryDirectives[0] wrong_type',
        'compaction.summaryDirectives[2] wrong_type',
        'compaction.thresholdRatio out_of_range',
        'nope unknown_key',
      ]);
  });
});
