// Validation of PodTemplate, RuntimeClass, IPAddress and ServiceCIDR: valid objects pass, and
// each rule answers with the exact errors (paths, types, values, messages, order) that
// kube-apiserver 1.33 gives. Objects are written the way they reach validation: defaulted, Go-shaped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ipAddressNameErrors,
  validateIPAddress,
  validateIPAddressUpdate,
  validatePodTemplate,
  validatePodTemplateUpdate,
  validateRuntimeClass,
  validateRuntimeClassUpdate,
  validateServiceCIDR,
  validateServiceCIDRStatusUpdate,
  validateServiceCIDRUpdate,
} from '../../src/schema/validation/node-net.js';
import { LABEL_MSG, LABEL_VALUE_MSG, NAME_PART_MSG, SUBDOMAIN_MSG, mutate, podSpec, strs } from './validation-helpers.js';

// ---- Kubernetes' messages ----

const BAD_IP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
const BAD_CIDR = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';
const ONE_PER_FAMILY = 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64';

// ---- PodTemplate ----

function podTemplate(spec: Record<string, unknown> = {}, labels: Record<string, string> = { app: 'web' }): any {
  return { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'web', namespace: 'default' }, template: { metadata: { labels }, spec: podSpec(spec) } };
}

test('PodTemplate: a valid template', () => {
  assert.deepEqual(strs(validatePodTemplate(podTemplate())), []);
  // a bare template is not a ReplicationController's: any restart policy, no selector to match
  assert.deepEqual(strs(validatePodTemplate(podTemplate({ restartPolicy: 'Never' }, {}))), []);
});

test('PodTemplate: the template is validated as a pod template spec under template.*', () => {
  assert.deepEqual(strs(validatePodTemplate(podTemplate({ containers: [] }))), ['template.spec.containers: Required value']);
  assert.deepEqual(strs(validatePodTemplate(podTemplate({}, { 'bad key!': 'x' }))), [`template.labels: Invalid value: "bad key!": ${NAME_PART_MSG}`]);
  assert.deepEqual(strs(validatePodTemplate(podTemplate({ restartPolicy: 'Sometimes' }))), [
    'template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
  ]);
  assert.deepEqual(strs(validatePodTemplate(podTemplate({ ephemeralContainers: [{ name: 'debug', image: 'busybox', terminationMessagePolicy: 'File', imagePullPolicy: 'Always' }] }))), [
    'template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template',
  ]);
});

test('PodTemplate: an absent template is a zero template', () => {
  assert.deepEqual(strs(validatePodTemplate({ metadata: { name: 'web', namespace: 'default' } })), ['template.spec.containers: Required value']);
});

test('PodTemplate: updates validate the new template, and nothing is immutable', () => {
  const old = podTemplate();
  const changed = podTemplate({ containers: [{ name: 'other', image: 'busybox', terminationMessagePolicy: 'File', imagePullPolicy: 'Always' }] }, { app: 'other' });
  assert.deepEqual(strs(validatePodTemplateUpdate(changed, old)), []);
  assert.deepEqual(strs(validatePodTemplateUpdate(podTemplate({ containers: [] }), old)), ['template.spec.containers: Required value']);
});

// ---- RuntimeClass ----

function runtimeClass(o: Record<string, unknown> = {}): any {
  return { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'gvisor' }, handler: 'runsc', ...o };
}
const tol = (o: Record<string, unknown>) => runtimeClass({ scheduling: { tolerations: [o] } });

test('RuntimeClass: valid objects', () => {
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass())), []);
  assert.deepEqual(
    strs(
      validateRuntimeClass(
        runtimeClass({
          overhead: { podFixed: { cpu: '250m', memory: '120Mi', 'hugepages-2Mi': '4Mi', 'example.com/gpu': '1' } },
          scheduling: {
            nodeSelector: { 'runtime.example.com/gvisor': 'true' },
            tolerations: [
              { key: 'runtime', operator: 'Equal', value: 'gvisor', effect: 'NoSchedule' },
              { operator: 'Exists' },
              { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
            ],
          },
        }),
      ),
    ),
    [],
  );
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ overhead: {}, scheduling: {} }))), []);
});

