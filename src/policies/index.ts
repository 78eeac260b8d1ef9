/**
 * RBAC policies: the oslo.policy rule language (lexer → parser → AST), the
 * layering of `conf.policy` rules with provenance, a linter, an evaluator
 * that explains its decisions, the actions × roles matrix, and the loaders
 * for override files and policy sets (`policies/<set>/`).
 * User documentation: docs/policies.md.
 */
export type { CheckExpr, GenericSubject, PolicyExpr, Span, Template, TemplatePart } from './ast.js';
export { formatCheck, formatExpr, referencedRules, walkExpr } from './ast.js';
export { PolicyError, PolicyFileError, PolicyLookupError, PolicySetError, PolicySyntaxError } from './errors.js';
export type { Token, TokenKind } from './lexer.js';
export { tokenize } from './lexer.js';
export { legacyLayout, locateInRule, parseCheck, parseLegacyRule, parseRule, parseRuleText } from './parser.js';
export type {
  Credentials,
  DeclaredRole,
  LayerKind,
  PolicyLayer,
  PolicySet,
  PolicyTarget,
  PolicyValue,
  RuleSource,
} from './types.js';
export type { EffectivePolicy, RuleDefinition, RuleHistoryEntry } from './policy.js';
export { defineRule, resolvePolicy, resolveSections } from './policy.js';
export type { Decision, EvaluateOptions, TraceNode } from './evaluator.js';
export { evaluate, lookup, pyStr, substitute } from './evaluator.js';
export type { DeclaredRoles, LintCode, LintFinding, LintOptions, LintSeverity, LintSummary } from './linter.js';
export { lintPolicy, lintResolved, sortFindings, summarize } from './linter.js';
export { actionVerb, isDiscoverableRule, isWriteAction, looksLikeAction, READ_VERBS, WELL_KNOWN_RULES, WRITE_VERBS } from './heuristics.js';
export type { MatrixCell, MatrixOptions, MatrixRow, OwnerContext, OwnerKey, PolicyMatrix, ScenarioExtras } from './matrix.js';
export { matrixActions, matrixCell, ownerKeys, ownerScenario, policyMatrix } from './matrix.js';
export { expandRoles, personaRoles } from './roles.js';
export type { PolicyFileOptions } from './loaders.js';
export {
  declaredRolesOf,
  enclosingPolicySet,
  listPolicySets,
  loadPolicyFile,
  loadPolicySet,
  loadPolicySetDir,
  parsePolicyPath,
  policyPathCandidates,
  POLICY_VALUES_PATH,
  policySetLayers,
  SET_DECLARATION,
} from './loaders.js';
export type { AppLintOptions, AppPolicies, ChartPolicy, SetChoice } from './app.js';
export {
  appCharts,
  appPolicyLayers,
  lintApp,
  loadAppPolicies,
  pickPolicy,
  pickSection,
  POLICY_PATH_ANNOTATION,
  resolveSetChoice,
} from './app.js';
export type { FileLintOptions, FilePolicy, FilePoliciesOptions } from './files.js';
export { lintFiles, loadFilePolicies } from './files.js';
export type { YamlFile } from './yaml-source.js';
export { parseYamlText, policyLayersAt, readYamlFile } from './yaml-source.js';
