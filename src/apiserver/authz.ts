// Authorization: the attributes of a request and the authorizers that decide on them. Until RBAC
// lands every authenticated user is allowed everything (AlwaysAllow); the access reviews and the
// request chain already ask through this interface.

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface Attributes {
  user: UserInfo;
  verb: string;
  /** resource requests */
  namespace?: string;
  apiGroup?: string;
  apiVersion?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  resourceRequest: boolean;
  /** non-resource requests */
  path?: string;
}

export type Decision = 'allow' | 'deny' | 'noOpinion';

export interface Authorizer {
  authorize(a: Attributes): { decision: Decision; reason: string };
  /** what a user may do in a namespace, for SelfSubjectRulesReview */
  rulesFor(user: UserInfo, namespace: string): {
    resourceRules: { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }[];
    nonResourceRules: { verbs: string[]; nonResourceURLs?: string[] }[];
    incomplete: boolean;
    evaluationError?: string;
  };
}

export class AlwaysAllow implements Authorizer {
  authorize(): { decision: Decision; reason: string } {
    return { decision: 'allow', reason: '' };
  }
  rulesFor() {
    return {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    };
  }
}
