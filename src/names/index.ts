/**
 * Names, durations and sizes in the forms Kubernetes, Helm and Flux accept, defined
 * once: as patterns for the JSON schemas of src/app and src/build, and as
 * checks for code that reads them elsewhere (import, plugins).
 */

/**
 * The characters of a DNS-1123 label: lower-case letters, digits and inner
 * dashes. A label (a namespace, a label value, an app name) is also at most
 * {@link DNS1123_LABEL_MAX} long: a schema gives both (pattern and
 * maxLength); names of other lengths (charts, Secrets) use the pattern alone.
 */
const LABEL_CHARACTERS = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
/** A DNS-1123 subdomain: labels joined by dots (an object name; a label key's prefix). */
const SUBDOMAIN = `${LABEL_CHARACTERS}(\\.${LABEL_CHARACTERS})*`;
/** A name of a label's characters, of any length (a chart, a release: their own bounds apply); a label also needs {@link DNS1123_LABEL_MAX}. */
export const LABEL_CHARACTERS_PATTERN = `^${LABEL_CHARACTERS}$`;
const DNS1123_LABEL = new RegExp(LABEL_CHARACTERS_PATTERN);

/** A DNS-1123 label's length at most: Kubernetes refuses a longer namespace or label value. */
export const DNS1123_LABEL_MAX = 63;

/** The schema of a DNS-1123 label (a namespace, an app name): its characters and its length. */
export const DNS1123_LABEL_SCHEMA = { type: 'string', pattern: LABEL_CHARACTERS_PATTERN, maxLength: DNS1123_LABEL_MAX } as const;

/** The longest Kubernetes object name (a DNS-1123 subdomain). */
export const KUBE_OBJECT_NAME_MAX = 253;

const KUBE_OBJECT_NAME_PATTERN = `^${SUBDOMAIN}$`;
const DNS1123_SUBDOMAIN = new RegExp(KUBE_OBJECT_NAME_PATTERN);

/** The schema of a Kubernetes object name (a HelmRepository's): {@link isKubeObjectName} as a schema. */
export const KUBE_OBJECT_NAME_SCHEMA = {
  type: 'string',
  pattern: KUBE_OBJECT_NAME_PATTERN,
  maxLength: KUBE_OBJECT_NAME_MAX,
  expected: `a Kubernetes object name (lower-case letters, digits, dashes and dots, at most ${KUBE_OBJECT_NAME_MAX} long)`,
} as const;

/** A Kubernetes object name: a DNS-1123 subdomain (labels of a label's characters joined by dots), at most 253 long. */
export function isKubeObjectName(name: string): boolean {
  return name.length <= KUBE_OBJECT_NAME_MAX && DNS1123_SUBDOMAIN.test(name);
}

/** {@link isFileNamePart}'s rule in words, for messages. */
export const FILE_NAME_PART_RULE = 'letters, digits, ., _, + and -, at most 128, a letter or digit first';
const FILE_NAME_PART = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/;

/**
 * A part of a file name taken from an app's own words (its version in
 * `<app_name>-<app_version>.tgz`, a pulled bundle's app and version): no
 * slash, nothing that climbs out of a folder, no hidden-file dot first.
 */
export function isFileNamePart(text: string): boolean {
  return FILE_NAME_PART.test(text);
}

/** Helm refuses release names longer than this. */
export const HELM_RELEASE_NAME_MAX = 53;

/**
 * The most a Secret's or a ConfigMap's data may hold, its values' bytes
 * together (decoded): the API server refuses more ("Too long").
 */
export const KUBE_DATA_MAX_BYTES = 1024 * 1024;

/** A label's value: empty, or at most 63 letters, digits, '-', '_' and '.', a letter or digit at each end. */
const LABEL_VALUE_PATTERN = '^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$';

/**
 * A label's key: a name like a value's (not empty), after an optional
 * prefix, a DNS subdomain of at most 253 characters, and a slash.
 */
