// CertificateSubjectRestriction: a CertificateSigningRequest for the kube-apiserver-client signer
// may not ask for the system:masters group (a certificate in it would bypass every authorizer).
import { loadX509 } from '../pki.js';
import type { AdmissionAttributes, AdmissionPlugin } from './types.js';
import { forbidden, isObject } from './util.js';

export function certificateSubjectRestriction(): AdmissionPlugin {
  return {
    name: 'CertificateSubjectRestriction',
    // synchronous (no promise) for every request that is not such a CSR
    validate(a) {
      if (a.resource.group !== 'certificates.k8s.io' || a.resource.resource !== 'certificatesigningrequests') return;
      if (a.operation !== 'CREATE' || a.subresource !== '' || !isObject(a.object)) return;
      const spec = a.object.spec;
      if (spec?.signerName !== 'kubernetes.io/kube-apiserver-client' || typeof spec.request !== 'string') return;
      return checkClientCSR(a, spec.request);
    },
  };
}

async function checkClientCSR(a: AdmissionAttributes, request: string): Promise<void> {
  let orgs: string[];
  try {
    const x509 = await loadX509();
    const pem = Buffer.from(request, 'base64').toString('utf8');
    orgs = new x509.Pkcs10CertificateRequest(pem).subjectName.getField('O');
  } catch (e) {
    throw forbidden(a, `failed to parse CSR: ${(e as Error).message}`);
  }
  if (orgs.includes('system:masters')) throw forbidden(a, 'use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed');
}
