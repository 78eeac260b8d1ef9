import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Plugin files and their tests import the plugin API by its package name; from a checkout that is the source.
  resolve: { alias: { 'flotilla/plugin': new URL('./src/plugins/api.ts', import.meta.url).pathname } },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // The dev-cluster lifecycle tests share two cores with helm-heavy files: minutes under load, seconds alone.
    testTimeout: 240_000,
    hookTimeout: 300_000,
    // Two cores on CI: helm-heavy files run in parallel workers, two at a time.
    maxWorkers: 2,
  },
});