test('RuntimeClass: the handler is a DNS label', () => {
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ handler: 'Run_SC' }))), [`handler: Invalid value: "Run_SC": ${LABEL_MSG}`]);
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ handler: 'run.sc' }))), ['handler: Invalid value: "run.sc": must not contain dots']);
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ handler: '' }))), [`handler: Invalid value: "": ${LABEL_MSG}`]);
  const long = 'a'.repeat(64);
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ handler: long }))), [`handler: Invalid value: "${long}": must be no more than 63 characters`]);
});

test('RuntimeClass: overhead.podFixed is checked as container limits, under overhead.limits', () => {
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ overhead: { podFixed: { cpu: '-1' } } }))), ['overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0']);
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ overhead: { podFixed: { foo: '1' } } }))), [
    'overhead.limits[foo]: Invalid value: "foo": must be a standard resource type or fully qualified',
    'overhead.limits[foo]: Invalid value: "foo": must be a standard resource for containers',
  ]);
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ overhead: { podFixed: { 'hugepages-2Mi': '3Mi' } } }))), [
    'overhead.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi',
    'overhead: Forbidden: HugePages require cpu or memory',
  ]);
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ overhead: { podFixed: { 'hugepages-2Mi': '2Mi', memory: '64Mi' } } }))), []);
});

test('RuntimeClass: scheduling.nodeSelector is a label map', () => {
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ scheduling: { nodeSelector: { 'bad key!': 'v' } } }))), [`scheduling.nodeSelector: Invalid value: "bad key!": ${NAME_PART_MSG}`]);
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ scheduling: { nodeSelector: { k: 'bad value!' } } }))), [`scheduling.nodeSelector: Invalid value: "bad value!": ${LABEL_VALUE_MSG}`]);
});

