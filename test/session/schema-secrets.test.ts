/**
 * Values a chart's values.schema.json marks secret (`format: password`,
 * `writeOnly: true`) are redacted whatever their key is called, in the
 * session's redactor and in what the CLI prints, unless --show-secrets.
 */
import { describe, expect, it } from 'vitest';
import { Session } from '../../src/session/index.js';
import { schemaSecrecy } from '../../src/values/index.js';
import { flotilla } from '../support/cli.js';
import { simpleChart, writeApp } from '../support/app-fixture.js';

const SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { credential: { type: 'string', writeOnly: true } },
  properties: {
    pod: { type: 'object', properties: { replicas: { type: 'integer' } } },
    auth: { type: 'object', properties: { adminPass: { type: 'string', format: 'password' }, adminUser: { type: 'string' } } },
    tls: { type: 'object', writeOnly: true },
    users: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, credential: { $ref: '#/$defs/credential' } } } },
    extra: { type: 'object', additionalProperties: { anyOf: [{ type: 'string', format: 'password' }] } },
  },
};

const STATIC = `auth:
  adminPass: hunter2-static
  adminUser: admin
tls:
  cert: PEM-BODY-1
users:
  - name: alice
    credential: alice-pw-xyz
extra:
  dsn: dsn-pw-xyz
`;

describe('values a chart schema marks secret', () => {
  it('schemaSecrecy follows properties, items, $refs, additionalProperties and anyOf, and marks everything below a marked map', () => {
    const secret = schemaSecrecy(SCHEMA);
    expect(secret(['auth', 'adminPass'])).toBe(true);
    expect(secret(['auth', 'adminUser'])).toBe(false);
    expect(secret(['tls'])).toBe(true);
    expect(secret(['tls', 'cert'])).toBe(true);
    expect(secret(['users', 0, 'credential'])).toBe(true);
    expect(secret(['users', 0, 'name'])).toBe(false);
    expect(secret(['extra', 'anything'])).toBe(true);
    expect(secret(['pod', 'replicas'])).toBe(false);
    expect(secret(['unknown', 'path'])).toBe(false);
  });

  it('are redacted by the session whoever set them, and printed by `overrides` only with --show-secrets', async () => {
    const chart = simpleChart('web');
    const root = writeApp({ ...chart, 'charts/web/values.schema.json': JSON.stringify(SCHEMA), 'overrides/static/web.yaml': STATIC });
    const session = await Session.fromDirectory(root);
    const values = await session.releaseValues(session.app.graph.byName.get('web')!);
    const shown = session.redact(values.staticOverrides) as Record<string, Record<string, unknown>>;
    expect(shown.auth).toEqual({ adminPass: '<secret>', adminUser: 'admin' });
    expect(shown.tls).toEqual({ cert: '<secret>' });
    expect(shown.users).toEqual([{ name: 'alice', credential: '<secret>' }]);
    expect(shown.extra).toEqual({ dsn: '<secret>' });
    // A leaf printed on its own is found by where it sits.
    expect(session.redact('alice-pw-xyz', ['users', 0, 'credential'])).toBe('<secret>');

    const secrets = ['hunter2-static', 'PEM-BODY-1', 'alice-pw-xyz', 'dsn-pw-xyz'];
    for (const format of ['yaml', 'json']) {
      const { stdout } = await flotilla('overrides', root, 'web', '--explain', '--all', '-o', format);
      for (const secret of secrets) expect(stdout, `${format}: ${secret}`).not.toContain(secret);
      expect(stdout).toContain('admin');
    }
    const { stdout } = await flotilla('overrides', root, 'web', '--explain', '--all', '-o', 'json', '--show-secrets');
    for (const secret of secrets) expect(stdout).toContain(secret);
  });
});
