/**
 * Image references written in values, checked with the distribution
 * reference grammar (src/names, the one parser): openstack-helm's
 * `images.tags.<name>`, an `image:` string, and Bitnami's `image:` map
 * (`registry`/`repository`/`tag`/`digest`, read together as Helm's
 * `common.images.image` joins them). A value holding a template (`{{`) is
 * left to the chart.
 */
import type { DocPath, SourceLocation } from '../diagnostics/index.js';
import type { Origin, ValueNode } from '../yaml/index.js';
import { malformedImageReference } from '../names/index.js';

export interface ImageProblem {
  readonly path: DocPath;
  readonly reference: string;
  readonly problem: string;
  readonly location: SourceLocation;
}

const stringAt = (node: ValueNode | undefined): string | undefined => (node?.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined);

/** The reference a Bitnami-style `image:` map makes, and the node of the part that set the most of it. */
function composed(image: ValueNode & { kind: 'map' }): { reference: string; node: ValueNode } | undefined {
  const repository = image.entries.get('repository');
  const name = stringAt(repository);
  if (!name || !repository) return undefined;
  const registry = stringAt(image.entries.get('registry'));
  const tag = stringAt(image.entries.get('tag'));
  const digest = stringAt(image.entries.get('digest'));
  const reference = `${registry ? `${registry}/` : ''}${name}${tag ? `:${tag}` : ''}${digest ? `@${digest}` : ''}`;
  // The part a layer above the chart wrote, when one did, is where the user looks.
  const parts = ['tag', 'digest', 'repository', 'registry'].map((k) => image.entries.get(k)).filter((n): n is ValueNode => n !== undefined);
  return { reference, node: parts.find((n) => n.origin.layer !== repository.origin.layer) ?? repository };
}

/** An image reference found in a values tree: where, what it reads, and the node that set it (or the part of it a higher layer set). */
export interface FoundImage {
  readonly path: DocPath;
  readonly reference: string;
  readonly node: ValueNode;
  /** Every node the reference is made of (one, or the parts of an `image:` map). */
  readonly parts: readonly ValueNode[];
}

/** Every image reference of a values tree (see the module's comment for where they are), empty strings left out. */
export function imagesIn(root: ValueNode | undefined): FoundImage[] {
  const found: FoundImage[] = [];
  const add = (reference: string | undefined, node: ValueNode, path: DocPath, parts: readonly ValueNode[] = [node]) => {
    if (reference) found.push({ path, reference, node, parts });
  };
  const visit = (node: ValueNode, path: DocPath) => {
    if (node.kind === 'seq') node.items.forEach((item, i) => visit(item, [...path, i]));
    if (node.kind !== 'map') return;
    for (const [key, child] of node.entries) {
      const at = [...path, key];
      if (key === 'image' && child.kind === 'scalar') add(stringAt(child), child, at);
      else if (key === 'image' && child.kind === 'map' && child.entries.has('repository')) {
        const image = composed(child);
        if (image) add(image.reference, image.node, at, [...child.entries.values()]);
      } else if (key === 'tags' && path[path.length - 1] === 'images' && child.kind === 'map') {
        for (const [name, tag] of child.entries) add(stringAt(tag), tag, [...at, name]);
      } else visit(child, at);
    }
  };
  if (root) visit(root, []);
  return found;
}

/** A template (`{{ … }}`, the chart's to read) or a build token (`@NAME@`, replaced by `flotilla build` before any check; an import reads the source as written). */
const unresolved = (reference: string): boolean => reference.includes('{{') || /@[A-Z][A-Z0-9_]*@/.test(reference);

/**
 * Every malformed image reference of a values tree, some part of which
 * `checked` accepts the origin of (the caller leaves out what the chart's own
 * defaults hold); one not resolved yet is left alone.
 */
export function imageProblems(root: ValueNode | undefined, checked: (origin: Origin) => boolean): ImageProblem[] {
  return imagesIn(root).flatMap((image) => {
    if (unresolved(image.reference) || !image.parts.some((part) => checked(part.origin))) return [];
    const problem = malformedImageReference(image.reference);
    return problem ? [{ path: image.path, reference: image.reference, problem, location: image.node.origin.location }] : [];
  });
}

/** For messages: a tree's plain value is never printed; the reference is (it is no secret, and the problem is in it). */
export const describeImageProblem = (p: ImageProblem): string => `image reference ${JSON.stringify(p.reference)} is malformed: ${p.problem}`;

/** Where an image field lands in a chart's values (src/catalog' ImageTarget): one path, or the repository's with the tag's and digest's. */
export interface ImageLanding {
  readonly path: readonly string[];
  readonly split?: { readonly tag: readonly string[]; readonly digest?: readonly string[] };
}

/**
 * The values an image reference becomes at a target: the reference at its
 * path, or its name (registry and repository as written) at `path`, its tag
 * at `split.tag` and its digest at `split.digest`. A chart with no digest
 * path gets `tag@digest` as its tag, which `repository:tag` templates (helm
 * create's) turn back into the pinned reference.
 */
export function imageLandings(reference: string, target: ImageLanding): { readonly path: readonly string[]; readonly value: string }[] {
  if (!target.split) return [{ path: target.path, value: reference }];
  const at = reference.indexOf('@');
  const digest = at >= 0 ? reference.slice(at + 1) : undefined;
  const named = at >= 0 ? reference.slice(0, at) : reference;
  const colon = named.indexOf(':', named.lastIndexOf('/') + 1);
  const name = colon >= 0 ? named.slice(0, colon) : named;
  const tag = colon >= 0 ? named.slice(colon + 1) : undefined;
  const { digest: digestPath } = target.split;
  const tagValue = digestPath === undefined && digest !== undefined ? `${tag ?? ''}@${digest}` : tag;
  return [
    { path: target.path, value: name },
    ...(tagValue !== undefined ? [{ path: target.split.tag, value: tagValue }] : []),
    ...(digestPath !== undefined && digest !== undefined ? [{ path: digestPath, value: digest }] : []),
  ];
}
