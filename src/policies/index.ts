/**
 * RBAC policies: the oslo.policy rule language (lexer → parser → AST), the
 * layering of `conf.policy` rules with provenance, a linter, an evaluator
 * that explains its decisions, the actions × roles matrix, and the loaders
 * for override files and policy sets (`policies/<set>/`).
 * User documentation: docs/policies.md.
 */
export type { CheckExpr, GenericSubject, PolicyExpr, Span, Template, TemplatePart } from './ast.js';
export { formatCheck, formatExpr } from './ast.js';
export { PolicyError, PolicyFileError, PolicyLookupError, PolicySetError, PolicySyntaxError } from './errors.js';
export type { Token, TokenKind } from './lexer.js';
export { tokenize } from './lexer.js';
export { parseCheck, parseLegacyRule, parseRule, parseRuleText } from './parser.js';
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
export { resolvePolicy } from './policy.js';
export type { Decision, EvaluateOptions, TraceNode } from './evaluator.js';
export { evaluate } from './evaluator.js';
export type { DeclaredRoles, LintCode, LintFinding, LintOptions, LintSeverity, LintSummary } from './linter.js';
export { lintPolicy, summarize } from './linter.js';
export { actionVerb, isWriteAction, looksLikeAction } from './heuristics.js';
export type { MatrixCell, MatrixOptions, MatrixRow, OwnerContext, OwnerKey, PolicyMatrix, ScenarioExtras } from './matrix.js';
export { matrixCell, policyMatrix } from './matrix.js';
export { expandRoles, personaRoles } from './roles.js';
export type { PolicyFileOptions } from './loaders.js';
export {
  enclosingPolicySet,
  loadPolicyFile,
  loadPolicySet,
  parsePolicyPath,
} from './loaders.js';
export type { AppLintOptions, AppPolicies, ChartPolicy, SetChoice } from './app.js';
export {
  appPolicyLayers,
  lintApp,
  loadAppPolicies,
  pickPolicy,
  pickSection,
} from './app.js';
export type { FileLintOptions, FilePolicy, FilePoliciesOptions } from './files.js';
export { lintFiles, loadFilePolicies } from './files.js';
export type { YamlFile } from './yaml-source.js';
export { parseYamlText, policyLayersAt } from './yaml-source.js';
