// Errors of authentication. An authenticator that recognizes a credential and rejects it throws
// an AuthenticationError; a chain collects the errors of its members into an aggregate whose
// message is Kubernetes' (k8s.io/apimachinery util/errors): one error is itself, several are
// `[a, b]` with duplicates dropped and nested aggregates flattened. TokenReview reports that
// message in status.error.
import { AuthenticationError } from './types.js';

export { AuthenticationError };

export class AggregateAuthenticationError extends AuthenticationError {
  override name = 'AggregateAuthenticationError';
  constructor(readonly errors: Error[]) {
    super(aggregateMessage(errors));
  }
}

function flatten(errs: Error[], out: Error[]): Error[] {
  for (const e of errs) {
    if (e instanceof AggregateAuthenticationError) flatten(e.errors, out);
    else out.push(e);
  }
  return out;
}

function aggregateMessage(errs: Error[]): string {
  if (errs.length === 0) return '';
  if (errs.length === 1) return errs[0]!.message;
  const seen: string[] = [];
  for (const e of flatten(errs, [])) if (!seen.includes(e.message)) seen.push(e.message);
  return seen.length === 1 ? seen[0]! : `[${seen.join(', ')}]`;
}

/** The aggregate of a list of errors: undefined when empty (Go's NewAggregate returns nil). */
export function aggregate(errs: Error[]): AuthenticationError | undefined {
  if (errs.length === 0) return undefined;
  return new AggregateAuthenticationError(errs);
}

/** Any thrown value as an Error (authenticators never let a non-Error escape). */
export function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

