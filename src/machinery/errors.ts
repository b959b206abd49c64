// Status errors: every failure the API server reports is one of these, and it is sent to the
// client as a meta/v1 Status object whose code, reason and message match what Kubernetes sends
// for the same failure (clients such as kubectl print `Error from server (<reason>): <message>`
// and client-go branches on reason and code).

export interface StatusCause {
  reason?: string;
  message?: string;
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

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never> | { resourceVersion?: string; continue?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A group-qualified resource or kind: `pods`, `deployments.apps`. */
export interface GroupThing {
  group: string;
  name: string;
}

export function qualified(g: GroupThing): string {
  return g.group ? `${g.name}.${g.group}` : g.name;
}

export class StatusError extends Error {
  /** list metadata carried by the Status (a continue token offered with an expired one) */
  listMeta?: { continue?: string };

  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    /** extra response headers, such as Retry-After */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'StatusError';
  }

  toStatus(): Status {
    const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: this.listMeta ? { ...this.listMeta } : {}, status: 'Failure', message: this.message, reason: this.reason, code: this.code };
    if (this.reason === '') delete s.reason;
    if (this.details) s.details = this.details;
    return s;
  }
}

function details(res: GroupThing, name: string, extra?: Partial<StatusDetails>): StatusDetails {
  const d: StatusDetails = {};
  if (name) d.name = name;
  if (res.group) d.group = res.group;
  d.kind = res.name;
  return { ...d, ...extra };
}

export const errors = {
  notFound(res: GroupThing, name: string): StatusError {
    return new StatusError(404, 'NotFound', `${qualified(res)} "${name}" not found`, details(res, name));
  },
  alreadyExists(res: GroupThing, name: string): StatusError {
    return new StatusError(409, 'AlreadyExists', `${qualified(res)} "${name}" already exists`, details(res, name));
  },
  generateNameConflict(res: GroupThing, name: string, retryAfterSeconds: number): StatusError {
    return new StatusError(
      409,
      'AlreadyExists',
      `${qualified(res)} "${name}" already exists, the server was not able to generate a unique name for the object`,
      details(res, name, { retryAfterSeconds }),
      { 'Retry-After': String(retryAfterSeconds) },
    );
  },
  conflict(res: GroupThing, name: string, why: string): StatusError {
    return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(res)} "${name}": ${why}`, details(res, name));
  },
  invalid(kind: GroupThing, name: string, errs: FieldError[]): StatusError {
    const causes = errs.map((e) => ({ reason: e.type, message: e.body(), field: e.field }));
    const d: StatusDetails = {};
    if (name) d.name = name;
    if (kind.group) d.group = kind.group;
    if (kind.name) d.kind = kind.name;
    d.causes = causes;
    return new StatusError(422, 'Invalid', `${qualified(kind)} "${name}" is invalid: ${aggregate(errs.map((e) => e.toString()))}`, d);
  },
  badRequest(message: string): StatusError {
    return new StatusError(400, 'BadRequest', message);
  },
  unauthorized(message = 'Unauthorized'): StatusError {
    return new StatusError(401, 'Unauthorized', message);
  },
  forbidden(res: GroupThing | undefined, name: string, why: string): StatusError {
    let msg: string;
    if (!res || !res.name) msg = `forbidden: ${why}`;
    else if (!name) msg = `${qualified(res)} is forbidden: ${why}`;
    else msg = `${qualified(res)} "${name}" is forbidden: ${why}`;
    return new StatusError(403, 'Forbidden', msg, res && res.name ? details(res, name) : undefined);
  },
  gone(message: string): StatusError {
    return new StatusError(410, 'Gone', message);
  },
  expired(message: string): StatusError {
    return new StatusError(410, 'Expired', message);
  },
  methodNotSupported(res: GroupThing, action: string): StatusError {
    return new StatusError(405, 'MethodNotAllowed', `${action} is not supported on resources of kind "${qualified(res)}"`, details(res, ''));
  },
  notAcceptable(message: string): StatusError {
    return new StatusError(406, 'NotAcceptable', message);
  },
  unsupportedMediaType(message: string): StatusError {
    return new StatusError(415, 'UnsupportedMediaType', message);
  },
  requestEntityTooLarge(message: string): StatusError {
    return new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: ${message}`);
  },
  timeout(message: string, retryAfterSeconds: number, causes?: StatusCause[]): StatusError {
    const d: StatusDetails = {};
    if (causes) d.causes = causes;
    if (retryAfterSeconds) d.retryAfterSeconds = retryAfterSeconds;
    return new StatusError(504, 'Timeout', `Timeout: ${message}`, d, retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : undefined);
  },
  tooLargeResourceVersion(requested: number, current: number, retryAfterSeconds = 1): StatusError {
    return errors.timeout(`Too large resource version: ${requested}, current: ${current}`, retryAfterSeconds, [
      { reason: 'ResourceVersionTooLarge', message: 'Too large resource version' },
    ]);
  },
  tooManyRequests(message: string, retryAfterSeconds: number): StatusError {
    return new StatusError(429, 'TooManyRequests', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  },
  serviceUnavailable(message: string): StatusError {
    return new StatusError(503, 'ServiceUnavailable', message);
  },
  internal(err: unknown): StatusError {
    const msg = err instanceof Error ? err.message : String(err);
    return new StatusError(500, 'InternalError', `Internal error occurred: ${msg}`, { causes: [{ message: msg }] });
  },
  notFoundPath(): StatusError {
    return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
  },
};

