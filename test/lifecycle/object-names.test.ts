/**
 * Names flotilla makes from an app's own words (its name, its version, a
 * plugin's password names) are names the API server takes, and two inputs
 * never share one.
 */
import { describe, expect, it } from 'vitest';
import { SecretPasswordStore, type KubeClient } from '../../src/kube/index.js';
import { payloadSecretName } from '../../src/lifecycle/payload.js';
import { isKubeObjectName } from '../../src/names/index.js';
import { checkPasswordName, PASSWORD_NAME_MAX } from '../../src/plugins/passwords.js';

describe('names made from an app', () => {
  it("a version's payload Secret: the plain name when it is one, else a valid name told apart by a digest, with room for every piece's index", () => {
    expect(payloadSecretName('flotilla-openstack', '25.03-0')).toBe('flotilla-bundle-flotilla-openstack-25.03-0');
    const app = 'a'.repeat(63);
    const versions = ['1.0-A', '1.0-a', '1.0-', '1..0', '1.0.', '2024.1+build.7', '2024.1-build.7', 'v'.repeat(300), `${'v'.repeat(299)}w`];
    const names = versions.map((version) => payloadSecretName(app, version));
    expect(new Set(names).size).toBe(versions.length);
    for (const [i, name] of names.entries()) {
      expect(isKubeObjectName(name), versions[i]).toBe(true);
      expect(isKubeObjectName(`${name}-9999999`), versions[i]).toBe(true);
    }
  });

  it("a password name leaves the Secret's name within 253 characters for any app name", () => {
    const longest = 'p'.repeat(PASSWORD_NAME_MAX);
    expect(() => checkPasswordName(longest)).not.toThrow();
    expect(() => checkPasswordName(`${longest}p`)).toThrow(
      'password name "' + `${longest}p` + '" must be at most 180 lower-case letters, digits and dashes (it names a Secret)',
    );
    const store = new SecretPasswordStore({} as Pick<KubeClient, 'core'>, 'openstack', 'a'.repeat(63));
    // The longest app name and the longest password name make a Secret name of exactly 253: the bound is tight.
    expect(store.secretName(longest)).toHaveLength(253);
    expect(isKubeObjectName(store.secretName(longest))).toBe(true);
  });
});
