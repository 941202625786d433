// The project's boundaries, enforced (DESIGN.md §3–4, issue 13). Style is left to review; these
// rules guard structure: what workflow code may import, that packages never import apps, that
// configuration is read in one place per app, that the API never loads the browser engine, and
// that no module imports itself back through a cycle.
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const APPS = ['@wds/api', '@wds/api/*', '@wds/worker', '@wds/worker/*', '@wds/server', '@wds/server/*', '**/apps/*/src/**'];
const TESTS = ['**/*.test.ts', '**/e2e/**', '**/fixtures.ts', '**/fixture-*.ts'];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '.venv-py/**', '.wds/**', '**/*.d.ts', 'bench/results/**', 'scripts/lint-fixtures/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2023, sourceType: 'module' },
    plugins: { 'import-x': importX, '@typescript-eslint': tseslint.plugin },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: {
      // Without type information: cycles are found through the resolver. maxDepth keeps it fast.
      'import-x/no-cycle': ['error', { ignoreExternal: true, maxDepth: 8 }],
      'import-x/no-self-import': 'error',
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: only the workflow SDK and pure
    // modules of this folder (types may come from anywhere: they vanish at build time).
    files: ['workflows/src/**/*.ts'],
    ignores: TESTS,
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [
          {
            regex: '^(?!@temporalio/workflow$|\\.\\.?/).*',
            allowTypeImports: true,
            message: 'Workflow code may import only @temporalio/workflow and pure modules of workflows/ (type-only imports are fine).',
          },
          { group: APPS, message: 'Workflows must not import an app.' },
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Not deterministic in workflows.' },
        { name: 'process', message: 'No process in workflow code.' },
        { name: 'fetch', message: 'No I/O in workflow code: use an activity.' },
      ],
    },
  },
  {
    // Libraries and activities never import an application.
    files: ['packages/**/*.ts', 'activities/**/*.ts', 'workflows/src/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: APPS, message: 'Packages, activities and workflows must not import an app.' }] }],
    },
  },
  {
    // The API answers requests: the browser engine (playwright-core, ~100 MB) belongs on browser workers.
    files: ['apps/api/**/*.ts'],
    ignores: TESTS,
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [{ name: '@wds/browser', message: 'The API must not load the browser engine.' }, { name: 'playwright-core', message: 'The API must not load the browser engine.' }],
        patterns: [{ group: ['@wds/worker', '@wds/worker/*', '@wds/server', '@wds/server/*'], message: 'An app must not import another app.' }],
      }],
    },
  },
  {
    // Configuration is read once per process, through zod, in the app's env.ts (each variable
    // with a JSDoc comment, from which docs/configuration.md is generated). PATH lookups (finding a binary) and passing the whole environment on to a child
    // process are not configuration and stay allowed.
    files: ['apps/**/*.ts', 'packages/**/*.ts', 'activities/**/*.ts', 'workflows/**/*.ts'],
    ignores: [...TESTS, '**/env.ts', 'packages/config/**', 'packages/test-utils/**'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: "MemberExpression[object.type='MemberExpression'][object.object.name='process'][object.property.name='env'][computed=false][property.name!='PATH']",
        message: "Read configuration in the app's env.ts (zod, with a JSDoc comment: docs/configuration.md is generated from it), and pass it in.",
      }, {
        selector: "MemberExpression[object.type='MemberExpression'][object.object.name='process'][object.property.name='env'][computed=true]",
        message: "Read configuration in the app's env.ts (zod, with a JSDoc comment: docs/configuration.md is generated from it), and pass it in.",
      }],
    },
  },
);
