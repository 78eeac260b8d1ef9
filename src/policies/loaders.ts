/**
 * Loaders: plain override files (a values file with `conf.policy`, as
 * StarlingX's enhanced-policy override files are, or a bare oslo.policy
 * policy.yaml), and policy sets (`policies/<set>/`).
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { isMap, isScalar, isSeq } from 'yaml';
import { PolicyFileError, PolicySetError } from './errors.js';
import { nearest } from '../names/index.js';
import type { DeclaredRoles } from './linter.js';
import type { DeclaredRole, LayerKind, PolicyLayer, PolicySet } from './types.js';
import { nodeAt, policyLayersAt, positionOf, readYamlFile, type YamlFile } from './yaml-source.js';

/** Where a chart's values keep their rules: flotilla's charts and most of openstack-helm's. */
export const POLICY_VALUES_PATH: readonly string[] = ['conf', 'policy'];

/**
 * Where to look for a chart's rule maps when nothing declares it: `conf.policy`,
 * then openstack-helm's dashboard convention `conf.<chart>.policy` (horizon keeps
 * one copy of each service's rules under `conf.horizon.policy.<service>`).
 */
export function policyPathCandidates(chart: string): (readonly string[])[] {
  return [POLICY_VALUES_PATH, ['conf', chart, 'policy']];
}

/** A dotted values path (`conf.horizon.policy`) as its keys. */
export function parsePolicyPath(dotted: string): readonly string[] {
  return dotted.split('.').filter((p) => p !== '');
}

/**
 * The rules' place in a values file nobody declared it for: `conf.policy`, or
 * else the openstack-helm convention `conf.<name>.policy` (the first such map).
 */
function detectPolicyPath(yaml: YamlFile): readonly string[] | undefined {
  if (nodeAt(yaml, POLICY_VALUES_PATH) !== undefined) return POLICY_VALUES_PATH;
  const conf = nodeAt(yaml, ['conf']);
  if (!isMap(conf)) return undefined;
  for (const pair of conf.items) {
    const name = isScalar(pair.key) ? String(pair.key.value) : undefined;
    if (name !== undefined && isMap(nodeAt(yaml, ['conf', name, 'policy']))) return ['conf', name, 'policy'];
  }
  return undefined;
}

/** The file that declares a set; every other `*.yaml` of the set folder is a chart's file. */
export const SET_DECLARATION = 'set.yaml';

const SET_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export interface PolicyFileOptions {
  /** Layer label; default: the file name. */
  readonly label?: string;
  readonly kind?: LayerKind;
  /**
   * Require `conf.policy` (values files: chart defaults, set files). When
   * false, a file without it whose top level holds only rules is read as a
   * bare oslo.policy file.
   */
  readonly requireValuesPath?: boolean;
  /** Where the rules are (e.g. conf.horizon.policy); default: conf.policy, or openstack-helm's conf.<name>.policy. */
  readonly valuesPath?: readonly string[];
}

/**
 * The policy layers of one file (one per section; see PolicyLayer).
 * A file whose `conf.policy` is absent gives no layers when
 * `requireValuesPath` is false and it holds no bare rules either.
 */
export async function loadPolicyFile(file: string, options: PolicyFileOptions = {}): Promise<PolicyLayer[]> {
  const yaml = await readYamlFile(file);
  return policyLayersOf(yaml, options);
}

function policyLayersOf(yaml: YamlFile, options: PolicyFileOptions = {}): PolicyLayer[] {
  const meta = { label: options.label ?? basename(yaml.file), kind: options.kind ?? 'override' };
  const path = options.valuesPath ?? detectPolicyPath(yaml);
  const layers = path ? policyLayersAt(yaml, path, meta) : undefined;
  if (layers) return layers;
  if (options.valuesPath) {
    if (options.requireValuesPath !== false) return [];
    throw new PolicyFileError(`no ${options.valuesPath.join('.')} map here`, { location: positionOf(yaml, 0) });
  }
  const root = yaml.doc.contents;
  if (options.requireValuesPath === false && isMap(root) && root.items.length > 0) {
    const bare = root.items.every((pair) => isScalar(pair.value) || isSeq(pair.value) || pair.value === null);
    if (bare) return policyLayersAt(yaml, [], meta) ?? [];
  }
  if (options.requireValuesPath === false) {
    throw new PolicyFileError('no conf.policy (nor conf.<chart>.policy) map here, and the file is not a bare policy file (a map of rules)', {
      location: positionOf(yaml, 0),
    });
  }
  return [];
}

