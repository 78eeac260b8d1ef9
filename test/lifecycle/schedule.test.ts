/**
 * The write schedule and the releases' own times (schedule.ts), in memory:
 * a release is due once every release of the apply it depends on is Ready;
 * --no-wait writes wave by wave; a release's time is its Helm timeout per
 * attempt plus Flux's overheads; the default bound is the critical path.
 */
import { describe, expect, it } from 'vitest';
import { criticalPathMs, DEPENDENCY_REQUEUE_MS, releaseTimeMs, SOURCE_FETCH_MS, WriteSchedule, type ScheduledRelease } from '../../src/lifecycle/schedule.js';

const OVERHEAD = DEPENDENCY_REQUEUE_MS + SOURCE_FETCH_MS;
const release = (key: string, dependsOn: string[] = [], spec: ScheduledRelease<string>['spec'] = {}): ScheduledRelease<string> => ({
  key,
  dependsOn,
  spec,
  object: key,
});
// The default app's shape: infra, keystone on infra, services on keystone, nova on services; `other/x` is outside the apply.
const APP = [
  release('os/mariadb'),
  release('os/rabbitmq'),
  release('os/keystone', ['os/mariadb', 'os/rabbitmq', 'other/x']),
  release('os/glance', ['os/keystone']),
  release('os/placement', ['os/keystone']),
  release('os/nova', ['os/glance', 'os/placement']),
];
const keys = (batch: readonly ScheduledRelease<string>[]) => batch.map((r) => r.key);

describe('the write schedule', () => {
  it('writes a release once everything of the apply it depends on is Ready', () => {
    const schedule = new WriteSchedule(APP);
    expect(keys(schedule.first())).toEqual(['os/mariadb', 'os/rabbitmq']);
    expect(keys(schedule.markReady('os/mariadb'))).toEqual([]);
    expect(keys(schedule.markReady('os/rabbitmq'))).toEqual(['os/keystone']);
    expect(keys(schedule.markReady('os/keystone'))).toEqual(['os/glance', 'os/placement']);
    expect(keys(schedule.markReady('os/placement'))).toEqual([]);
    expect(keys(schedule.markReady('os/glance'))).toEqual(['os/nova']);
    expect(keys(schedule.markReady('os/nova'))).toEqual([]);
  });

  it('writes the most urgent first: the longest chain of dependants ahead, then the most dependants, then the key', () => {
    // a1 leads a chain of three, b1 of two, c1 and c0 of one; d1 has one dependant, so it goes before c0 and c1.
    const graph = [
      release('root'),
      release('c0', ['root']),
      release('c1', ['root']),
      release('b1', ['root']),
      release('a1', ['root']),
      release('d1', ['root']),
      release('a2', ['a1']),
      release('a3', ['a2']),
      release('b2', ['b1', 'd1']),
    ];
    const schedule = new WriteSchedule(graph);
    expect(keys(schedule.first())).toEqual(['root']);
    expect(keys(schedule.markReady('root'))).toEqual(['a1', 'b1', 'd1', 'c0', 'c1']);
    expect(keys([...graph].sort(schedule.byUrgency))).toEqual(['root', 'a1', 'a2', 'b1', 'd1', 'a3', 'b2', 'c0', 'c1']);
    expect(WriteSchedule.waves(graph).map(keys)).toEqual([['root'], ['a1', 'b1', 'd1', 'c0', 'c1'], ['a2', 'b2'], ['a3']]);
  });

  it('without a wait, writes wave by wave', () => {
    expect(WriteSchedule.waves(APP).map(keys)).toEqual([['os/mariadb', 'os/rabbitmq'], ['os/keystone'], ['os/glance', 'os/placement'], ['os/nova']]);
    expect(WriteSchedule.waves([release('a', ['b']), release('b', ['a']), release('c')]).map(keys)).toEqual([['c'], ['a', 'b']]);
  });
});

describe("a release's own time", () => {
  it("is its Helm timeout for each attempt its remediation allows, plus Flux's overheads", () => {
    expect(releaseTimeMs({})).toBe(5 * 60_000 + OVERHEAD);
    expect(releaseTimeMs({ timeout: '30m', upgrade: { remediation: { retries: 3 } } })).toBe(4 * 30 * 60_000 + OVERHEAD);
    expect(releaseTimeMs({ timeout: '30m', upgrade: { timeout: '10m', remediation: { retries: 1 } } })).toBe(2 * 10 * 60_000 + OVERHEAD);
    expect(releaseTimeMs({ timeout: '1m', install: { remediation: { retries: 2 } } }, 'install')).toBe(3 * 60_000 + OVERHEAD);
    expect(releaseTimeMs({ timeout: '1m', upgrade: { remediation: { retries: -1 } } })).toBe(60_000 + OVERHEAD);
  });

  it('bounds the operation by the critical path through dependsOn', () => {
    const minutes = (m: number) => m * 60_000 + OVERHEAD;
    const timed = APP.map((r) => ({ ...r, spec: { timeout: r.key === 'os/nova' ? '45m' : r.key === 'os/glance' ? '20m' : '10m' } }));
    // mariadb 10 → keystone 10 → glance 20 → nova 45 is the longest chain.
    expect(criticalPathMs(timed)).toBe(minutes(10) + minutes(10) + minutes(20) + minutes(45));
    expect(criticalPathMs([])).toBe(0);
  });
});
