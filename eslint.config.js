// Lint rules for the whole repository (`npm run lint`). Type-aware where it matters most: a
// promise nobody awaits or handles (an async route handler whose rejection nothing catches can
// end the process) is an error, as is a promise passed where a callback's result is ignored.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import eslintReact from '@eslint-react/eslint-plugin';
import reactHooks from 'eslint-plugin-react-hooks';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', '.cache/**', '.venv*/**', 'coverage/**', '**/node_modules/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // Control characters are exactly what several validators look for (field names, XML text,
      // redirect targets), so patterns that name them are intended.
      'no-control-regex': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // URLs come from one module (src/http/urls.ts) and the route tables, never from a literal
    // written where the link is made. Not yet converted: the admin site's browser components
    // (their bundle is rebuilt from their own folder only).
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['src/**/route-table.ts', 'src/http/urls.ts', 'src/admin/components/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'Literal[value=/^\\/api\\//]', message: "Build API paths with src/http/urls.ts, not an '/api/…' literal." },
        {
          selector: 'TemplateLiteral > TemplateElement:first-child[value.raw=/^\\/api\\//]',
          message: "Build API paths with src/http/urls.ts, not an '/api/…' template.",
        },
      ],
    },
  },
  {
    // The explorer's and the browsable page's scripts run in the browser (bundled by esbuild, see src/http/browser-bundle.ts).
    files: ['src/explorer/browser/**/*.ts', 'src/render/browser/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // The admin site's React components run in the browser (bundled by AdminJS).
    files: ['src/admin/components/**/*.{ts,tsx}'],
    ...eslintReact.configs['recommended-typescript'],
    languageOptions: { globals: { ...globals.browser }, parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  {
    files: ['src/admin/components/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
);
