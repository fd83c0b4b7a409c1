// Lint rules for the whole repository. Formatting is Prettier's job (npm run format).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/', '.data/', '.tap/', 'bench/results/', 'docs/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      eqeqeq: ['error', 'always'],
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Benchmarks and scripts report on the console; scraper templates are user code that prints.
    files: ['bench/**', 'scripts/**', 'runner/helpers/node/templates/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The browser code of web/ (the Explore page, the account pages' scripts): plain ES modules run by
    // the browser (no bundler).
    files: ['web/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
