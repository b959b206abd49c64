// The kinds beyond the list that Keelson serves (PodTemplate, RuntimeClass, IPAddress,
// ServiceCIDR, the CSI kinds of storage.k8s.io, FlowSchema and PriorityLevelConfiguration) are
// validated as kube-apiserver 1.33 validates them: a real keelson, kubectl 1.33 and raw HTTPS.
// (Each rule's wording is tested in test/schema/validation-*.test.ts; here, that the server
// applies them on create, update and status writes, with the strategies' server-set fields.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { expectStatus, startCluster, type Cluster } from './harness.js';

let c: Cluster;

before(async () => {
  c = await startCluster({ args: ['--storage-backend=memory'] });
});

after(async () => {
  await c?.stop();
});

const causes = (s: any) => s.details.causes.map((x: any) => `${x.field}: ${x.message}`);

test('invalid objects of each kind are 422 Invalid with Kubernetes\' causes; valid ones are created', async () => {
  const cases: [string, object, string[]][] = [
    [
      '/api/v1/namespaces/default/podtemplates',
      { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'pt' }, template: { spec: { containers: [{ name: 'c', image: '' }] } } },
      ['template.spec.containers[0].image: Required value'],
    ],
    [
      '/apis/node.k8s.io/v1/runtimeclasses',
      { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'rc' }, handler: 'Not Valid' },
      [
        "handler: Invalid value: \"Not Valid\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      ],
    ],
    [
      '/apis/networking.k8s.io/v1/ipaddresses',
      { apiVersion: 'networking.k8s.io/v1', kind: 'IPAddress', metadata: { name: '2001:DB8::1' }, spec: { parentRef: { resource: 'services', name: 'x' } } },
      ['metadata.name: Invalid value: "2001:DB8::1": must be in canonical form ("2001:db8::1")'],
    ],
    [
      '/apis/networking.k8s.io/v1/servicecidrs',
      { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'sc' }, spec: { cidrs: ['10.0.0.1/8'] } },
      ['spec.cidrs[0]: Invalid value: "10.0.0.1/8": must not have bits set beyond the prefix length'],
    ],
    [
      '/apis/storage.k8s.io/v1/csidrivers',
      { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'csi.example.com' }, spec: { volumeLifecycleModes: ['Bogus'] } },
      ['spec.volumeLifecycleModes: Unsupported value: "Bogus": supported values: "Persistent", "Ephemeral"'],
    ],
    [
      '/apis/storage.k8s.io/v1/csinodes',
      { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'n1' }, spec: { drivers: [{ name: 'csi.example.com', nodeID: '' }] } },
      ['spec.drivers[0].nodeID: Required value'],
    ],
    [
      '/apis/storage.k8s.io/v1/volumeattachments',
      { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va' }, spec: { attacher: 'csi.example.com', nodeName: 'n1', source: {} } },
      ['spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName'],
    ],
    [
      '/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities',
      { apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity', metadata: { name: 'cap' }, storageClassName: 'fast', capacity: '-1Gi' },
      ['capacity: Invalid value: "-1Gi": must be greater than or equal to 0'],
    ],
    [
      '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas',
      { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'FlowSchema', metadata: { name: 'fs' }, spec: { priorityLevelConfiguration: { name: 'pl' }, matchingPrecedence: 20000 } },
      ['spec.matchingPrecedence: Invalid value: 20000: must not be greater than 10000'],
    ],
    [
      '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations',
      {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
        kind: 'PriorityLevelConfiguration',
        metadata: { name: 'pl' },
        spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 8, queueLengthLimit: 50 } } } },
      },
      ['spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (4)'],
    ],
  ];
  for (const [path, body, want] of cases) {
    const s = expectStatus(await c.raw('POST', path, { body }), 422, 'Invalid', path);
    assert.deepEqual(causes(s), want, path);
  }
});

