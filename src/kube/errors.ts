/**
 * Typed Kubernetes API errors. Every failed call becomes a `KubeApiError`
 * (or one of its kinds) naming what was asked — verb, kind, namespace/name —
 * with the HTTP status and the API server's own message, so a user sees
 * which object failed and why. Request bodies are never echoed: they may
 * hold Secret data.
 */
import { FlotillaError } from '../diagnostics/index.js';

export interface KubeErrorOptions {
  readonly cause?: unknown;
  readonly retryAfterSeconds?: number;
  /** Said after the status (how many attempts were made). */
  readonly note?: string;
}

/** What a call was doing, for messages. */
export interface KubeCall {
  readonly verb: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name?: string;
}

function describeObject(call: Pick<KubeCall, 'kind' | 'namespace' | 'name'>): string {
  const where = call.namespace ? `${call.namespace}/` : '';
  return call.name ? `${call.kind} ${where}${call.name}` : `${call.kind}${call.namespace ? ` in ${call.namespace}` : ''}`;
}

export class KubeApiError extends FlotillaError {
  readonly verb: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly objectName?: string;
  /** HTTP status; undefined when the server could not be reached. */
  readonly status?: number;
  /** The Status `reason` (NotFound, Conflict, Invalid, …). */
  readonly reason?: string;
  /** The API server's message, as it said it. */
  readonly serverMessage: string;
  /** What a 429 or 503 said in `Retry-After` (or its Status details). */
  readonly retryAfterSeconds?: number;

  constructor(call: KubeCall, status: number | undefined, reason: string | undefined, serverMessage: string, options: KubeErrorOptions = {}) {
    const answered = status !== undefined ? `HTTP ${status}${reason ? ` ${reason}` : ''}` : 'no answer';
    const said = `${answered}${options.note ? `; ${options.note}` : ''}`;
    super(
      `cannot ${call.verb} ${describeObject(call)}: ${serverMessage || said}${serverMessage ? ` (${said})` : ''}`,
      options.cause !== undefined ? { cause: options.cause } : {},
    );
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
    this.verb = call.verb;
    this.kind = call.kind;
    if (call.namespace !== undefined) this.namespace = call.namespace;
    if (call.name !== undefined) this.objectName = call.name;
    if (status !== undefined) this.status = status;
    if (reason !== undefined) this.reason = reason;
    this.serverMessage = serverMessage;
  }
}

export class NotFound extends KubeApiError {}
/** 409 on a stale resourceVersion, or a server-side apply field conflict. */
export class Conflict extends KubeApiError {}
export class AlreadyExists extends KubeApiError {}
export class Forbidden extends KubeApiError {}
export class Unauthorized extends KubeApiError {}
/** 422: the object was rejected (schema, immutable field). */
export class Invalid extends KubeApiError {}
/** 410: a watch's resourceVersion is too old; list again. */
export class Gone extends KubeApiError {}
/** The server could not be reached or answered 5xx/429. */
export class Unavailable extends KubeApiError {}

interface StatusBody {
  readonly message?: unknown;
  readonly reason?: unknown;
  readonly code?: unknown;
  readonly details?: { readonly retryAfterSeconds?: unknown };
}

/** `Retry-After` in seconds (the API server sends seconds, never a date), from the headers or the Status details. */
function retryAfter(headers: unknown, body: StatusBody): number | undefined {
  const fromHeader =
    headers !== null && typeof headers === 'object' ? Object.entries(headers).find(([name]) => name.toLowerCase() === 'retry-after')?.[1] : undefined;
  const seconds = Number(typeof fromHeader === 'string' || typeof fromHeader === 'number' ? fromHeader : body.details?.retryAfterSeconds);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

function statusBody(body: unknown): StatusBody {
  if (typeof body === 'string') {
    try {
      return statusBody(JSON.parse(body));
    } catch {
      return { message: body.slice(0, 500) };
    }
  }
  return body !== null && typeof body === 'object' ? (body as StatusBody) : {};
}

/**
 * The typed error for a failure of `call`: client-node's ApiException
 * (checked by shape, so this module does not load the client), a watch's
 * `statusCode` error, a Status object received in a watch stream, or a
 * network error.
 */
export function kubeError(call: KubeCall, error: unknown): KubeApiError {
  if (error instanceof KubeApiError) return error;
  const shaped = (error ?? {}) as { code?: unknown; statusCode?: unknown; body?: unknown; message?: unknown; kind?: unknown; headers?: unknown };
  const fromStatusObject = shaped.kind === 'Status';
  const status = typeof shaped.code === 'number' ? shaped.code : typeof shaped.statusCode === 'number' ? shaped.statusCode : undefined;
  const body = fromStatusObject ? statusBody(error) : statusBody(shaped.body);
  const reason = typeof body.reason === 'string' ? body.reason : undefined;
  const message = typeof body.message === 'string' ? body.message : status === undefined && typeof shaped.message === 'string' ? shaped.message : '';
  const Kind = errorClass(status, reason);
  const after = retryAfter(shaped.headers, body);
  return new Kind(call, status, reason, message, { cause: error, ...(after !== undefined ? { retryAfterSeconds: after } : {}) });
}

function errorClass(status: number | undefined, reason: string | undefined): typeof KubeApiError {
  if (status === undefined) return Unavailable;
  if (status === 404) return NotFound;
  if (status === 409) return reason === 'AlreadyExists' ? AlreadyExists : Conflict;
  if (status === 403) return Forbidden;
  if (status === 401) return Unauthorized;
  if (status === 422) return Invalid;
  if (status === 410) return Gone;
  if (status === 429 || status >= 500) return Unavailable;
  return KubeApiError;
}
