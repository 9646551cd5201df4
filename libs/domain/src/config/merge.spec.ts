import { given } from '../testing/given';
import { mergeConfig } from './merge';
import { OPENCODE_TAIL_BUDGET, PRESETS } from './presets';

const resolving = (patch: unknown) => (base: unknown) => mergeConfig(base, patch, true);
const mergingPatches = (patch: unknown) => (base: unknown) => mergeConfig(base, patch, false);

describe('mergeConfig: the schema-driven merge', () => {
  it('deep-merges objects and replaces arrays whole', () => {
    given({ compaction: { auto: false, summaryDirectives: ['a', 'b'] } })
      .when(mergingPatches({ compaction: { summaryDirectives: ['c'] } }))
      .then({ compaction: { auto: false, summaryDirectives: ['c'] } });
  });

  it('drops a limit override on null when resolving, and keeps the null when merging patches', () => {
    given({ limits: { context: 64_000, output: 4_096 } })
      .when(resolving({ limits: { context: null } }))
      .then({ limits: { output: 4_096 } });
    given({ limits: { context: 64_000 } })
      .when(mergingPatches({ limits: { context: null } }))
      .then({ limits: { context: null } });
  });

  it('sets an ordinary nullable field to null', () => {
    given({ compaction: { model: 'gpt-5' } }).when(resolving({ compaction: { model: null } })).then({ compaction: { model: null } });
  });

  it('starts a budget set on a null one from its x-defaults when resolving only', () => {
    given({ compaction: { tailBudget: null } })
      .when(resolving({ compaction: { tailBudget: { maxTokens: 5_000 } } }))
      .then({ compaction: { tailBudget: { ...OPENCODE_TAIL_BUDGET, maxTokens: 5_000 } } });
    given({ compaction: { tailBudget: null } })
      .when(mergingPatches({ compaction: { tailBudget: { maxTokens: 5_000 } } }))
      .then({ compaction: { tailBudget: { maxTokens: 5_000 } } });
  });

  it('starts a trigger of another type from that variant\'s defaults when resolving, and takes the patch as it is when merging patches', () => {
    const base = { compaction: { trigger: { type: 'ratio', outputReserve: 10, tokenLimit: null } } };
    given(base)
      .when(resolving({ compaction: { trigger: { type: 'reserved', buffer: 1 } } }))
      .then({ compaction: { trigger: { ...PRESETS.opencode.compaction.trigger, buffer: 1 } } });
    given(base)
      .when(mergingPatches({ compaction: { trigger: { type: 'reserved', buffer: 1 } } }))
      .then({ compaction: { trigger: { type: 'reserved', buffer: 1 } } });
    given(base)
      .when(mergingPatches({ compaction: { trigger: { type: 'ratio', tokenLimit: 5 } } }))
      .then({ compaction: { trigger: { type: 'ratio', outputReserve: 10, tokenLimit: 5 } } });
  });

  it('replaces an exactly-one-of value whole', () => {
    given({ toolOutput: { truncation: { tokens: 10_000 } } })
      .when(resolving({ toolOutput: { truncation: { bytes: 4_096 } } }))
      .then({ toolOutput: { truncation: { bytes: 4_096 } } });
  });

  it('shares nothing with its inputs', () => {
    const base = { compaction: { protectedTools: ['a'] } };
    const patch = { prune: { excludeTools: ['b'] } };
    const merged = mergeConfig(base, patch, true) as { compaction: { protectedTools: string[] }; prune: { excludeTools: string[] } };
    merged.compaction.protectedTools.push('x');
    merged.prune.excludeTools.push('y');
    expect([base.compaction.protectedTools, patch.prune.excludeTools]).toEqual([['a'], ['b']]);
  });
});
