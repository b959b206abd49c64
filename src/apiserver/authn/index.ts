// Authentication: the public surface of src/apiserver/authn (see chain.ts for how the pieces
// form kube-apiserver's chain).
export * from './types.js';
export { AggregateAuthenticationError, aggregate } from './errors.js';
export { buildAuthenticator, buildAuthenticatorFromFlags, serviceAccountVerificationKeys, defaultAuthenticationFlags, validateAuthenticationFlags, authenticationFlagWarnings, bearerTokenOf, audienceValidationError, ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, INVALID_BEARER_TOKEN } from './chain.js';
export type { AuthenticationOptions, AuthenticationFlags, FromFlagsDeps, RequestAuthenticator, RequestHeaderOptions, ServiceAccountAuthOptions, TokenReviewStatus, TokenReviewUser } from './chain.js';
export { CertPool, X509Authenticator, commonNameUser, loadCertPool, parseCertsPEM, peerCertificates, verifyClientCertificate, CREDENTIAL_ID_KEY } from './x509.js';
export { RequestHeaderAuthenticator, userFromHeaders } from './requestheader.js';
export { StaticTokenAuthenticator, parseTokenFile, readCSV, CSVParseError } from './tokenfile.js';
export {
  LegacyServiceAccountTokenAuthenticator, ServiceAccountTokenAuthenticator, PublicKeySet, boundClaims, legacyClaims, newTokenSigner, signToken, makeUsername, splitUsername, makeGroupNames, serviceAccountUser, LEGACY_ISSUER,
} from './serviceaccount.js';
export type { ObjectReader, ReaderResource, TokenSigner, ServiceAccountInfo } from './serviceaccount.js';
export { createTokenRequest, DEFAULT_TOKEN_EXPIRATION_SECONDS, MIN_TOKEN_EXPIRATION_SECONDS } from './tokenrequest.js';
export type { TokenRequestOptions, TokenRequestResult } from './tokenrequest.js';
export { impersonate, impersonationHeaderNames, hasImpersonationHeaders, impersonationForbidden, ImpersonationInternalError } from './impersonation.js';
export type { ImpersonationAuthorizer, ImpersonationDecision } from './impersonation.js';
export { keyIDFromPublicKey, parsePublicKeysPEM, parsePrivateKeyPEM, publicKeysFromFile, privateKeyFromFile } from './jose.js';
export { ensureServiceAccountKey } from './keys.js';
export type { ServiceAccountKeyPair } from './keys.js';
export { issuerDiscovery, OPENID_CONFIGURATION_PATH, JWKS_PATH } from './oidc.js';
export type { IssuerDiscovery, IssuerDiscoveryOptions } from './oidc.js';
export { syntheticRequest } from './request.js';
export type { AuthnRequest } from './request.js';