/** The name of every set in `policies/` of an app, sorted. */
async function listPolicySets(appRoot: string): Promise<string[]> {
  try {
    const entries = await readdir(join(appRoot, 'policies'), { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && SET_NAME.test(e.name)).map((e) => e.name).sort();
  } catch {
    return [];
  }
}

/**
 * Reads `policies/<set>/`: the declaration `set.yaml` (description and
 * roles) and the chart files beside it. The files are not parsed here: the
 * values engine reads them as values layer 4, and `appPolicyLayers`
 * (app.ts) reads their rules from that layer.
 */
export async function loadPolicySet(appRoot: string, setName: string): Promise<PolicySet> {
  if (!SET_NAME.test(setName)) {
    throw new PolicySetError(`"${setName}" is not a policy set name (letters, digits, "-" and "_")`);
  }
  const dir = resolve(appRoot, 'policies', setName);
  const isDir = await stat(dir).then((s) => s.isDirectory(), () => false);
  if (!isDir) {
    const sets = await listPolicySets(appRoot);
    const guess = nearest(setName, sets);
    throw new PolicySetError(
      `no policy set "${setName}": ${relative(process.cwd(), dir) || dir} is not a folder` +
        (sets.length > 0 ? ` (sets: ${sets.join(', ')}${guess ? `; did you mean "${guess}"?` : ''})` : ''),
    );
  }
  return loadPolicySetDir(dir, setName);
}

/** Reads a set folder wherever it is; `setName` defaults to the folder's name. */
async function loadPolicySetDir(dir: string, setName: string = basename(dir)): Promise<PolicySet> {
  const declaration = join(dir, SET_DECLARATION);
  const exists = await stat(declaration).then((s) => s.isFile(), () => false);
  if (!exists) {
    throw new PolicySetError(`policy set "${setName}" has no ${SET_DECLARATION}: declare its roles there (see docs/policies.md)`, {
      location: { file: declaration, line: 0, column: 0 },
    });
  }
  const yaml = await readYamlFile(declaration);
  const { description, roles, knownRoles, impliedRoles, policyPaths } = readDeclaration(yaml, setName);
  const files = new Map<string, string>();
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const ext = extname(entry.name);
    if (!entry.isFile() || (ext !== '.yaml' && ext !== '.yml') || entry.name === SET_DECLARATION) continue;
    files.set(basename(entry.name, ext), join(dir, entry.name));
  }
  return { name: setName, dir, declaration, ...(description ? { description } : {}), roles, knownRoles, impliedRoles, policyPaths, files };
}

interface Declaration {
  readonly description?: string;
  readonly roles: Map<string, DeclaredRole>;
  readonly knownRoles: Map<string, DeclaredRole>;
  readonly impliedRoles: Map<string, string[]>;
  readonly policyPaths: Map<string, readonly string[]>;
}

const DECLARATION_KEYS = ['description', 'roles', 'knownRoles', 'impliedRoles', 'policyPaths'];

