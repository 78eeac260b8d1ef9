// What eslint.config.js needs, resolved from this package (see package.json's description).
export { defineConfig } from 'eslint/config';
export { default as tseslint } from 'typescript-eslint';
