/**
 * TEST FIXTURE (dev cluster): Kubernetes `Status` failures, shaped as the
 * real API server shapes them (metav1.Status with reason, code, details), so
 * clients and kubectl print the same messages they would against a cluster.
 */
import { qualifiedResource, type ResourceType } from './resources.js';

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** An API failure: carries the Status body and the HTTP code. */
export class ApiError extends Error {
  constructor(readonly status: KubeStatus) {
    super(status.message);
    this.name = 'ApiError';
  }

  get code(): number {
    return this.status.code;
  }
}

const failure = (code: number, reason: string, message: string, details?: StatusDetails): ApiError =>
  new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code });

const detailsOf = (type: Pick<ResourceType, 'group' | 'plural'>, name: string): StatusDetails =>
  type.group ? { name, group: type.group, kind: type.plural } : { name, kind: type.plural };

export const notFound = (type: Pick<ResourceType, 'group' | 'plural'>, name: string): ApiError =>
  failure(404, 'NotFound', `${qualifiedResource(type)} "${name}" not found`, detailsOf(type, name));

/** 404 for a URL that names no served resource (the real server's plain "the server could not find the requested resource"). */
export const noSuchResource = (): ApiError => failure(404, 'NotFound', 'the server could not find the requested resource', {});

export const alreadyExists = (type: ResourceType, name: string): ApiError =>
  failure(409, 'AlreadyExists', `${qualifiedResource(type)} "${name}" already exists`, detailsOf(type, name));

export const conflict = (
  type: ResourceType,
  name: string,
  why = 'the object has been modified; please apply your changes to the latest version and try again',
): ApiError => failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": ${why}`, detailsOf(type, name));

export const applyConflict = (causes: StatusCause[]): ApiError =>
  failure(
    409,
    'Conflict',
    `Apply failed with ${causes.length} conflict${causes.length === 1 ? '' : 's'}: ${causes.map((c) => `${c.message}: ${c.field}`).join('\n')}`,
    { causes },
  );

export const invalid = (type: ResourceType, name: string, causes: StatusCause[]): ApiError =>
  failure(
    422,
    'Invalid',
    // One cause is written as is, several as an aggregate in brackets, as the real server does.
    `${type.kind}${type.group ? `.${type.group}` : ''} "${name}" is invalid: ${causes.length === 1 ? `${causes[0]!.field}: ${causes[0]!.message}` : `[${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}]`}`,
    { name, ...(type.group ? { group: type.group } : {}), kind: type.kind, causes: causes.map((c) => ({ ...c, reason: c.reason })) },
  );

export const badRequest = (message: string): ApiError => failure(400, 'BadRequest', message);

export const methodNotAllowed = (): ApiError => failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});

export const unsupportedMediaType = (accepted: readonly string[]): ApiError =>
  failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`, {});

export const forbiddenTerminating = (type: ResourceType, name: string, namespace: string): ApiError =>
  failure(
    403,
    'Forbidden',
    `${qualifiedResource(type)} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
    {
      ...detailsOf(type, name),
      causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
    },
  );

/** The watch error a real server sends for a resourceVersion older than its history. */
export const expired = (requested: number, oldest: number): ApiError => failure(410, 'Expired', `too old resource version: ${requested} (${oldest})`);

export const injected = (code: number, retryAfterSeconds?: number): ApiError => {
  const reasons: Record<number, [string, string]> = {
    429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
    500: ['InternalError', 'Internal error occurred: injected by the dev cluster test fixture'],
    503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
    504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
  };
  const [reason, message] = reasons[code] ?? ['InternalError', `injected failure ${code}`];
  return failure(code, reason, message, retryAfterSeconds !== undefined ? { retryAfterSeconds } : {});
};

export const success = (type: ResourceType, name: string, uid: string): KubeStatus => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Success',
  details: { ...detailsOf(type, name), uid },
  code: 200,
});
