// Lint: typescript-eslint's recommended rules, plus the architecture rule that
// keeps libs/domain pure (no framework, ORM, queue or driver imports).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'packages/*/dist/**', 'node_modules/**', 'coverage/**', '*.js', '*.mjs'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['libs/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['@nestjs/*', 'typeorm', 'bullmq', 'pg', 'ioredis', 'express', '@app/*', 'node:fs', 'fs', 'openai', '@anthropic-ai/*'] },
      ],
    },
  },
);
