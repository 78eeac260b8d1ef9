import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Plugin files and their tests import the plugin API by its package name; from a checkout that is the source.
  resolve: { alias: { 'flotilla/plugin': new URL('./src/plugins/api.ts', import.meta.url).pathname } },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores on CI: helm-heavy files run in parallel workers, two at a time.
    maxWorkers: 2,
  },
});
