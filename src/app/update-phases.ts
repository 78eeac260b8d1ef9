/**
 * `updatePhases` of fluxcd/releases.yaml: the order in which an update that
 * changes images reaches the releases (docs/versions.md, "Staged update").
 * Each phase names releases (each is written first in its phase, with all
 * of its changes) and image fields (which change in that phase in every
 * release they land in, whatever the release's own phase); one phase may
 * take `rest`: every release no phase names. This file owns the schema,
 * the checks against the release table and the catalog, and the one rule
 * saying in which phase each release and each (release, image field) pair
 * changes.
 */
import type { Diagnostic, SourceLocation } from '../diagnostics/index.js';
import { getNode, toPlain, type ValueNode } from '../yaml/index.js';
import { DNS1123_LABEL_MAX, unknownName } from '../names/index.js';
import type { JsonSchema } from './schema-check.js';

export interface UpdatePhase {
  readonly name: string;
  /** Releases whose own phase this is (their non-image changes, and every image field no phase names). */
  readonly releases: readonly string[];
  /** Image fields that change in this phase, in every release they land in. */
  readonly images: readonly string[];
  /** Every release no phase names belongs here. */
  readonly rest: boolean;
  readonly location: SourceLocation;
}

export const updatePhasesSchema: JsonSchema = {
  type: 'array',
  minItems: 1,
  expected: 'a list of update phases, each {name, releases, images, rest}',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: {
        type: 'string',
        pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
        maxLength: DNS1123_LABEL_MAX,
        expected: 'a phase name (DNS-1123 label, e.g. dataplane)',
      },
      releases: { type: 'array', items: { type: 'string', minLength: 1 }, expected: 'release names of the table' },
      images: { type: 'array', items: { type: 'string', minLength: 1 }, expected: 'image fields of overrides/versions/images.yaml' },
      rest: { type: 'boolean', expected: 'true: the phase of every release no phase names' },
    },
  },
};

/** The phases as written (the schema has checked their shape). */
export function readUpdatePhases(root: ValueNode | undefined, file: string): UpdatePhase[] {
  const node = root ? getNode(root, ['updatePhases']) : undefined;
  if (!node) return [];
  const raw = toPlain(node) as { name: string; releases?: string[]; images?: string[]; rest?: boolean }[];
  return raw.map((phase, index) => ({
    name: phase.name,
    releases: phase.releases ?? [],
    images: phase.images ?? [],
    rest: phase.rest === true,
    location: getNode(node, [index])?.origin.location ?? { file, line: 0, column: 0 },
  }));
}

/**
 * What the phases may not say: a name twice, a release or image field the
 * app does not have, a release or field in two phases, two `rest` phases, a
 * phase that names nothing, a release in no phase when none takes the rest.
 */
export function checkUpdatePhases(phases: readonly UpdatePhase[], releases: readonly string[], imageFields: readonly string[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const error = (message: string, phase: UpdatePhase, index: number, key?: string): void => {
    out.push({
      severity: 'error',
      message: `updatePhases[${index}] (${phase.name}): ${message}`,
      location: phase.location,
      path: ['updatePhases', index, ...(key ? [key] : [])],
    });
  };
  const phaseOfName = new Map<string, number>();
  const releaseOwner = new Map<string, string>();
  const fieldOwner = new Map<string, string>();
  let rest: string | undefined;
  phases.forEach((phase, index) => {
    if (phaseOfName.has(phase.name)) error(`the name is used by updatePhases[${phaseOfName.get(phase.name)}] too`, phase, index, 'name');
    phaseOfName.set(phase.name, index);
    if (!phase.rest && phase.releases.length === 0 && phase.images.length === 0) error('names no release, no image field and is not rest: true', phase, index);
    if (phase.rest) {
      if (rest !== undefined) error(`rest: true is already the phase ${rest}'s`, phase, index, 'rest');
      rest = phase.name;
    }
    for (const release of phase.releases) {
      if (!releases.includes(release)) error(unknownName('release', release, releases), phase, index, 'releases');
      else if (releaseOwner.has(release)) error(`release ${release} is in phase ${releaseOwner.get(release)} already`, phase, index, 'releases');
      releaseOwner.set(release, releaseOwner.get(release) ?? phase.name);
    }
    for (const field of phase.images) {
      if (!imageFields.includes(field)) error(unknownName('image field', field, imageFields), phase, index, 'images');
      else if (fieldOwner.has(field)) error(`image field ${field} is in phase ${fieldOwner.get(field)} already`, phase, index, 'images');
      fieldOwner.set(field, fieldOwner.get(field) ?? phase.name);
    }
  });
  const homeless = releases.filter((r) => !releaseOwner.has(r));
  if (phases.length > 0 && rest === undefined && homeless.length > 0) {
    const first = phases[0] as UpdatePhase;
    out.push({
      severity: 'error',
      message: `updatePhases: release(s) ${homeless.join(', ')} are in no phase; name them in a phase's releases, or give one phase rest: true`,
      location: first.location,
      path: ['updatePhases'],
    });
  }
  return out;
}

/** In which phase (index) each release is written with its own changes, and each of its image fields changes. */
export interface PhaseAssignment {
  /** The release's own phase: where it is written with its non-image changes. */
  home(release: string): number;
  /** The phase in which an image field of the release changes. */
  imagePhase(release: string, field: string): number;
}

/** The rule (checked phases assumed): a field a phase names changes there; any other in its release's own phase. */
export function assignPhases(phases: readonly UpdatePhase[]): PhaseAssignment {
  const restIndex = phases.findIndex((p) => p.rest);
  const releaseHome = new Map<string, number>();
  const fieldPhase = new Map<string, number>();
  phases.forEach((phase, index) => {
    for (const release of phase.releases) if (!releaseHome.has(release)) releaseHome.set(release, index);
    for (const field of phase.images) if (!fieldPhase.has(field)) fieldPhase.set(field, index);
  });
  const home = (release: string) => releaseHome.get(release) ?? (restIndex >= 0 ? restIndex : phases.length - 1);
  return { home, imagePhase: (release, field) => fieldPhase.get(field) ?? home(release) };
}
