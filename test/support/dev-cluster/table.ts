/**
 * TEST FIXTURE (dev cluster): server-side printing (meta.k8s.io/v1 Table),
 * which `kubectl get` asks for: Name, the CRD's additionalPrinterColumns,
 * Age — as the real server prints custom resources.
 */
import { isObject, type Json, type JsonObject } from './patch.js';
import type { PrinterColumn, ResourceType } from './resources.js';

/** The subset of JSONPath printer columns use: `.a.b`, `[n]`, `[?(@.k=="v")]`. */
export function evaluateJsonPath(object: Json, path: string): Json | undefined {
  const tokens = path.match(/\.[^.[\]]+|\[\?\(@\.[^=]+==["'][^"']*["']\)\]|\[\d+\]/g) ?? [];
  let nodes: Json[] = [object];
  for (const token of tokens) {
    const next: Json[] = [];
    for (const node of nodes) {
      if (token.startsWith('.') && isObject(node) && node[token.slice(1)] !== undefined) next.push(node[token.slice(1)]!);
      else if (/^\[\d+\]$/.test(token) && Array.isArray(node) && node[Number(token.slice(1, -1))] !== undefined) next.push(node[Number(token.slice(1, -1))]!);
      else if (token.startsWith('[?') && Array.isArray(node)) {
        const [, key, value] = /^\[\?\(@\.([^=]+)==["']([^"']*)["']\)\]$/.exec(token)!;
        next.push(...node.filter((item) => isObject(item) && String(item[key!]) === value));
      }
    }
    nodes = next;
  }
  return nodes[0];
}

/** Kubernetes' short human durations: 45s, 3m12s, 5h, 2d3h. */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 && h < 8 ? `${h}h${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 && d < 8 ? `${d}d${h % 24}h` : `${d}d`;
}

function cell(column: PrinterColumn, object: JsonObject): Json {
  const value = evaluateJsonPath(object, column.jsonPath);
  if (value === undefined || value === null) return column.type === 'date' ? '<unknown>' : null;
  if (column.type === 'date') return humanDuration(Date.now() - Date.parse(String(value)));
  return isObject(value) || Array.isArray(value) ? JSON.stringify(value) : value;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function toTable(type: ResourceType, objects: JsonObject[], resourceVersion: string, include: IncludeObject): JsonObject {
  // A CRD's own columns replace the default Age column, as on a real server.
  const columns: PrinterColumn[] = [
    { name: 'Name', type: 'string', jsonPath: '.metadata.name', description: 'Name must be unique within a namespace.' },
    ...(type.printerColumns.length > 0
      ? type.printerColumns
      : [
          {
            name: 'Age',
            type: 'date',
            jsonPath: '.metadata.creationTimestamp',
            description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
          },
        ]),
  ];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.name === 'Name' ? 'name' : '',
      description: c.description ?? '',
      priority: c.priority ?? 0,
    })),
    rows: objects.map((object) => ({
      cells: columns.map((c) => cell(c, object)),
      ...(include === 'None'
        ? {}
        : { object: include === 'Object' ? object : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata as Json } }),
    })),
  };
}
