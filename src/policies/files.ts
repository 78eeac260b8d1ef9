/**
 * Policies given as plain files, outside an app: StarlingX-style override
 * files (`conf.policy`, or the dashboard's `conf.horizon.policy.<service>`),
 * bare oslo.policy files, or a set's chart files.
 * Each file is one service's policy on its own, unless `stack` asks to stack
 * them, in the order given, as layers of one policy. `defaults` files go
 * beneath every policy. A set declaration (`set.yaml`) among the files is
 * not a policy: it gives the roles.
 */
import { basename } from 'node:path';
import { lintResolved, sortFindings, type DeclaredRoles, type LintFinding } from './linter.js';
import { declaredRolesOf, enclosingPolicySet, loadPolicyFile, SET_DECLARATION } from './loaders.js';
import { resolveSections, type EffectivePolicy } from './policy.js';
import type { PolicyLayer, PolicySet } from './types.js';

export interface FilePoliciesOptions {
  /** Files holding the rules the overrides apply to (a chart's values.yaml, a service's policy.yaml). */
  readonly defaults?: readonly string[];
  /** Stack the files as layers of one policy instead of reading each on its own. */
  readonly stack?: boolean;
  /** Where the files keep their rules (e.g. conf.horizon.policy); default: conf.policy, else openstack-helm's conf.<name>.policy. */
  readonly valuesPath?: readonly string[];
}

/** One policy read from files. */
export interface FilePolicy {
  /** The file, or the files joined with " + " when stacked. */
  readonly label: string;
  readonly layers: readonly PolicyLayer[];
  readonly sections: ReadonlyMap<string, EffectivePolicy>;
  /** The set the files belong to (a `set.yaml` beside them), which declares the roles. */
  readonly set?: PolicySet;
}

export async function loadFilePolicies(files: readonly string[], options: FilePoliciesOptions = {}): Promise<FilePolicy[]> {
  const base: PolicyLayer[] = [];
  for (const file of options.defaults ?? []) {
    base.push(...(await loadPolicyFile(file, { label: `defaults ${basename(file)}`, kind: 'defaults', requireValuesPath: false })));
  }
  const policyFiles = files.filter((f) => basename(f) !== SET_DECLARATION);
  const groups = options.stack ? [policyFiles] : policyFiles.map((f) => [f]);
  const out: FilePolicy[] = [];
  for (const group of groups) {
    const layers = [...base];
    let set: PolicySet | undefined;
    for (const file of group) {
      layers.push(...(await loadPolicyFile(file, { label: basename(file), kind: 'override', requireValuesPath: false, ...(options.valuesPath ? { valuesPath: options.valuesPath } : {}) })));
      set ??= await enclosingPolicySet(file);
    }
    out.push({ label: group.join(' + '), layers, sections: resolveSections(layers), ...(set ? { set } : {}) });
  }
  return out;
}

export interface FileLintOptions extends FilePoliciesOptions {
  /** Roles rules may check; default: those of the set the files belong to, if any. */
  readonly declaredRoles?: DeclaredRoles;
}

export async function lintFiles(files: readonly string[], options: FileLintOptions = {}): Promise<{ findings: LintFinding[]; policies: FilePolicy[] }> {
  const policies = await loadFilePolicies(files, options);
  const findings: LintFinding[] = [];
  for (const policy of policies) {
    const declared = options.declaredRoles ?? (policy.set ? declaredRolesOf(policy.set) : undefined);
    for (const [section, effective] of policy.sections) {
      findings.push(...lintResolved(effective, { ...(section ? { scope: section } : {}), ...(declared ? { declaredRoles: declared } : {}) }));
    }
  }
  return { findings: sortFindings(findings), policies };
}
