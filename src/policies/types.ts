/**
 * The domain of the policies module: rules as written in a file (with where
 * they were written), layers of rules as Helm values stack them, and the
 * policy sets an app ships.
 */
import type { Diagnostic, SourceLocation } from '../diagnostics/index.js';

/**
 * One rule value as written in a file. `text` is the rule as oslo.policy
 * reads it (`""` allows everyone). A rule written in the legacy
 * list-of-lists form keeps its items in `legacy`; `text` then holds an
 * equivalent text form for display.
 */
export interface RuleSource {
  readonly name: string;
  readonly text: string;
  /** Where the rule text starts (first character after an opening quote). */
  readonly location: SourceLocation;
  /** Where the rule's name (the map key) is written. */
  readonly keyLocation?: SourceLocation;
  /** Legacy form: outer list joined by `or`, inner lists by `and`; each item one check. */
  readonly legacy?: readonly (readonly string[])[];
  /**
   * Maps an index into `text` to a file position. When absent the rule is
   * taken to sit on one line: column = `location.column + index`.
   */
  readonly locate?: (index: number) => SourceLocation;
}

/** What a layer is for: the chart's own defaults, or something written to change them. */
export type LayerKind = 'defaults' | 'override';

/**
 * The `conf.policy` rules one values layer sets for one chart, lowest layer
 * first when several are given. Charts that keep one rule map per service
 * (horizon's copies of every service's policy) give one layer per `section`;
 * every other chart uses the section `""`.
 */
export interface PolicyLayer {
  /** Human name of the layer: "chart defaults", "static", "policy set enhanced", or the file name. */
  readonly label: string;
  readonly file: string;
  readonly kind: LayerKind;
  readonly section: string;
  readonly rules: ReadonlyMap<string, RuleSource>;
  /** Rules this layer deletes by setting them to `null` (Helm deletes the key). */
  readonly removed?: ReadonlyMap<string, SourceLocation>;
  /** Problems found while reading the layer (values that are not rules, YAML traps). */
  readonly problems?: readonly Diagnostic[];
}

/** A role a policy set declares, with its description and where it is declared. */
export interface DeclaredRole {
  readonly name: string;
  readonly description?: string;
  readonly location: SourceLocation;
}

/**
 * A policy set: `policies/<set>/set.yaml` declaring the set's roles, and one
 * values file per chart (`policies/<set>/<chart>.yaml`) holding `conf.policy`.
 * The values engine reads `files` as values layer 4.
 */
export interface PolicySet {
  readonly name: string;
  readonly dir: string;
  readonly description?: string;
  /** The set declaration file (`set.yaml`). */
  readonly declaration: string;
  /** The roles the set is written for, in declaration order (the columns of `policy matrix`). */
  readonly roles: ReadonlyMap<string, DeclaredRole>;
  /**
   * Other roles rules may check without being written for them: Keystone's
   * own (`reader`) and service users' (`service`), used by chart defaults.
   */
  readonly knownRoles: ReadonlyMap<string, DeclaredRole>;
  /**
   * Keystone implied roles: a token carrying the key also carries the
   * listed roles (`admin: [member]`, `member: [reader]`). `policy check`
   * and `policy matrix` give the caller the implied roles too.
   */
  readonly impliedRoles: ReadonlyMap<string, readonly string[]>;
  /** Chart name → values path of its rule maps, where it is not conf.policy (`horizon: conf.horizon.policy`). */
  readonly policyPaths: ReadonlyMap<string, readonly string[]>;
  /** Chart name → absolute path of that chart's policy values file. */
  readonly files: ReadonlyMap<string, string>;
}

/** A value in credentials or a target, as oslo.policy sees Python values. */
export type PolicyValue =
  | string
  | number
  | boolean
  | null
  | readonly PolicyValue[]
  | { readonly [key: string]: PolicyValue };

/** The caller: `roles`, `project_id`, `user_id`, … (oslo.context's policy values). */
export type Credentials = { readonly [key: string]: PolicyValue };

/** The object acted upon: `project_id`, `user_id`, `target.user.id`, … */
export type PolicyTarget = { readonly [key: string]: PolicyValue };
