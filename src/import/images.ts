/**
 * Filling the version catalog from the static overrides' `images.tags`.
 *
 * Harvesting does not change what Helm sees: the static overrides keep every
 * reference (they are copied byte for byte), and the catalog puts the SAME
 * reference at the same value path in the system overrides, which Flux
 * merges above them. Only references the catalog accepts are taken (pinned,
 * valid, no build token, a key usable as a value path); the rest stay in the
 * static overrides alone and are listed with the reason.
 */
import type { SourceLocation } from '../diagnostics/index.js';
import { getNode, type ValueNode } from '../yaml/index.js';
import { imageReferenceProblem } from '../catalog/index.js';
import type { HarvestedImage, SkippedImage } from './types.js';

export interface StaticOverridesOfChart {
  readonly chart: string;
  readonly root: ValueNode | undefined;
}

const KEY = /^[A-Za-z0-9_-]+$/;
/** A build-time token as `flotilla build` (and the StarlingX package build) replaces it. */
export const BUILD_TOKEN = /@[A-Z][A-Z0-9_]*@/;

interface Found {
  readonly chart: string;
  readonly key: string;
  readonly reference: string;
  readonly location: SourceLocation;
}

export function harvestImages(charts: readonly StaticOverridesOfChart[]): { harvested: HarvestedImage[]; skipped: SkippedImage[] } {
  const skipped: SkippedImage[] = [];
  const byKey = new Map<string, Found[]>();
  for (const { chart, root } of charts) {
    const tags = getNode(root, ['images', 'tags']);
    if (tags?.kind !== 'map') continue;
    for (const [key, node] of tags.entries) {
      const path = `images.tags.${key}`;
      const skip = (reason: string) => skipped.push({ chart, path, reason, location: node.origin.location });
      if (!KEY.test(key)) {
        skip('the key cannot be one segment of a dotted value path');
        continue;
      }
      if (node.kind !== 'scalar' || typeof node.value !== 'string') {
        skip(`not an image reference (${node.kind === 'scalar' ? JSON.stringify(node.value) : `a ${node.kind}`})`);
        continue;
      }
      const reference = node.value;
      if (BUILD_TOKEN.test(reference)) {
        skip('holds a build token, replaced only when the app is built');
        continue;
      }
      const problem = imageReferenceProblem(reference);
      if (problem) {
        skip(problem);
        continue;
      }
      const list = byKey.get(key) ?? [];
      list.push({ chart, key, reference, location: node.origin.location });
      byKey.set(key, list);
    }
  }
  const harvested: HarvestedImage[] = [];
  for (const [key, found] of byKey) {
    // Charts that agree share one field; when they disagree, the largest group keeps
    // the plain key and every other chart gets a field of its own (<chart>.<key>).
    const groups = new Map<string, Found[]>();
    for (const f of found) groups.set(f.reference, [...(groups.get(f.reference) ?? []), f]);
    let main: Found[] | undefined;
    for (const group of groups.values()) if (!main || group.length > main.length) main = group;
    for (const [reference, group] of groups) {
      if (group === main) {
        harvested.push({ field: key, reference, targets: group.map((f) => ({ chart: f.chart, path: `images.tags.${key}` })) });
      } else {
        for (const f of group) harvested.push({ field: `${f.chart}.${key}`, reference, targets: [{ chart: f.chart, path: `images.tags.${key}` }] });
      }
    }
  }
  harvested.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
  return { harvested, skipped };
}
