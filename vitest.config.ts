import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['test/**/*.e2e.test.ts'],
          // test/git runs real git servers: generous under load (CI machines have 2 cores)
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['e2e/**/*.test.ts', 'test/**/*.e2e.test.ts'],
          globalSetup: ['e2e/setup/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          // Tests share one control plane; files run in parallel (each uses its own namespaces).
          fileParallelism: true,
          maxWorkers: 2,
        },
      },
    ],
  },
});
