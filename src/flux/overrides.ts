/**
 * The two overrides Secrets of a release, the one place their names and keys
 * are made: `<release>-static-overrides` (layer 1, shipped) and
 * `<release>-system-overrides` (layers 2–8, written by flotilla). A
 * HelmRelease reads both through `valuesFrom`, static first so the system
 * overrides win; the kustomization generates both from files of the same name.
 */
export type OverridesKind = 'static' | 'system';

/** In Flux's merge order: later wins. */
export const OVERRIDES_KINDS: readonly OverridesKind[] = ['static', 'system'];

/** The Secret's name, `<release>-<kind>-overrides` (release = HelmRelease name). */
export function overridesSecretName(release: string, kind: OverridesKind): string {
  return `${release}-${kind}-overrides`;
}

/** The key of the values inside the Secret, and the name of the file the kustomization generates it from. */
export function overridesValuesKey(release: string, kind: OverridesKind): string {
  return `${overridesSecretName(release, kind)}.yaml`;
}

export interface ValuesFromSecret {
  readonly kind: 'Secret';
  readonly name: string;
  readonly valuesKey: string;
}

/** `spec.valuesFrom` of a release's HelmRelease: exactly these, in this order. */
export function overridesValuesFrom(release: string): ValuesFromSecret[] {
  return OVERRIDES_KINDS.map((kind) => ({ kind: 'Secret', name: overridesSecretName(release, kind), valuesKey: overridesValuesKey(release, kind) }));
}
