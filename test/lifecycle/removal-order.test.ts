import { describe, expect, it } from 'vitest';
import { removalOrder } from '../../src/lifecycle/releases.js';

const release = (name: string, dependsOn: string[] = []) => ({ name, dependsOn });

describe('removal order', () => {
  it('removes dependants before what they depend on, keeps the table order otherwise, and ends on a cycle or an unknown name', () => {
    const order = removalOrder([
      release('nova', ['keystone', 'placement']),
      release('keystone', ['mariadb']),
      release('mariadb'),
      release('placement', ['keystone']),
      release('horizon', ['keystone', 'gone']),
    ]);
    expect(order.map((r) => r.name)).toEqual(['horizon', 'nova', 'placement', 'keystone', 'mariadb']);
    expect(removalOrder([release('a', ['b']), release('b', ['a'])]).map((r) => r.name)).toEqual(['a', 'b']);
  });

  it('takes a chain of any length (no recursion)', () => {
    const n = 100_000;
    // Listed last first, so that the first release's dependencies run the whole chain down.
    const order = removalOrder(Array.from({ length: n }, (_, i) => release(`r${n - 1 - i}`, i === n - 1 ? [] : [`r${n - 2 - i}`])));
    expect(order[0]!.name).toBe(`r${n - 1}`);
    expect(order[n - 1]!.name).toBe('r0');
  });
});