/** Kubernetes joins several messages as `[a, b]`, and one as itself (duplicates dropped). */
export function aggregate(msgs: string[]): string {
  const seen: string[] = [];
  for (const m of msgs) if (!seen.includes(m)) seen.push(m);
  if (seen.length === 1) return seen[0]!;
  return `[${seen.join(', ')}]`;
}

// ---- field errors (validation) ----

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTooFew'
  | 'InternalError'
  | 'FieldValueTypeInvalid'
  | 'FieldValueTooShort';

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTooFew: 'Too few',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueTooShort: 'Too short',
};

const OMIT = Symbol('omit');

/** One validation failure of one field, worded as Kubernetes words it. */
export class FieldError {
  constructor(
    readonly type: FieldErrorType,
    readonly field: string,
    readonly value: unknown = OMIT,
    readonly detail = '',
  ) {}

  /** the message without the field path */
  body(): string {
    let s: string;
    switch (this.type) {
      case 'FieldValueRequired':
      case 'FieldValueForbidden':
      case 'FieldValueTooLong':
      case 'FieldValueTooShort':
      case 'InternalError':
        s = TYPE_TEXT[this.type];
        break;
      default: {
        const text = TYPE_TEXT[this.type];
        const v = this.value;
        if (v === OMIT) s = text;
        else if (typeof v === 'string') s = `${text}: ${JSON.stringify(v)}`;
        else if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') s = `${text}: ${String(v)}`;
        else s = `${text}: ${JSON.stringify(v ?? null)}`;
      }
    }
    if (this.detail) s += `: ${this.detail}`;
    return s;
  }

  toString(): string {
    return `${this.field}: ${this.body()}`;
  }
}

export const field = {
  required: (path: string, detail = '') => new FieldError('FieldValueRequired', path, OMIT, detail),
  invalid: (path: string, value: unknown, detail = '') => new FieldError('FieldValueInvalid', path, value, detail),
  notSupported: (path: string, value: unknown, valid: string[]) =>
    new FieldError('FieldValueNotSupported', path, value, valid.length ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` : ''),
  forbidden: (path: string, detail: string) => new FieldError('FieldValueForbidden', path, OMIT, detail),
  duplicate: (path: string, value: unknown) => new FieldError('FieldValueDuplicate', path, value),
  notFound: (path: string, value: unknown) => new FieldError('FieldValueNotFound', path, value),
  tooLong: (path: string, max: number) => new FieldError('FieldValueTooLong', path, OMIT, `may not be more than ${max} bytes`),
  typeInvalid: (path: string, value: unknown, detail: string) => new FieldError('FieldValueTypeInvalid', path, value, detail),
  internal: (path: string, err: string) => new FieldError('InternalError', path, OMIT, err),
};

export function isStatusError(e: unknown): e is StatusError {
  return e instanceof StatusError;
}