const LABEL_KEY_PATTERN = `^((?=[^/]{1,253}/)${SUBDOMAIN}/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`;

/** The schemas of a label's value and key, and of the labels and annotations maps the API server takes. */
export const LABEL_VALUE_SCHEMA = {
  type: 'string',
  pattern: LABEL_VALUE_PATTERN,
  expected: 'a label value: at most 63 letters, digits, -, _ or ., a letter or digit at each end',
} as const;
const LABEL_KEY_SCHEMA = { pattern: LABEL_KEY_PATTERN, expected: 'a label key: [prefix/]name, the name at most 63 letters, digits, -, _ or .' } as const;
export const LABELS_SCHEMA = { type: 'object', propertyNames: LABEL_KEY_SCHEMA, additionalProperties: LABEL_VALUE_SCHEMA } as const;
/** Annotations: keys as a label's, values any text. */
export const ANNOTATIONS_SCHEMA = { type: 'object', propertyNames: LABEL_KEY_SCHEMA, additionalProperties: { type: 'string' } } as const;

/** A Go duration as Flux reads `interval` and `timeout`: 30m, 1h, 1m30s, 500ms. */
export const FLUX_DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';
const FLUX_DURATION = new RegExp(FLUX_DURATION_PATTERN);

/** What Flux takes when a HelmRelease leaves `timeout` / `interval` out; flotilla writes them explicitly. */
export const FLUX_DEFAULT_TIMEOUT = '5m';
export const FLUX_DEFAULT_INTERVAL = '1m';

/** A DNS-1123 label: {@link LABEL_CHARACTERS_PATTERN}'s characters, at most 63 of them (namespaces, label values, app names). */
export function isDns1123Label(name: string): boolean {
  return name.length <= DNS1123_LABEL_MAX && DNS1123_LABEL.test(name);
}

/** A name of a DNS-1123 label's characters, of any length (a chart's; a Secret's, within its own bound). */
export function isLabelCharacters(name: string): boolean {
  return DNS1123_LABEL.test(name);
}

/** A Helm release name: a DNS-1123 label of at most 53 characters. */
export function isHelmReleaseName(name: string): boolean {
  return isDns1123Label(name) && name.length <= HELM_RELEASE_NAME_MAX;
}

export function isFluxDuration(text: string): boolean {
  return FLUX_DURATION.test(text);
}

/** A Flux (Go) duration (`30m`, `1h30m`, `1.5s`, `500ms`) in milliseconds; undefined when it is not one. */
export function fluxDurationMs(text: string): number | undefined {
  if (!isFluxDuration(text)) return undefined;
  const unit: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  return [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)].reduce((sum, p) => sum + Number(p[1]) * (unit[p[2] as string] ?? 0), 0);
}

/** The candidate closest to `word` (edit distance, prefixes count as near), when it is close enough to be a likely typo. */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    const score = c.startsWith(word) || word.startsWith(c) ? Math.min(d, 1) : d;
    // Ties go to the closer spelling (disableWaitForJob → disableWaitForJobs, not disableWait).
    if (score < bestScore || (score === bestScore && d < bestDistance)) {
      best = c;
      bestScore = score;
      bestDistance = d;
    }
  }
  return best !== undefined && bestScore <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** Edits from `a` to `b` (optimal string alignment: a swap of two neighbours is one edit, as typos go). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number) => d[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** `no chart "kestone"; did you mean "keystone"? (charts: a, b)`: how every unknown name is reported. */
export function unknownName(what: string, name: string, known: Iterable<string>): string {
  const names = [...new Set(known)].sort();
  const guess = nearest(name, names);
  return `no ${what} "${name}"${guess ? `; did you mean "${guess}"?` : ''} (${what}s: ${names.join(', ') || 'none'})`;
}
export { DOCKER_HUB, DOCKER_HUB_API, isValidTag, malformedImageReference, splitReference, type ReferenceParts } from './reference.js';