test('RuntimeClass: scheduling.tolerations (core checks at the doubled path Kubernetes 1.33 uses)', () => {
  const p = 'scheduling.tolerations.tolerations[0]';
  assert.deepEqual(strs(validateRuntimeClass(tol({ operator: 'Equal', value: 'x' }))), [
    `${p}.operator: Invalid value: "Equal": operator must be Exists when \`key\` is empty, which means "match all values and all keys"`,
  ]);
  assert.deepEqual(strs(validateRuntimeClass(tol({ key: 'bad key!', operator: 'Exists' }))), [`${p}.key: Invalid value: "bad key!": ${NAME_PART_MSG}`]);
  assert.deepEqual(strs(validateRuntimeClass(tol({ key: 'k', operator: 'Exists', value: 'v' }))), [`${p}.operator: Invalid value: "v": value must be empty when \`operator\` is 'Exists'`]);
  assert.deepEqual(strs(validateRuntimeClass(tol({ key: 'k', operator: 'Equal', value: 'bad value!' }))), [`${p}.operator: Invalid value: "bad value!": ${LABEL_VALUE_MSG}`]);
  assert.deepEqual(strs(validateRuntimeClass(tol({ key: 'k', operator: 'In' }))), [`${p}.operator: Unsupported value: "In": supported values: "Equal", "Exists"`]);
  assert.deepEqual(strs(validateRuntimeClass(tol({ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 30 }))), [
    `${p}.effect: Invalid value: "NoSchedule": effect must be 'NoExecute' when \`tolerationSeconds\` is set`,
  ]);
  assert.deepEqual(strs(validateRuntimeClass(tol({ key: 'k', operator: 'Exists', effect: 'Sometimes' }))), [
    `${p}.effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
  ]);
});

test('RuntimeClass: tolerations are unique by key, operator, value and effect', () => {
  const t = { key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute' };
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ scheduling: { tolerations: [t, { ...t, value: 'w' }, t] } }))), [
    'scheduling.tolerations[2]: Duplicate value: core.Toleration{Key:"k", Operator:"Equal", Value:"v", Effect:"NoExecute", TolerationSeconds:(*int64)(nil)}',
  ]);
  // tolerationSeconds is not part of the key (Go prints the pointer's address)
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ scheduling: { tolerations: [t, { ...t, tolerationSeconds: 60 }] } }))), [
    'scheduling.tolerations[1]: Duplicate value: core.Toleration{Key:"k", Operator:"Equal", Value:"v", Effect:"NoExecute", TolerationSeconds:(*int64)(0xc000010000)}',
  ]);
  // an empty operator is not the same key as "Equal"
  assert.deepEqual(strs(validateRuntimeClass(runtimeClass({ scheduling: { tolerations: [t, { ...t, operator: '' }] } }))), []);
});

test('RuntimeClass: errors come in Go order: handler, overhead, nodeSelector, tolerations', () => {
  const rc = runtimeClass({
    handler: 'X',
    overhead: { podFixed: { cpu: '-1' } },
    scheduling: { nodeSelector: { k: 'bad value!' }, tolerations: [{ key: 'k', operator: 'In' }] },
  });
  assert.deepEqual(strs(validateRuntimeClass(rc)), [
    `handler: Invalid value: "X": ${LABEL_MSG}`,
    'overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    `scheduling.nodeSelector: Invalid value: "bad value!": ${LABEL_VALUE_MSG}`,
    'scheduling.tolerations.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"',
  ]);
});

test('RuntimeClass: the handler is immutable', () => {
  const old = runtimeClass();
  assert.deepEqual(strs(validateRuntimeClassUpdate(runtimeClass({ scheduling: { nodeSelector: { a: 'b' } } }), old)), []);
  assert.deepEqual(strs(validateRuntimeClassUpdate(runtimeClass({ handler: 'runc' }), old)), ['handler: Invalid value: "runc": field is immutable']);
});

// ---- IPAddress ----

/** an IPAddress; a null parentRef leaves spec.parentRef out */
function ipAddress(name = '10.96.0.10', parentRef: unknown = { group: '', resource: 'services', namespace: 'kube-system', name: 'kube-dns' }): any {
  const spec = parentRef === null ? {} : { parentRef };
  return { apiVersion: 'networking.k8s.io/v1', kind: 'IPAddress', metadata: { name }, spec };
}

test('IPAddress: names are IP addresses in canonical form', () => {
  for (const ok of ['10.96.0.10', '0.0.0.0', '2001:db8::1', '::', '::1', 'fd00:10:96::a', '1:2:3:4:5:6:7:0', '1::2:0:0:3:4']) assert.deepEqual(ipAddressNameErrors(ok), [], ok);
  assert.deepEqual(ipAddressNameErrors('kube-dns'), [BAD_IP]);
  assert.deepEqual(ipAddressNameErrors(''), [BAD_IP]);
  assert.deepEqual(ipAddressNameErrors('10.96.0.256'), [BAD_IP]);
  assert.deepEqual(ipAddressNameErrors('10.96.0.10/32'), [BAD_IP]);
  assert.deepEqual(ipAddressNameErrors('fe80::1%eth0'), [BAD_IP]);
  assert.deepEqual(ipAddressNameErrors('1::2::3'), [BAD_IP]);
  assert.deepEqual(ipAddressNameErrors('10.096.0.10'), ['must not have leading 0s']);
  assert.deepEqual(ipAddressNameErrors('00001::'), ['must not have leading 0s']);
  assert.deepEqual(ipAddressNameErrors('::ffff:10.96.0.10'), ['must not be an IPv4-mapped IPv6 address']);
  assert.deepEqual(ipAddressNameErrors('::ffff:a60:a'), ['must not be an IPv4-mapped IPv6 address']);
  assert.deepEqual(ipAddressNameErrors('2001:DB8::1'), ['must be in canonical form ("2001:db8::1")']);
  assert.deepEqual(ipAddressNameErrors('2001:0db8:0:0:0:0:0:1'), ['must be in canonical form ("2001:db8::1")']);
  assert.deepEqual(ipAddressNameErrors('2001:db8:0:1:0:0:0:1'), ['must be in canonical form ("2001:db8:0:1::1")']);
  assert.deepEqual(ipAddressNameErrors('1:0:0:2:0:0:3:4'), ['must be in canonical form ("1::2:0:0:3:4")']);
  assert.deepEqual(ipAddressNameErrors('1:2:3:4:5:6::7'), ['must be in canonical form ("1:2:3:4:5:6:0:7")']);
  assert.deepEqual(ipAddressNameErrors('0:0:0:0:0:0:0:0'), ['must be in canonical form ("::")']);
  assert.deepEqual(ipAddressNameErrors('::10.96.0.10'), ['must be in canonical form ("::a60:a")']);
});

test('IPAddress: a valid object', () => {
  assert.deepEqual(strs(validateIPAddress(ipAddress())), []);
  assert.deepEqual(strs(validateIPAddress(ipAddress('2001:db8::a', { group: 'example.com', resource: 'gateways', name: 'gw' }))), []);
});

test('IPAddress: spec.parentRef is required and checked', () => {
  assert.deepEqual(strs(validateIPAddress(ipAddress('10.96.0.10', null))), ['spec.parentRef: Required value']);
  assert.deepEqual(strs(validateIPAddress(ipAddress('10.96.0.10', {}))), ['spec.parentRef.resource: Required value', 'spec.parentRef.name: Required value']);
  assert.deepEqual(strs(validateIPAddress(ipAddress('10.96.0.10', { group: 'Bad_Group', resource: 'a%b', name: 'a/b', namespace: '..' }))), [
    `spec.parentRef.group: Invalid value: "Bad_Group": ${SUBDOMAIN_MSG}`,
    `spec.parentRef.resource: Invalid value: "a%b": may not contain '%'`,
    `spec.parentRef.name: Invalid value: "a/b": may not contain '/'`,
    `spec.parentRef.namespace: Invalid value: "..": may not be '..'`,
  ]);
  assert.deepEqual(strs(validateIPAddress(ipAddress('10.96.0.10', { resource: '.', name: 'x/%' }))), [
    `spec.parentRef.resource: Invalid value: ".": may not be '.'`,
    `spec.parentRef.name: Invalid value: "x/%": may not contain '/'`,
    `spec.parentRef.name: Invalid value: "x/%": may not contain '%'`,
  ]);
});

test('IPAddress: spec.parentRef is immutable', () => {
  const old = ipAddress();
  assert.deepEqual(strs(validateIPAddressUpdate(mutate(old, (o) => (o.metadata.labels = { a: 'b' })), old)), []);
  assert.deepEqual(strs(validateIPAddressUpdate(mutate(old, (o) => (o.spec.parentRef.name = 'other')), old)), [
    'spec.parentRef: Invalid value: networking.ParentReference{Group:"", Resource:"services", Namespace:"kube-system", Name:"other"}: field is immutable',
  ]);
  assert.deepEqual(strs(validateIPAddressUpdate(mutate(old, (o) => delete o.spec.parentRef), old)), ['spec.parentRef: Invalid value: "null": field is immutable']);
  const none = ipAddress('10.96.0.10', null);
  assert.deepEqual(strs(validateIPAddressUpdate(none, none)), []);
});

// ---- ServiceCIDR ----

function serviceCIDR(cidrs?: string[]): any {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name: 'kubernetes' }, spec: cidrs === undefined ? {} : { cidrs } };
}

test('ServiceCIDR: valid objects', () => {
  assert.deepEqual(strs(validateServiceCIDR(serviceCIDR(['10.96.0.0/12']))), []);
  assert.deepEqual(strs(validateServiceCIDR(serviceCIDR(['fd00:10:96::/112']))), []);
  assert.deepEqual(strs(validateServiceCIDR(serviceCIDR(['10.96.0.0/16', 'fd00:10:96::/112']))), []);
  assert.deepEqual(strs(validateServiceCIDR(serviceCIDR(['fd00:10:96::/112', '10.96.0.0/16']))), []);
});

test('ServiceCIDR: one or two CIDRs', () => {
  assert.deepEqual(strs(validateServiceCIDR(serviceCIDR())), ['spec.cidrs: Required value: at least one CIDR required']);
  assert.deepEqual(strs(validateServiceCIDR(serviceCIDR([]))), ['spec.cidrs: Required value: at least one CIDR required']);
  assert.deepEqual(strs(validateServiceCIDR(serviceCIDR(['10.0.0.0/24', 'fd00::/64', 'bad']))), [
    'spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{"10.0.0.0/24", "fd00::/64", "bad"}}: may only hold up to 2 values',
  ]);
});

test('ServiceCIDR: each CIDR is a valid subnet in canonical form', () => {
  const one = (c: string) => strs(validateServiceCIDR(serviceCIDR([c])));
  assert.deepEqual(one('foo'), [`spec.cidrs[0]: Invalid value: "foo": ${BAD_CIDR}`]);
  assert.deepEqual(one('10.0.0.0'), [`spec.cidrs[0]: Invalid value: "10.0.0.0": ${BAD_CIDR}`]);
  assert.deepEqual(one('10.0.0.0/33'), [`spec.cidrs[0]: Invalid value: "10.0.0.0/33": ${BAD_CIDR}`]);
  assert.deepEqual(one('fd00::/129'), [`spec.cidrs[0]: Invalid value: "fd00::/129": ${BAD_CIDR}`]);
  assert.deepEqual(one('10.0.0.0/'), [`spec.cidrs[0]: Invalid value: "10.0.0.0/": ${BAD_CIDR}`]);
  assert.deepEqual(one('010.0.0.0/24'), ['spec.cidrs[0]: Invalid value: "010.0.0.0/24": must not have leading 0s in IP or prefix length']);
  assert.deepEqual(one('10.0.0.0/024'), ['spec.cidrs[0]: Invalid value: "10.0.0.0/024": must not have leading 0s in IP or prefix length']);
  assert.deepEqual(one('::ffff:10.0.0.0/120'), ['spec.cidrs[0]: Invalid value: "::ffff:10.0.0.0/120": must not have an IPv4-mapped IPv6 address']);
  assert.deepEqual(one('10.0.0.1/24'), ['spec.cidrs[0]: Invalid value: "10.0.0.1/24": must not have bits set beyond the prefix length']);
  assert.deepEqual(one('fd00::1/64'), ['spec.cidrs[0]: Invalid value: "fd00::1/64": must not have bits set beyond the prefix length']);
  assert.deepEqual(one('FD00::/64'), ['spec.cidrs[0]: Invalid value: "FD00::/64": must be in canonical form ("fd00::/64")']);
  assert.deepEqual(one('fd00:0:0:0::/64'), ['spec.cidrs[0]: Invalid value: "fd00:0:0:0::/64": must be in canonical form ("fd00::/64")']);
  assert.deepEqual(one('0.0.0.0/0'), []);
  assert.deepEqual(one('::/0'), []);
});

test('ServiceCIDR: two CIDRs are of different families, checked after each CIDR', () => {
  assert.deepEqual(strs(validateServiceCIDR(serviceCIDR(['10.0.0.0/24', '10.1.0.0/24']))), [`spec.cidrs: Invalid value: []string{"10.0.0.0/24", "10.1.0.0/24"}: ${ONE_PER_FAMILY}`]);
  assert.deepEqual(strs(validateServiceCIDR(serviceCIDR(['fd00::/64', 'fd01::/64']))), [`spec.cidrs: Invalid value: []string{"fd00::/64", "fd01::/64"}: ${ONE_PER_FAMILY}`]);
  assert.deepEqual(strs(validateServiceCIDR(serviceCIDR(['10.0.0.1/24', '10.1.0.1/24']))), [
    'spec.cidrs[0]: Invalid value: "10.0.0.1/24": must not have bits set beyond the prefix length',
    'spec.cidrs[1]: Invalid value: "10.1.0.1/24": must not have bits set beyond the prefix length',
    `spec.cidrs: Invalid value: []string{"10.0.0.1/24", "10.1.0.1/24"}: ${ONE_PER_FAMILY}`,
  ]);
  // a CIDR that does not parse has no family
  assert.deepEqual(strs(validateServiceCIDR(serviceCIDR(['bad', 'worse']))), [`spec.cidrs[0]: Invalid value: "bad": ${BAD_CIDR}`, `spec.cidrs[1]: Invalid value: "worse": ${BAD_CIDR}`]);
});

test('ServiceCIDR: updates may only add a second CIDR to a single-stack one', () => {
  const v4 = serviceCIDR(['10.0.0.0/24']);
  const dual = serviceCIDR(['10.0.0.0/24', 'fd00::/64']);
  const upd = (now: any, old: any) => strs(validateServiceCIDRUpdate(now, old));
  assert.deepEqual(upd(v4, v4), []);
  assert.deepEqual(upd(dual, dual), []);
  assert.deepEqual(upd(dual, v4), []);
  assert.deepEqual(upd(serviceCIDR(['10.1.0.0/24']), v4), ['spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable']);
  assert.deepEqual(upd(serviceCIDR(['fd00::/64', '10.0.0.0/24']), dual), [
    'spec.cidrs[0]: Invalid value: "fd00::/64": field is immutable',
    'spec.cidrs[1]: Invalid value: "10.0.0.0/24": field is immutable',
  ]);
  assert.deepEqual(upd(serviceCIDR(['10.1.0.0/24', 'fd00::/64']), v4), ['spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable']);
  assert.deepEqual(upd(serviceCIDR(['10.0.0.0/24', '10.1.0.0/24']), v4), [`spec.cidrs: Invalid value: []string{"10.0.0.0/24", "10.1.0.0/24"}: ${ONE_PER_FAMILY}`]);
  assert.deepEqual(upd(serviceCIDR(['10.0.0.0/24', 'FD00::/64']), v4), ['spec.cidrs[1]: Invalid value: "FD00::/64": must be in canonical form ("fd00::/64")']);
  assert.deepEqual(upd(v4, dual), ['spec.cidrs: Invalid value: []string{"10.0.0.0/24"}: field is immutable']);
  assert.deepEqual(upd(serviceCIDR(['10.0.0.0/24', 'fd00::/64', '10.1.0.0/24']), v4), [
    'spec.cidrs: Invalid value: []string{"10.0.0.0/24", "fd00::/64", "10.1.0.0/24"}: field is immutable',
  ]);
  assert.deepEqual(upd(serviceCIDR(), v4), ['spec.cidrs: Invalid value: []string(nil): field is immutable']);
  assert.deepEqual(upd(serviceCIDR([]), v4), ['spec.cidrs: Invalid value: []string{}: field is immutable']);
});

test('ServiceCIDR: status updates are not validated beyond metadata', () => {
  const old = serviceCIDR(['10.0.0.0/24']);
  const now = mutate(old, (o) => (o.status = { conditions: [{ type: 'Ready', status: 'True', reason: '', message: '', lastTransitionTime: '2025-01-01T00:00:00Z' }] }));
  assert.deepEqual(strs(validateServiceCIDRStatusUpdate(now, old)), []);
});
