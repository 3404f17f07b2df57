import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One Redis for the run (found or started here), handed to tests with inject('redisUrl').
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more parallel files only make the integration tests slower and flakier.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
