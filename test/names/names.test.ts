import { describe, expect, it } from 'vitest';
import { isDns1123Label, isHelmReleaseName, isLabelCharacters } from '../../src/names/index.js';

describe('names Kubernetes and Helm take', () => {
  it('a DNS-1123 label is at most 63 characters; a name of its characters may be longer; a release name at most 53', () => {
    expect(isDns1123Label('a'.repeat(63))).toBe(true);
    expect(isDns1123Label('a'.repeat(64))).toBe(false);
    expect(isLabelCharacters('a'.repeat(64))).toBe(true);
    for (const bad of ['', '-a', 'a-', 'A', 'a_b', 'a.b']) {
      expect(isDns1123Label(bad), bad).toBe(false);
      expect(isLabelCharacters(bad), bad).toBe(false);
    }
    expect(isHelmReleaseName('r'.repeat(53))).toBe(true);
    expect(isHelmReleaseName('r'.repeat(54))).toBe(false);
  });
});
