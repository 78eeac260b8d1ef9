/** Issue 13 item 3: values templates are strict in every position, and their errors say where and what, refused by build. */
import { describe, expect, it } from 'vitest';
import { tempDir, writeApp } from '../support/app-fixture.js';
import { failure, flotilla } from '../support/cli.js';

async function buildError(template: string): Promise<string> {
  const e = await failure('build', writeApp({ 'overrides/templates/web.yaml.hbs': template }), '-d', tempDir());
  expect(e.code).toBe(1);
  return e.stderr;
}

describe('strict values templates', () => {
  it('an absent path is an error in {{#if}} and in helper arguments, with the optional form named', async () => {
    expect(await buildError('conf:\n{{#if features.tls}}\n  tls: true\n{{/if}}\n')).toContain(
      'overrides/templates/web.yaml.hbs:2:7: error: release "web": "features.tls" is not set (templates are strict); read an optional value with (lookup features "tls")',
    );
    expect(await buildError('conf:\n  port: {{default main.port 80}}\n')).toContain(
      'overrides/templates/web.yaml.hbs:2:19: error: release "web": "main.port" is not set',
    );
  });

  it('a typo of a key that is set gets the key it meant, not a lookup of the typo', async () => {
    const said = await buildError('conf:\n  host: web.{{main.domian}}\n');
    expect(said).toContain(
      'overrides/templates/web.yaml.hbs:2:15: error: release "web": "main.domian" is not set (templates are strict); did you mean "main.domain"?',
    );
    expect(said).not.toContain('lookup main "domian"');
    expect(await buildError('conf:\n{{#if main.domian}}\n  a: 1\n{{/if}}\n')).toContain(
      '"main.domian" is not set (templates are strict); did you mean "main.domain"?',
    );
  });

  it('the documented optional form reads an absent path', async () => {
    const app = writeApp({
      'overrides/templates/web.yaml.hbs': 'conf:\n  port: {{default (lookup main "port") 80}}\n{{#if (lookup features "tls")}}\n  tls: true\n{{/if}}\n',
    });
    expect((await flotilla('overrides', app, 'web')).stdout).toContain('port: 80');
  });

  it('an unknown helper lists the helpers, nearest first', async () => {
    expect(await buildError('conf:\n  a: {{#iff main.domain}}1{{/iff}}\n')).toContain(
      'overrides/templates/web.yaml.hbs:2:6: error: release "web": unknown helper "iff"; did you mean "if"? (helpers: and, default, each, eq, if, includes, json, log, lookup, ne, not, or, unless, with)',
    );
  });

  it("Handlebars' parser messages become file:line and words", async () => {
    expect(await buildError('conf:\n  a: {{main.domain}\n')).toContain(
      'overrides/templates/web.yaml.hbs:2:19: error: release "web": template syntax error: unexpected character: an expression is not closed with }}',
    );
    expect(await buildError('conf:\n{{#if main.domain}}\n  a: 1\n')).toContain(
      'template syntax error: the template ends inside a block: a {{#…}} has no {{/…}}',
    );
    expect(await buildError('conf:\n{{#if main.domain}}\n  a: 1\n{{/each}}\n')).toContain(
      'overrides/templates/web.yaml.hbs:2:4: error: release "web": {{/each}} closes {{#if}}',
    );
  });

  it('several YAML documents are said plainly', async () => {
    expect(await buildError('conf:\n  a: 1\n---\nother:\n  b: 2\n')).toContain(
      'overrides/templates/web.yaml.hbs:3:1: error: release "web": the template renders 2 YAML documents (separated by ---); a values template must render one map',
    );
  });
});
