// Lint: typescript-eslint's recommended rules, plus the layer rules: libs/domain
// stays pure (no framework, ORM, queue or driver imports), apps import libs but
// never each other, libs never import apps (a store never imports a service),
// packages (published on their own) import neither. Import circles are checked
// by .ci/import-cycles.mjs, which `npm run lint` runs after eslint.
import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

const ROOT = dirname(fileURLToPath(import.meta.url));

/** The app, lib or package a path lies in ({ area: 'apps', name: 'api' }), or null (tests, bench, migrations…). */
function partOf(path) {
  const [area, name] = relative(ROOT, path).split(sep);
  return ['apps', 'libs', 'packages'].includes(area) && name ? { area, name } : null;
}

/** Where an import specifier lands: a relative one from the importing file, tsconfig.json's path aliases to their folder. */
function targetOf(specifier, file) {
  if (specifier.startsWith('.')) return partOf(resolve(dirname(file), specifier));
  const lib = /^@app\/([a-z-]+)/.exec(specifier);
  if (lib) return { area: 'libs', name: lib[1] };
  const pkg = /^@session-store\/([a-z-]+)/.exec(specifier);
  if (pkg) return { area: 'packages', name: pkg[1] };
  return null;
}

/** Why importing `to` from `from` breaks a layer rule, or null. */
function layerBreach(from, to) {
  if (!from || !to) return null;
  if (from.area === 'apps' && to.area === 'apps' && to.name !== from.name) {
    return `apps never import each other (apps/${from.name} imports apps/${to.name}): move what both need into a lib`;
  }
  if (from.area === 'libs' && to.area === 'apps') return `libs never import apps (libs/${from.name} imports apps/${to.name})`;
  if (from.area === 'packages' && to.area !== 'packages') {
    return `packages are published on their own and import no ${to.area} (packages/${from.name} imports ${to.area}/${to.name})`;
  }
  return null;
}

const layers = {
  rules: {
    imports: {
      meta: { type: 'problem', docs: { description: 'apps never import each other; libs never import apps; packages import neither' }, schema: [] },
      create(context) {
        const from = partOf(context.filename);
        if (!from) return {};
        const check = (source) => {
          if (source?.type !== 'Literal' || typeof source.value !== 'string') return;
          const breach = layerBreach(from, targetOf(source.value, context.filename));
          if (breach) context.report({ node: source, message: breach });
        };
        return {
          ImportDeclaration: (node) => check(node.source),
          ExportAllDeclaration: (node) => check(node.source),
          ExportNamedDeclaration: (node) => check(node.source),
          ImportExpression: (node) => check(node.source),
          TSImportEqualsDeclaration: (node) => check(node.moduleReference.expression),
        };
      },
    },
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'packages/*/dist/**', 'node_modules/**', 'coverage/**', '*.js', '*.mjs'] },
  ...tseslint.configs.recommended,
  {
    plugins: { layers },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'layers/imports': 'error',
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
