// ESLint holds what the code must follow (../STYLE.md "Holding the layers", docs/architecture.md):
// type-aware rules of typescript-eslint (no floating promises, no unused code), and the layers:
// only repositories and the db layer import the Prisma client or pg, and the domain modules do
// not reach into the real-time layer or the workers, nor, outside routes, into Fastify. `npm run
// lint` runs it; CI too (.ci/run).
import js from '@eslint/js'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import tseslint from 'typescript-eslint'

/** Who may import the database drivers: repositories (a module's may be split into `<part>-repo.ts`), the db layer and its plugin. */
const DATABASE_LAYER = ['src/**/repo.ts', 'src/**/*-repo.ts', 'src/db/**', 'src/plugins/db.ts']

const databaseImports = {
  paths: [{ name: 'pg', message: 'Only repositories (repo.ts) and src/db talk to PostgreSQL.', allowTypeImports: true }],
  patterns: [
    { group: ['@prisma/*', '**/generated/prisma', '**/generated/prisma/**'], message: 'Only repositories (repo.ts) and src/db use the Prisma client.', allowTypeImports: true },
    { group: ['**/db/client.ts'], message: 'Only repositories (repo.ts) and src/db use the database client.', allowTypeImports: true },
  ],
}

/** Another module's repository: go through that module's service instead. */
const otherRepo = (group) => ({ group, message: "A module's repository belongs to its own service: call the other module's service." })

/** The Fastify instance stays in routes and plugins; a module's services take a ServiceContext (src/modules/context.ts). */
const fastifyImports = {
  group: ['fastify', 'fastify/*', 'fastify-plugin'],
  message: "Only a module's routes.ts uses Fastify; services and repositories take a ServiceContext (src/modules/context.ts).",
}

const layerImports = {
  patterns: [
    ...databaseImports.patterns,
    { group: ['**/plugins/auth.ts'], message: 'Who is calling, and what their role allows, is src/modules/identity; the auth plugin only turns credentials into principals.' },
    otherRepo(['../*/repo.ts', '../*/repo', '../*/*-repo.ts']),
    {
      group: ['**/realtime/*', '!**/realtime/frames.ts', '**/workers/*'],
      message: 'Domain modules emit events (src/events); they do not reach into the real-time layer or the workers.',
      allowTypeImports: true,
    },
  ],
  paths: databaseImports.paths,
}

const KEY_MESSAGE = "Use the feature's key factory (queries.ts) for a query key, not an array written here."

/** A query key written as an array where it is used, instead of taken from a key factory. */
const literalQueryKeys = [
  { selector: "Property[key.name='queryKey'] > ArrayExpression.value", message: KEY_MESSAGE },
  { selector: "JSXAttribute[name.name='queryKey'] > JSXExpressionContainer > ArrayExpression", message: KEY_MESSAGE },
  { selector: "CallExpression[callee.property.name=/^(get|set)Query(Data|State)$/][arguments.0.type='ArrayExpression']", message: KEY_MESSAGE },
]

/** `api.GET(…)` and the other methods of the SDK client, called in a component file. */
const inlineApiCalls = [
  {
    selector: "CallExpression[callee.object.name='api'][callee.property.name=/^(GET|POST|PUT|PATCH|DELETE)$/]",
    message: "Call the API through a named function or hook in the feature's queries.ts, not inline in a component.",
  },
]

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'src/generated/**', 'src/sdk/schema.d.ts', 'data/**', 'coverage/**', '.tap/**', 'deploy/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs', 'scripts/bench/*.mjs', 'src/web/vite.config.ts'] }, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Request bodies, JSON and test payloads are `unknown`/`any` at the edges by nature; the
      // schemas (TypeBox) check them, and these rules would only add casts.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
    },
  },
  {
    files: ['src/web/**/*.tsx', 'src/web/**/*.ts'],
    languageOptions: { globals: globals.browser },
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    // The web UI's cache keys come from the key factories in each feature's queries.ts, so what
    // one component sets or invalidates is what another reads (docs/decisions.md).
    files: ['src/web/**/*.ts'],
    ignores: ['src/web/**/queries.ts'],
    rules: { 'no-restricted-syntax': ['error', ...literalQueryKeys] },
  },
  {
    // Components call the API through their feature's queries.ts, never inline.
    files: ['src/web/**/*.tsx'],
    rules: { 'no-restricted-syntax': ['error', ...inlineApiCalls, ...literalQueryKeys] },
  },
  {
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    ignores: DATABASE_LAYER,
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { ...databaseImports, patterns: [...databaseImports.patterns, otherRepo(['**/modules/*/repo.ts', '**/modules/*/*-repo.ts'])] }] },
  },
  {
    files: ['src/modules/**/*.ts'],
    ignores: DATABASE_LAYER,
    rules: { '@typescript-eslint/no-restricted-imports': ['error', layerImports] },
  },
  {
    files: ['src/modules/**/*.ts'],
    ignores: [...DATABASE_LAYER, 'src/modules/**/routes.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { ...layerImports, patterns: [...layerImports.patterns, fastifyImports] }] },
  },
  {
    // The real-time layer delivers events; the workers deliver them elsewhere. Neither depends on
    // the other (what both need, such as PublishedMarks, lives in src/events).
    files: ['src/realtime/**/*.ts'],
    ignores: DATABASE_LAYER,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          ...databaseImports,
          patterns: [
            ...databaseImports.patterns,
            otherRepo(['**/modules/*/repo.ts', '**/modules/*/*-repo.ts']),
            { group: ['**/workers/*'], message: 'The real-time layer does not import the workers; put what both use in src/events.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/modules/**/repo.ts', 'src/modules/**/*-repo.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [...layerImports.patterns.slice(-2), fastifyImports] }] },
  },
  {
    // Outside the modules, only a layer's own repo.ts talks to the database; modules' repos are
    // reached through their services.
    files: ['src/realtime/**/repo.ts', 'src/workers/repo.ts', 'src/events/repo.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [otherRepo(['**/modules/*/repo.ts', '**/modules/*/*-repo.ts'])] }] },
  },
  {
    files: ['test/**/*.test.ts'],
    // Test bodies read JSON answers; the kit (test/support) and the helpers stay typed.
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests and benchmarks drive the real server and databases directly, on purpose.
    files: ['test/**', 'scripts/**'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      // tap runs a file's top-level t.test() calls itself; every other promise must be handled.
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', name: 'test', package: '@tapjs/test' }] }],
    },
  },
)
