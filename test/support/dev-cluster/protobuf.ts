/**
 * TEST FIXTURE (dev cluster): reads the Kubernetes protobuf encoding of the
 * few objects kubectl's typed `create` sub-commands send that way
 * (`kubectl create namespace|configmap|secret|serviceaccount`). Everything
 * else is JSON; other protobuf bodies get 415.
 *
 * The envelope is `k8s\0` then a runtime.Unknown message (typeMeta, raw);
 * field numbers are those of k8s.io/api's generated.proto.
 */
import type { Json, JsonObject } from './patch.js';

type Field = { number: number; wire: number; value: bigint | Buffer };

function readVarint(buffer: Buffer, offset: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (offset >= buffer.length) throw new Error('truncated varint');
    const byte = buffer[offset++]!;
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [result, offset];
    shift += 7n;
  }
}

function fields(buffer: Buffer): Field[] {
  const out: Field[] = [];
  let offset = 0;
  while (offset < buffer.length) {
    const [key, next] = readVarint(buffer, offset);
    offset = next;
    const number = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [value, after] = readVarint(buffer, offset);
      out.push({ number, wire, value });
      offset = after;
    } else if (wire === 2) {
      const [length, after] = readVarint(buffer, offset);
      const end = after + Number(length);
      if (end > buffer.length) throw new Error('truncated field');
      out.push({ number, wire, value: buffer.subarray(after, end) });
      offset = end;
    } else if (wire === 1) {
      out.push({ number, wire, value: buffer.subarray(offset, offset + 8) });
      offset += 8;
    } else if (wire === 5) {
      out.push({ number, wire, value: buffer.subarray(offset, offset + 4) });
      offset += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const text = (f: Field): string => (f.value as Buffer).toString('utf8');
const all = (fs: Field[], n: number) => fs.filter((f) => f.number === n);
const one = (fs: Field[], n: number) => fs.find((f) => f.number === n);

function map(fs: Field[], n: number, value: (b: Buffer) => Json): JsonObject | undefined {
  const entries = all(fs, n);
  if (entries.length === 0) return undefined;
  const result: JsonObject = {};
  for (const entry of entries) {
    const kv = fields(entry.value as Buffer);
    const key = one(kv, 1);
    const val = one(kv, 2);
    result[key ? text(key) : ''] = value(val ? (val.value as Buffer) : Buffer.alloc(0));
  }
  return result;
}

const utf8 = (b: Buffer): Json => b.toString('utf8');
const base64 = (b: Buffer): Json => b.toString('base64');

function objectMeta(buffer: Buffer): JsonObject {
  const fs = fields(buffer);
  const meta: JsonObject = {};
  const strings: Array<[number, string]> = [
    [1, 'name'],
    [2, 'generateName'],
    [3, 'namespace'],
  ];
  for (const [n, key] of strings) {
    const f = one(fs, n);
    if (f) meta[key] = text(f);
  }
  const labels = map(fs, 11, utf8);
  if (labels) meta.labels = labels;
  const annotations = map(fs, 12, utf8);
  if (annotations) meta.annotations = annotations;
  const finalizers = all(fs, 14).map(text);
  if (finalizers.length) meta.finalizers = finalizers;
  return meta;
}

const bool = (f: Field | undefined): boolean | undefined => (f ? (f.value as bigint) !== 0n : undefined);

/** The strings of a message, by field number (what kubectl sends in an access review's attributes). */
function strings(buffer: Buffer, names: Array<[number, string]>): JsonObject {
  const fs = fields(buffer);
  const result: JsonObject = {};
  for (const [n, key] of names) {
    const f = one(fs, n);
    if (f) result[key] = text(f);
  }
  return result;
}

/** `kubectl auth can-i`'s review: the attributes asked about. */
const accessReview = (fs: Field[]): JsonObject => {
  const spec = one(fs, 2);
  const specFields = spec ? fields(spec.value as Buffer) : [];
  const resource = one(specFields, 1);
  const nonResource = one(specFields, 2);
  return {
    spec: {
      ...(resource
        ? {
            resourceAttributes: strings(resource.value as Buffer, [
              [1, 'namespace'],
              [2, 'verb'],
              [3, 'group'],
              [4, 'version'],
              [5, 'resource'],
              [6, 'subresource'],
              [7, 'name'],
            ]),
          }
        : {}),
      ...(nonResource
        ? {
            nonResourceAttributes: strings(nonResource.value as Buffer, [
              [1, 'path'],
              [2, 'verb'],
            ]),
          }
        : {}),
    },
  };
};
const DECODERS: Record<string, (fs: Field[]) => JsonObject> = {
  'authorization.k8s.io/v1/SelfSubjectAccessReview': accessReview,
  'v1/Namespace': (fs) => {
    const spec = one(fs, 2);
    const finalizers = spec ? all(fields(spec.value as Buffer), 1).map(text) : [];
    return { ...(finalizers.length ? { spec: { finalizers } } : {}) };
  },
  'v1/ConfigMap': (fs) => {
    const data = map(fs, 2, utf8);
    const binaryData = map(fs, 3, base64);
    const immutable = bool(one(fs, 4));
    return { ...(data ? { data } : {}), ...(binaryData ? { binaryData } : {}), ...(immutable !== undefined ? { immutable } : {}) };
  },
  'v1/Secret': (fs) => {
    const data = map(fs, 2, base64);
    const type = one(fs, 3);
    const stringData = map(fs, 4, utf8);
    const immutable = bool(one(fs, 5));
    return {
      ...(data ? { data } : {}),
      ...(type ? { type: text(type) } : {}),
      ...(stringData ? { stringData } : {}),
      ...(immutable !== undefined ? { immutable } : {}),
    };
  },
  'v1/ServiceAccount': (fs) => {
    const pullSecrets = all(fs, 3).map((f) => ({ name: text(one(fields(f.value as Buffer), 1)!) }));
    const automount = bool(one(fs, 4));
    return {
      ...(pullSecrets.length ? { imagePullSecrets: pullSecrets } : {}),
      ...(automount !== undefined ? { automountServiceAccountToken: automount } : {}),
    };
  },
};

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** The object in a protobuf request body, or undefined when the fixture cannot read it. */
export function decodeProtobuf(body: Buffer): JsonObject | undefined {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) return undefined;
  try {
    const unknown = fields(body.subarray(4));
    const typeMeta = one(unknown, 1);
    const raw = one(unknown, 2);
    if (!typeMeta || !raw) return undefined;
    const tm = fields(typeMeta.value as Buffer);
    const apiVersion = one(tm, 1) ? text(one(tm, 1)!) : '';
    const kind = one(tm, 2) ? text(one(tm, 2)!) : '';
    const decode = DECODERS[`${apiVersion}/${kind}`];
    if (!decode) return undefined;
    const fs = fields(raw.value as Buffer);
    const metadata = one(fs, 1);
    return { apiVersion, kind, metadata: metadata ? objectMeta(metadata.value as Buffer) : {}, ...decode(fs) };
  } catch {
    return undefined;
  }
}