function readDeclaration(yaml: YamlFile, setName: string): Declaration {
  const root = yaml.doc.contents;
  const fail = (message: string, offset = 0): never => {
    throw new PolicySetError(`policy set "${setName}": ${message}`, { location: positionOf(yaml, offset) });
  };
  const offsetOf = (node: unknown): number => (node as { range?: number[] } | null)?.range?.[0] ?? 0;
  if (!isMap(root)) return fail('set.yaml must be a map with "roles" (and optionally "description", "knownRoles", "impliedRoles")');
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (!DECLARATION_KEYS.includes(key)) {
      const guess = nearest(key, DECLARATION_KEYS);
      fail(`unknown key "${key}" in set.yaml${guess ? ` (did you mean "${guess}"?)` : ''}`, offsetOf(pair.key));
    }
  }
  const descriptionNode = nodeAt(yaml, ['description']);
  let description: string | undefined;
  if (descriptionNode !== undefined) {
    if (!isScalar(descriptionNode) || typeof descriptionNode.value !== 'string') fail('"description" must be a string', offsetOf(descriptionNode));
    else description = descriptionNode.value;
  }
  const all = new Map<string, DeclaredRole>();
  const readRoles = (key: 'roles' | 'knownRoles', required: boolean): Map<string, DeclaredRole> => {
    const node = nodeAt(yaml, [key]);
    const roles = new Map<string, DeclaredRole>();
    const addRole = (name: unknown, roleDescription: unknown, offset: number): void => {
      if (typeof name !== 'string' || name === '' || /\s/.test(name)) fail(`a role name in "${key}" must be a non-empty word`, offset);
      const roleName = String(name);
      if (all.has(roleName.toLowerCase())) fail(`role "${roleName}" is declared twice`, offset);
      if (roleDescription !== undefined && roleDescription !== null && typeof roleDescription !== 'string') {
        fail(`the description of role "${roleName}" must be a string`, offset);
      }
      const role: DeclaredRole = {
        name: roleName,
        ...(typeof roleDescription === 'string' ? { description: roleDescription } : {}),
        location: positionOf(yaml, offset),
      };
      roles.set(roleName, role);
      all.set(roleName.toLowerCase(), role);
    };
    if (node === undefined && !required) return roles;
    if (isMap(node)) {
      for (const pair of node.items) {
        addRole(isScalar(pair.key) ? pair.key.value : undefined, isScalar(pair.value) ? pair.value.value : pair.value, offsetOf(pair.key));
      }
    } else if (isSeq(node)) {
      for (const item of node.items) {
        if (isScalar(item)) addRole(item.value, undefined, offsetOf(item));
        else if (isMap(item)) addRole(item.get('name'), item.get('description'), offsetOf(item));
        else fail(`each entry of "${key}" is a role name, or {name, description}`, offsetOf(item));
      }
    } else {
      fail(`set.yaml must declare "${key}" as a map of role name → description`, offsetOf(node));
    }
    if (required && roles.size === 0) fail(`"${key}" is empty: declare the roles the set's rules are written for`, offsetOf(node));
    return roles;
  };
  const roles = readRoles('roles', true);
  const knownRoles = readRoles('knownRoles', false);
  const impliedRoles = new Map<string, string[]>();
  const impliedNode = nodeAt(yaml, ['impliedRoles']);
  if (impliedNode !== undefined) {
    if (!isMap(impliedNode)) fail('"impliedRoles" must map a role to the roles it implies', offsetOf(impliedNode));
    else {
      for (const pair of impliedNode.items) {
        const name = isScalar(pair.key) ? String(pair.key.value) : '';
        const list = isSeq(pair.value) ? pair.value.items : isScalar(pair.value) ? [pair.value] : undefined;
        if (!list) fail(`"impliedRoles.${name}" must be a list of role names`, offsetOf(pair.value));
        const implied: string[] = [];
        for (const [what, node] of [[name, pair.key] as const, ...(list ?? []).map((n) => [isScalar(n) ? String(n.value) : '', n] as const)]) {
          if (!all.has(what.toLowerCase())) {
            const guess = nearest(what, [...all.values()].map((r) => r.name));
            fail(`"impliedRoles" names role "${what}", which neither "roles" nor "knownRoles" declares${guess ? ` (did you mean "${guess}"?)` : ''}`, offsetOf(node));
          }
          if (node !== pair.key) implied.push(what);
        }
        impliedRoles.set(name, implied);
      }
    }
  }
  const policyPaths = new Map<string, readonly string[]>();
  const pathsNode = nodeAt(yaml, ['policyPaths']);
  if (pathsNode !== undefined) {
    if (!isMap(pathsNode)) fail('"policyPaths" must map a chart to the dotted values path of its rules (horizon: conf.horizon.policy)', offsetOf(pathsNode));
    else {
      for (const pair of pathsNode.items) {
        const chart = isScalar(pair.key) ? String(pair.key.value) : '';
        const value = isScalar(pair.value) ? pair.value.value : undefined;
        if (typeof value !== 'string' || parsePolicyPath(value).length === 0) {
          fail(`"policyPaths.${chart}" must be a dotted values path such as conf.${chart}.policy`, offsetOf(pair.value ?? pair.key));
        }
        policyPaths.set(chart, parsePolicyPath(String(value)));
      }
    }
  }
  return { ...(description !== undefined ? { description } : {}), roles, knownRoles, impliedRoles, policyPaths };
}

/** The roles a set declares, as the linter takes them. */
export function declaredRolesOf(set: PolicySet): DeclaredRoles {
  return {
    names: [...set.roles.keys(), ...set.knownRoles.keys()],
    declaredBy: `policy set ${set.name} (${relative(process.cwd(), set.declaration) || set.declaration})`,
  };
}

/** The set whose folder holds `file` (a `set.yaml` beside it), if any. */
export async function enclosingPolicySet(file: string): Promise<PolicySet | undefined> {
  const dir = dirname(resolve(file));
  const hasDeclaration = await stat(join(dir, SET_DECLARATION)).then((s) => s.isFile(), () => false);
  if (!hasDeclaration) return undefined;
  return loadPolicySetDir(dir);
}
