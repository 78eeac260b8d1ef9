/**
 * The deployment spec: main / features / common / services. The merged spec
 * is presets/<preset>.yaml → sizes/<size>.yaml → the deployment file, merged
 * with the values rules, so every spec value keeps the file:line that set it.
 */
import type { Diagnostic } from '../diagnostics/index.js';
import { toPlain, type ValueNode } from '../yaml/index.js';
import { mergeAll, type ClashSink } from '../values/index.js';
import type { DeploymentSpec } from '../plugins/api.js';
import { checkSchema, type JsonSchema, type SchemaChecker } from './schema-check.js';

// The plugin API describes the spec for plugins (it imports nothing of flotilla's); the app model uses that one type.
export type { DeploymentSpec };

const valuesHolder: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { values: { type: 'object' } },
};
const specSections = {
  features: { type: 'object' },
  common: {
    type: 'object',
    additionalProperties: false,
    properties: {
      charts: valuesHolder,
      groups: { type: 'object', additionalProperties: valuesHolder },
    },
  },
  services: {
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: valuesHolder },
  },
};
const name = { type: 'string', minLength: 1, pattern: '^[A-Za-z0-9._-]+$', expected: 'a file name without extension' };

export const deploymentSchema: JsonSchema = {
  $id: 'flotilla:deployment',
  type: 'object',
  additionalProperties: false,
  properties: {
    // Every field is optional: main.release only for an app with a version catalog (overrides/versions/).
    main: {
      type: 'object',
      additionalProperties: false,
      properties: {
        release: {
          type: 'string',
          minLength: 1,
          expected: 'a quoted release name such as "2025.1" (unquoted, 2025.1 is a number and 2024.10 would read as 2024.1)',
        },
        preset: name,
        size: name,
        domain: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$', expected: 'a DNS domain' },
        customImages: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
      },
    },
    ...specSections,
  },
};

/** Presets and sizes are partial specs: no `main`. */
export const specLayerSchema: JsonSchema = {
  $id: 'flotilla:spec-layer',
  type: 'object',
  additionalProperties: false,
  properties: specSections,
};

export interface SpecLayer {
  readonly label: string;
  readonly file: string;
  readonly root: ValueNode | undefined;
}

export function checkSpecLayer(layer: SpecLayer, isDeploymentFile: boolean, check: SchemaChecker = checkSchema): Diagnostic[] {
  return check(isDeploymentFile ? deploymentSchema : specLayerSchema, layer.root, layer.file);
}

/** Merges spec layers lowest first; a kind clash goes to `onClash` (the higher layer wins), or without it throws ValueClashError. */
export function mergeSpec(layers: readonly SpecLayer[], onClash?: ClashSink): { node: ValueNode | undefined; spec: DeploymentSpec } {
  const node = mergeAll(layers, onClash);
  const plain = (node ? toPlain(node) : {}) as unknown as Partial<DeploymentSpec>;
  const spec: DeploymentSpec = {
    main: { ...plain.main, release: plain.main?.release ?? '' },
    features: plain.features ?? {},
    common: plain.common ?? {},
    services: plain.services ?? {},
  };
  return { node, spec };
}

/** The services a spec turns on (`features.services`). */
export function enabledServices(spec: DeploymentSpec): ReadonlySet<string> {
  const list = spec.features.services;
  return new Set(Array.isArray(list) ? list.map(String) : []);
}

/** The policy set the spec selects (`features.policies`); "none" or nothing selects none. */
export function selectedPolicySet(spec: DeploymentSpec): string | undefined {
  const value = spec.features.policies;
  return typeof value === 'string' && value !== '' && value !== 'none' ? value : undefined;
}
