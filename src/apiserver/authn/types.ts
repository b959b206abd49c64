// Authentication: who a request is from. Each authenticator looks at the request (TLS client
// certificate, bearer token, front-proxy headers) and answers with a user, with "not mine"
// (null: the next authenticator tries), or with an error (a credential it recognizes but rejects:
// the request gets 401). The chain ends with the anonymous user when anonymous auth is on.
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../authz.js';

export interface AuthResult {
  user: UserInfo;
  /** the audiences a bearer token was valid for (TokenReview reports them) */
  audiences?: string[];
  /** warnings for the client (Warning headers), such as a legacy auto-generated token's */
  warnings?: string[];
}

export class AuthenticationError extends Error {}

export interface Authenticator {
  /** null: this authenticator does not recognize the request's credentials */
  authenticate(req: IncomingMessage): Promise<AuthResult | null> | AuthResult | null;
}

/** A bearer-token authenticator, also used by TokenReview (which has no request) */
export interface TokenAuthenticator {
  authenticateToken(token: string, audiences?: string[]): Promise<AuthResult | null> | AuthResult | null;
}