test('updates: immutable fields, and the strategies\' status and generation', async () => {
  const rc = await c.raw('POST', '/apis/node.k8s.io/v1/runtimeclasses', { body: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'runc' }, handler: 'runc' } });
  assert.equal(rc.status, 201, rc.text);
  const cur = rc.json();
  cur.handler = 'crun';
  const s = expectStatus(await c.raw('PUT', '/apis/node.k8s.io/v1/runtimeclasses/runc', { body: cur }), 422, 'Invalid');
  assert.deepEqual(causes(s), ['handler: Invalid value: "crun": field is immutable']);

  // a VolumeAttachment starts detached whatever the writer sends; its spec is fixed
  const va = await c.raw('POST', '/apis/storage.k8s.io/v1/volumeattachments', {
    body: { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va' }, spec: { attacher: 'csi.example.com', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } }, status: { attached: true } },
  });
  assert.equal(va.status, 201, va.text);
  assert.deepEqual(va.json().status, { attached: false });
  const v = va.json();
  // (attachError.errorCode belongs to the alpha MutableCSINodeAllocatableCount, off: dropped)
  v.status = { attached: true, attachmentMetadata: { dev: '/dev/x' }, attachError: { message: 'slow', errorCode: 7 } };
  const st = await c.raw('PUT', '/apis/storage.k8s.io/v1/volumeattachments/va/status', { body: v });
  assert.equal(st.status, 200, st.text);
  assert.equal(st.json().status.attached, true);
  assert.deepEqual(st.json().status.attachError, { time: null, message: 'slow' });
  v.spec.nodeName = 'n2';
  expectStatus(await c.raw('PUT', '/apis/storage.k8s.io/v1/volumeattachments/va', { body: { ...v, metadata: st.json().metadata } }), 422, 'Invalid');

  // a CSIDriver's nodeAllocatableUpdatePeriodSeconds (that gate's too) is dropped, not validated
  const drv = await c.raw('POST', '/apis/storage.k8s.io/v1/csidrivers', {
    body: { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'drop.example.com' }, spec: { nodeAllocatableUpdatePeriodSeconds: 5 } },
  });
  assert.equal(drv.status, 201, drv.text);
  assert.equal(drv.json().spec.nodeAllocatableUpdatePeriodSeconds, undefined);

  // flow control objects count generations of their spec and start with an empty status
  const pl = await c.raw('POST', '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations', {
    body: { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'pl' }, spec: { type: 'Limited', limited: { limitResponse: { type: 'Reject' } } }, status: { conditions: [{ type: 'X', status: 'True' }] } },
  });
  assert.equal(pl.status, 201, pl.text);
  assert.equal(pl.json().metadata.generation, 1);
  assert.deepEqual(pl.json().status, {});
  const p = pl.json();
  p.spec.limited.nominalConcurrencyShares = 7;
  const up = await c.raw('PUT', '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/pl', { body: p });
  assert.equal(up.status, 200, up.text);
  assert.equal(up.json().metadata.generation, 2);
});

test('IPAddress names are IP addresses: IPv6 ones too (no DNS name rule), through kubectl', async () => {
  const r = c.kubectl(['create', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'networking.k8s.io/v1', kind: 'IPAddress', metadata: { name: '2001:db8::7' }, spec: { parentRef: { resource: 'services', name: 'x', namespace: 'default' } } }),
  });
  assert.equal(r.code, 0, r.stderr);
  const g = c.kubectl(['get', 'ipaddress', '2001:db8::7', '-o', 'jsonpath={.spec.parentRef.name}']);
  assert.equal(g.stdout, 'x');
  const bad = c.kubectl(['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'networking.k8s.io/v1', kind: 'IPAddress', metadata: { name: 'host.example.com' }, spec: { parentRef: { resource: 'services', name: 'x' } } }) });
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /metadata.name: Invalid value: "host.example.com": must be a valid IP address, \(e\.g\. 10\.9\.8\.7 or 2001:db8::ffff\)/);
});

test('ValidatingAdmissionPolicies and bindings are validated (a CEL syntax error is a compile error); a policy counts generations', async () => {
  const P = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
  const B = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
  const empty = expectStatus(await c.raw('POST', P, { body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'p' }, spec: {} } }), 422, 'Invalid');
  assert.deepEqual(causes(empty), [
    'spec.matchConstraints: Required value',
    'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
    'spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item',
  ]);
  const rules = { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] };
  const syntax = expectStatus(
    await c.raw('POST', P, { body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'p' }, spec: { matchConstraints: rules, validations: [{ expression: 'object.spec.replicas <= ' }] } } }),
    422,
    'Invalid',
  );
  assert.equal(causes(syntax).length, 1);
  assert.match(causes(syntax)[0], /^spec\.validations\[0\]\.expression: Invalid value: "object\.spec\.replicas <= ": compilation failed: /);
  const ok = await c.raw('POST', P, {
    body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'p' }, spec: { matchConstraints: rules, validations: [{ expression: 'object.spec.replicas <= 5' }] }, status: { observedGeneration: 9 } },
  });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json().metadata.generation, 1);
  assert.deepEqual(ok.json().status, {});
  const b = expectStatus(await c.raw('POST', B, { body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'b' }, spec: {} } }), 422, 'Invalid');
  assert.deepEqual(causes(b), ['spec.policyName: Required value', 'spec.validationActions: Required value: at least one validation action is required']);
  const good = await c.raw('POST', B, { body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'b' }, spec: { policyName: 'p', validationActions: ['Deny'] } } });
  assert.equal(good.status, 201, good.text);
});
