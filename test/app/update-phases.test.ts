/**
 * `updatePhases` of fluxcd/releases.yaml (src/app/update-phases.ts): what
 * loading refuses, each at its line, and the rule saying in which phase a
 * release is written and each of its image fields changes — on a small app
 * and on the default app's declaration.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assignPhases, loadApp } from '../../src/app/index.js';
import { writeApp } from '../support/app-fixture.js';

const TABLE = `defaults:\n  namespace: demo\nreleases:\n  - {name: db, chart: db, service: database}\n  - {name: web, chart: web, service: frontend, dependsOn: [db]}\n`;
const withPhases = (phases: string) => writeApp({ 'fluxcd/releases.yaml': `${TABLE}updatePhases:\n${phases}` });
const loadError = async (phases: string) => {
  const error = await loadApp(withPhases(phases)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  return (error as Error).message;
};

describe('update phases', () => {
  it('loads the phases as written', async () => {
    const app = await loadApp(withPhases(`  - {name: data, releases: [db]}\n  - {name: rest, rest: true}\n  - {name: late, images: [web]}\n`));
    expect(app.updatePhases.map((p) => [p.name, p.releases, p.images, p.rest, p.location.line])).toEqual([
      ['data', ['db'], [], false, 7],
      ['rest', [], [], true, 8],
      ['late', [], ['web'], false, 9],
    ]);
  });

  it('refuses unknown releases and image fields, a release or field in two phases, two rest phases, an empty phase, a release in no phase', async () => {
    expect(await loadError(`  - {name: data, releases: [dbx]}\n  - {name: other, rest: true}\n`)).toContain(
      'fluxcd/releases.yaml:7:5: error: updatePhases[0] (data): no release "dbx"; did you mean "db"? (releases: db, web)',
    );
    expect(await loadError(`  - {name: data, images: [webb]}\n  - {name: other, rest: true}\n`)).toContain(
      'updatePhases[0] (data): no image field "webb"; did you mean "web"? (image fields: db, web)',
    );
    expect(await loadError(`  - {name: a, releases: [db]}\n  - {name: b, releases: [db, web]}\n`)).toContain(
      'fluxcd/releases.yaml:8:5: error: updatePhases[1] (b): release db is in phase a already',
    );
    expect(await loadError(`  - {name: a, images: [web], rest: true}\n  - {name: b, images: [web], rest: true}\n`)).toMatch(
      /updatePhases\[1\] \(b\): rest: true is already the phase a's[\s\S]*updatePhases\[1\] \(b\): image field web is in phase a already/,
    );
    expect(await loadError(`  - {name: a, releases: [db]}\n  - {name: b}\n`)).toContain(
      'updatePhases[1] (b): names no release, no image field and is not rest: true',
    );
    expect(await loadError(`  - {name: a, releases: [db]}\n  - {name: a, images: [db]}\n`)).toContain(
      'updatePhases[1] (a): the name is used by updatePhases[0] too',
    );
    expect(await loadError(`  - {name: a, images: [web]}\n`)).toContain(
      "updatePhases: release(s) db, web are in no phase; name them in a phase's releases, or give one phase rest: true",
    );
    expect(await loadError(`  - {name: Data, releases: [db, web]}\n`)).toContain('expected a phase name (DNS-1123 label, e.g. dataplane)');
  });

  it('writes a release in its own phase, an image field a phase names in that phase, the rest in the rest phase', () => {
    const phase = (name: string, fields: Partial<{ releases: string[]; images: string[]; rest: boolean }>) => ({
      name,
      releases: [],
      images: [],
      rest: false,
      location: { file: 'f', line: 1, column: 1 },
      ...fields,
    });
    const assignment = assignPhases([
      phase('db', { releases: ['db'] }),
      phase('control', { rest: true }),
      phase('data', { releases: ['compute'], images: ['agent'] }),
    ]);
    expect(assignment.home('db')).toBe(0);
    expect(assignment.home('api')).toBe(1);
    expect(assignment.home('compute')).toBe(2);
    expect(assignment.imagePhase('api', 'api')).toBe(1);
    expect(assignment.imagePhase('api', 'agent')).toBe(2);
    expect(assignment.imagePhase('db', 'agent')).toBe(2);
    // A field named by an earlier phase than its release's changes there.
    expect(assignPhases([phase('early', { images: ['api'] }), phase('rest', { rest: true })]).imagePhase('api', 'api')).toBe(0);
  });

  it("the default app's phases: OVN control plane → OVN data plane → RabbitMQ → MariaDB → Memcached → Keystone → the rest of the control plane → the data plane", async () => {
    const app = await loadApp(resolve(import.meta.dirname, '..', '..'));
    expect(app.updatePhases.map((p) => p.name)).toEqual([
      'ovn-control-plane',
      'ovn-dataplane',
      'rabbitmq',
      'mariadb',
      'memcached',
      'keystone',
      'control-plane',
      'dataplane',
    ]);
    const assignment = assignPhases(app.updatePhases);
    const at = (release: string, field: string) => app.updatePhases[assignment.imagePhase(release, field)]?.name;
    expect([
      at('ovn', 'ovn_northd'),
      at('ovn', 'ovn_controller'),
      at('rabbitmq', 'rabbitmq'),
      at('mariadb', 'mariadb'),
      at('memcached', 'memcached'),
      at('keystone', 'keystone_api'),
    ]).toEqual(['ovn-control-plane', 'ovn-dataplane', 'rabbitmq', 'mariadb', 'memcached', 'keystone']);
    expect([at('glance', 'glance_api'), at('nova', 'nova_api'), at('neutron', 'neutron_server'), at('horizon', 'horizon')]).toEqual([
      'control-plane',
      'control-plane',
      'control-plane',
      'control-plane',
    ]);
    expect([at('nova', 'nova_compute'), at('nova', 'libvirt'), at('neutron', 'neutron_ovn_metadata')]).toEqual(['dataplane', 'dataplane', 'dataplane']);
  });
});
