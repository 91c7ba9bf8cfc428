import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.tools/', '.cluster/', 'dist/', 'coverage/', 'bench/.work/', '.e2e/', '.image/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // core/ is pure: no I/O libraries.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@kubernetes/*',
                'simple-git',
                'node:fs*',
                'node:net',
                'node:http*',
                'node:child_process',
                'fs',
                'pino',
              ],
              message: 'src/core is pure: decide here, do in src/adapters.',
            },
            {
              group: ['**/adapters/**', '**/controller/**', '**/engine/**'],
              message: 'src/core must not depend on outer layers.',
            },
          ],
        },
      ],
    },
  },
);
