import { dump } from 'js-yaml';

/**
 * YAML text for a plain value, the one way flotilla writes YAML it generates
 * (manifests, overrides): no anchors, and strings that YAML 1.1 readers such
 * as Helm would take for booleans or numbers ('yes', '0755') are quoted.
 */
export function dumpYaml(value: unknown): string {
  return dump(value, { noRefs: true });
}
