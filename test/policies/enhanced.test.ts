/**
 * The default app's "enhanced" policy set, as deployed: chart defaults, then
 * static overrides, then policies/enhanced/. Its expectations live in
 * enhanced-expectations.yaml (persona × action cells, and single requests).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  evaluate,
  expandRoles,
  lintApp,
  lintFiles,
  loadAppPolicies,
  matrixCell,
  personaRoles,
  pickPolicy,
  type AppPolicies,
  type PolicyValue,
} from '../../src/policies/index.js';

const repo = resolve(import.meta.dirname, '..', '..');

interface Check {
  action: string;
  roles: string[];
  creds?: Record<string, PolicyValue>;
  target?: Record<string, PolicyValue>;
  expect: 'allow' | 'deny';
}
interface Expectations {
  matrix?: Record<string, string>;
  checks?: Check[];
}

const table = parse(readFileSync(join(import.meta.dirname, 'enhanced-expectations.yaml'), 'utf8')) as Record<string, Expectations>;

let app: AppPolicies;
beforeAll(async () => {
  app = await loadAppPolicies(repo, { set: 'enhanced' });
});

describe('the enhanced set', () => {
  it('declares the four personas, in matrix order, and Keystone implied roles', () => {
    expect(app.set?.name).toBe('enhanced');
    expect(personaRoles(app.set!)).toEqual(['admin', 'project_admin', 'member', 'project_readonly']);
    expect([...app.set!.knownRoles.keys()]).toEqual(['reader', 'service']);
    expect(expandRoles(['admin'], app.set!.impliedRoles)).toEqual(['admin', 'member', 'reader']);
  });

  it('ships a file for keystone, glance, cinder, nova, neutron and horizon', () => {
    expect([...app.set!.files.keys()].sort()).toEqual(['cinder', 'glance', 'horizon', 'keystone', 'neutron', 'nova']);
  });

  it('has an expectation table for every service', () => {
    expect(Object.keys(table).filter((k) => !k.includes('/')).sort()).toEqual(['cinder', 'glance', 'keystone', 'neutron', 'nova']);
  });
});

for (const [scope, expectations] of Object.entries(table)) {
  const [chart = '', section] = scope.split('/');
  describe(`enhanced ${scope}`, () => {
    it('gives each persona the expected cell for each action', () => {
      const policy = pickPolicy(app, chart, section);
      const roles = personaRoles(app.set!);
      const actual: Record<string, string> = {};
      const expected: Record<string, string> = {};
      for (const [action, cells] of Object.entries(expectations.matrix ?? {})) {
        expect(policy.rules.has(action), `${scope} defines ${action}`).toBe(true);
        expected[action] = cells.trim().split(/\s+/).join(' ');
        actual[action] = roles.map((role) => matrixCell(policy, action, role, { implied: app.set!.impliedRoles })).join(' ');
      }
      expect(actual).toEqual(expected);
    });

    for (const check of expectations.checks ?? []) {
      const what = `${check.expect}s ${check.action} for ${check.roles.join('+')} with target ${JSON.stringify(check.target ?? {})}`;
      it(what, () => {
        const policy = pickPolicy(app, chart, section);
        const roles = expandRoles(check.roles, app.set!.impliedRoles);
        const decision = evaluate(policy, check.action, { ...(check.creds ?? {}), roles }, check.target ?? {}, { undefinedAction: 'error' });
        expect(decision.allowed ? 'allow' : 'deny').toBe(check.expect);
      });
    }
  });
}

describe('lint', () => {
  it('finds nothing in the set files on their own, not even a note', async () => {
    const dir = join(repo, 'policies', 'enhanced');
    const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).map((f) => join(dir, f));
    const { findings } = await lintFiles(files);
    expect(findings).toEqual([]);
  });

  it('finds no error or warning in the default app with the enhanced set', async () => {
    const { findings } = await lintApp(repo, { set: 'enhanced' });
    expect(findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it('finds no error or warning in the default app as its deployment spec selects', async () => {
    const { findings } = await lintApp(repo);
    expect(findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });
});
