/**
 * The operator's lifecycle of an app on a cluster: upload, apply, update,
 * remove, delete, abort, show, user overrides and diff. It talks to the
 * cluster only through src/kube.
 */
export { LifecycleError } from './errors.js';
export { kustomizationResources, planApply, UnknownApplyModeError, type ApplyPlan, type PlanOptions } from './plan.js';
