import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allKinds,
  allTypes,
  fieldAtPath,
  getType,
  jsonFields,
  mustGetType,
  protoFields,
  typeByProtoName,
  typeForKind,
  SPECIAL_TYPES,
} from '../../src/schema/types.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import type { FieldDecl, TypeDecl, TypeRef } from '../../src/schema/model.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const CORE = 'io.k8s.api.core.v1';

function field(type: string, name: string): FieldDecl {
  const f = jsonFields(mustGetType(type)).get(name);
  assert.ok(f, `${type}.${name} exists`);
  return f;
}

test('the loader finds Pod and its parts', () => {
  const pod = getType(`${CORE}.Pod`);
  assert.ok(pod);
  assert.equal(pod.protoName, 'k8s.io.api.core.v1.Pod');
  assert.deepEqual(pod.gvk, [{ group: '', version: 'v1', kind: 'Pod' }]);
  assert.equal(pod.typeMeta, true);
  assert.equal(getType('io.k8s.api.core.v1.NoSuchThing'), undefined);
  assert.equal(getType('io.k8s.nowhere.Thing'), undefined);
  assert.throws(() => mustGetType('io.k8s.api.core.v1.NoSuchThing'));
  assert.equal(typeByProtoName('k8s.io.api.core.v1.PodSpec')?.name, `${CORE}.PodSpec`);
  assert.equal(typeByProtoName('k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta')?.name, `${META}.ObjectMeta`);
});

test('ObjectMeta proto numbers', () => {
  const om = `${META}.ObjectMeta`;
  assert.equal(field(om, 'name').proto, 1);
  assert.equal(field(om, 'generateName').proto, 2);
  assert.equal(field(om, 'namespace').proto, 3);
  assert.equal(field(om, 'uid').proto, 5);
  assert.equal(field(om, 'resourceVersion').proto, 6);
  assert.equal(field(om, 'creationTimestamp').proto, 8);
  assert.deepEqual(field(om, 'creationTimestamp').type, { kind: 'special', special: 'Time' });
  assert.equal(field(om, 'creationTimestamp').format, 'date-time');
  assert.equal(field(om, 'labels').proto, 11);
  assert.deepEqual(field(om, 'labels').type, { kind: 'map', values: { kind: 'scalar', scalar: 'string' } });
  assert.equal(field(om, 'annotations').proto, 12);
  assert.equal(field(om, 'ownerReferences').proto, 13);
  assert.equal(field(om, 'ownerReferences').patchMergeKey, 'uid');
  assert.equal(field(om, 'finalizers').proto, 14);
  assert.equal(field(om, 'finalizers').listType, 'set');
  assert.equal(field(om, 'managedFields').proto, 17);
  assert.equal(field(`${META}.ListMeta`, 'resourceVersion').proto, 2);
  assert.equal(field(`${META}.ListMeta`, 'continue').proto, 3);
});

test('Pod, PodSpec and Container facts', () => {
  assert.equal(field(`${CORE}.Pod`, 'metadata').proto, 1);
  assert.equal(field(`${CORE}.Pod`, 'spec').proto, 2);
  assert.equal(field(`${CORE}.Pod`, 'status').proto, 3);
  // kind and apiVersion come first in JSON and have no proto number
  assert.deepEqual([...jsonFields(mustGetType(`${CORE}.Pod`)).keys()], ['kind', 'apiVersion', 'metadata', 'spec', 'status']);
  assert.equal(field(`${CORE}.Pod`, 'kind').proto, undefined);
  assert.equal(protoFields(mustGetType(`${CORE}.Pod`)).size, 3);

  const containers = field(`${CORE}.PodSpec`, 'containers');
  assert.equal(containers.proto, 2);
  assert.equal(containers.patchStrategy, 'merge');
  assert.equal(containers.patchMergeKey, 'name');
  assert.equal(containers.listType, 'map');
  assert.deepEqual(containers.listMapKeys, ['name']);
  assert.equal(containers.optional, false);
  assert.deepEqual(containers.type, { kind: 'array', items: { kind: 'object', name: `${CORE}.Container` } });
  const volumes = field(`${CORE}.PodSpec`, 'volumes');
  assert.equal(volumes.patchStrategy, 'merge,retainKeys');
  assert.equal(field(`${CORE}.PodSpec`, 'restartPolicy').proto, 3);
  assert.deepEqual(field(`${CORE}.PodSpec`, 'restartPolicy').enum, ['Always', 'Never', 'OnFailure']);
  assert.equal(field(`${CORE}.PodSpec`, 'terminationGracePeriodSeconds').nullable, true);
  assert.equal(field(`${CORE}.PodSpec`, 'terminationGracePeriodSeconds').format, 'int64');

  const ports = field(`${CORE}.Container`, 'ports');
  assert.equal(ports.proto, 6);
  assert.equal(ports.patchMergeKey, 'containerPort');
  assert.equal(ports.listType, 'map');
  assert.deepEqual(ports.listMapKeys, ['containerPort', 'protocol']);
  assert.equal(field(`${CORE}.Container`, 'name').optional, false);
  assert.equal(field(`${CORE}.Container`, 'image').proto, 2);
  const protocol = field(`${CORE}.ContainerPort`, 'protocol');
  assert.equal(protocol.default, 'TCP');
  assert.deepEqual(protocol.enum, ['SCTP', 'TCP', 'UDP']);
  assert.equal(field(`${CORE}.ContainerPort`, 'containerPort').format, 'int32');
  const resources = field(`${CORE}.ResourceRequirements`, 'limits');
  assert.deepEqual(resources.type, { kind: 'map', values: { kind: 'special', special: 'Quantity' } });

  assert.equal(fieldAtPath(mustGetType(`${CORE}.Pod`), 'spec.containers.ports.containerPort')?.proto, 3);
});

test('Service, ConfigMap, Secret facts', () => {
  const ports = field(`${CORE}.ServiceSpec`, 'ports');
  assert.equal(ports.proto, 1);
  assert.equal(ports.patchMergeKey, 'port');
  assert.deepEqual(ports.listMapKeys, ['port', 'protocol']);
  assert.deepEqual(field(`${CORE}.ServicePort`, 'targetPort').type, { kind: 'special', special: 'IntOrString' });
  assert.equal(field(`${CORE}.ServicePort`, 'targetPort').format, 'int-or-string');
  assert.equal(field(`${CORE}.ConfigMap`, 'data').proto, 2);
  assert.equal(field(`${CORE}.ConfigMap`, 'binaryData').proto, 3);
  assert.equal(field(`${CORE}.ConfigMap`, 'immutable').nullable, true);
  const data = field(`${CORE}.Secret`, 'data');
  assert.deepEqual(data.type, { kind: 'map', values: { kind: 'scalar', scalar: 'bytes' } });
  assert.equal(data.proto, 2);
  assert.equal(field(`${CORE}.Secret`, 'stringData').proto, 4);
  assert.equal(field(`${CORE}.Secret`, 'type').proto, 3);
});

test('inline structs: Volume inlines VolumeSource at proto 2', () => {
  const volume = mustGetType(`${CORE}.Volume`);
  const vs = volume.fields.find((f) => f.name === 'volumeSource');
  assert.ok(vs);
  assert.equal(vs.inline, true);
  assert.equal(vs.proto, 2);
  assert.deepEqual(vs.type, { kind: 'object', name: `${CORE}.VolumeSource` });
  const json = jsonFields(volume);
  assert.ok(json.has('configMap'));
  assert.ok(json.has('emptyDir'));
  assert.ok(!json.has('volumeSource'));
  assert.equal(json.get('name')?.proto, 1);
  assert.equal(protoFields(volume).get(2)?.name, 'volumeSource');

  const pvSpec = mustGetType(`${CORE}.PersistentVolumeSpec`);
  assert.ok(pvSpec.fields.some((f) => f.inline && f.name === 'persistentVolumeSource' && f.proto === 2));
  assert.ok(jsonFields(pvSpec).has('hostPath'));
  const eph = mustGetType(`${CORE}.EphemeralContainer`);
  const common = eph.fields.find((f) => f.name === 'ephemeralContainerCommon');
  assert.equal(common?.inline, true);
  assert.equal(common?.proto, 1);
  assert.ok(jsonFields(eph).has('image'));
  assert.ok(jsonFields(eph).has('targetContainerName'));
});

test('wrapped arrays, bytes and specials', () => {
  const extra = field('io.k8s.api.authentication.v1.UserInfo', 'extra');
  assert.deepEqual(extra.type, {
    kind: 'map',
    values: { kind: 'array', items: { kind: 'scalar', scalar: 'string' }, wrapper: 'k8s.io.api.authentication.v1.ExtraValue' },
  });
  const verbs = field(`${META}.APIResource`, 'verbs');
  assert.equal(verbs.type.kind === 'array' && verbs.type.wrapper, 'k8s.io.apimachinery.pkg.apis.meta.v1.Verbs');
  assert.deepEqual(field('io.k8s.api.apps.v1.ControllerRevision', 'data').type, { kind: 'special', special: 'RawExtension' });
  assert.deepEqual(field(`${META}.ManagedFieldsEntry`, 'fieldsV1').type, { kind: 'special', special: 'FieldsV1' });
  assert.deepEqual(field('io.k8s.api.coordination.v1.LeaseSpec', 'renewTime').type, { kind: 'special', special: 'MicroTime' });
  const jsp = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';
  assert.deepEqual(field(jsp, 'items').type, { kind: 'special', special: 'JSONSchemaPropsOrArray' });
  assert.deepEqual(field(jsp, 'additionalProperties').type, { kind: 'special', special: 'JSONSchemaPropsOrBool' });
  assert.deepEqual(field(jsp, 'default').type, { kind: 'special', special: 'JSON' });
  assert.equal(field(jsp, '$ref').proto, 3);
  assert.equal(field(jsp, 'maximum').format, 'double');
  assert.equal(field(jsp, 'x-kubernetes-preserve-unknown-fields').proto, 38);
  // array of enum values carries the enum on its items
  const accessModes = field(`${CORE}.PersistentVolumeClaimSpec`, 'accessModes');
  assert.ok(accessModes.type.kind === 'array' && accessModes.type.items.kind === 'scalar' && accessModes.type.items.enum?.includes('ReadWriteOnce'));
  for (const s of Object.values(SPECIAL_TYPES)) assert.match(s.name, /^io\.k8s\./);
});

test('every object reference resolves to a declared type (closure)', () => {
  const types = allTypes();
  assert.ok(types.size > 400);
  const missing: string[] = [];
  const visit = (ref: TypeRef, where: string): void => {
    if (ref.kind === 'object' && !types.has(ref.name)) missing.push(`${where} -> ${ref.name}`);
    else if (ref.kind === 'array') visit(ref.items, where);
    else if (ref.kind === 'map') visit(ref.values, where);
  };
  for (const t of types.values()) {
    for (const f of t.fields) visit(f.type, `${t.name}.${f.name}`);
    // every type's JSON view builds (inline structs resolve)
    jsonFields(t);
  }
  assert.deepEqual(missing, []);
});

test('declarations are well formed', () => {
  for (const t of allTypes().values()) {
    assert.match(t.name, /^io\.k8s\./);
    const seenJson = new Set<string>();
    const seenProto = new Set<number>();
    for (const f of t.fields) {
      assert.ok(!seenJson.has(f.name), `${t.name}.${f.name} duplicate`);
      seenJson.add(f.name);
      if (f.proto !== undefined) {
        assert.ok(Number.isInteger(f.proto) && f.proto > 0, `${t.name}.${f.name} proto`);
        assert.ok(!seenProto.has(f.proto), `${t.name}.${f.name} duplicate proto ${f.proto}`);
        seenProto.add(f.proto);
      } else {
        assert.ok(t.noProto, `${t.name}.${f.name} has no proto number but the type has a message`);
      }
      if (f.listMapKeys) assert.equal(f.listType, 'map', `${t.name}.${f.name}`);
      if (f.inline) assert.equal(f.type.kind, 'object', `${t.name}.${f.name}`);
    }
    if (!t.noProto) assert.equal(typeByProtoName(t.protoName), t);
  }
});

test('every built-in kind has a root type with a matching gvk', () => {
  for (const k of BUILTIN_KINDS) {
    const t = typeForKind(k.group, k.version, k.kind);
    assert.ok(t, `${k.group}/${k.version} ${k.kind}`);
    assert.equal(t.name, k.type, `${k.kind} type name`);
    assert.ok(t.gvk?.some((g) => g.group === k.group && g.version === k.version && g.kind === k.kind));
    assert.ok(t.typeMeta, `${k.kind} embeds TypeMeta`);
    assert.ok(jsonFields(t).has('metadata'), `${k.kind} has metadata`);
    const list = typeForKind(k.group, k.version, k.listKind);
    if (!k.virtual) {
      assert.ok(list, `${k.listKind}`);
      assert.equal(jsonFields(list).get('items')?.type.kind, 'array');
    }
    for (const s of k.subresources) {
      assert.ok(typeForKind(s.group, s.version, s.kind), `${k.kind}/${s.name} -> ${s.group}/${s.version} ${s.kind}`);
    }
  }
});

test('meta kinds and extra groups', () => {
  const expect: [string, string, string, string][] = [
    ['', 'v1', 'Status', `${META}.Status`],
    ['', 'v1', 'APIResourceList', `${META}.APIResourceList`],
    ['', 'v1', 'APIGroupList', `${META}.APIGroupList`],
    ['', 'v1', 'APIVersions', `${META}.APIVersions`],
    ['', 'v1', 'DeleteOptions', `${META}.DeleteOptions`],
    ['', 'v1', 'WatchEvent', `${META}.WatchEvent`],
    ['meta.k8s.io', 'v1', 'Table', `${META}.Table`],
    ['meta.k8s.io', 'v1', 'PartialObjectMetadataList', `${META}.PartialObjectMetadataList`],
    ['autoscaling', 'v1', 'Scale', 'io.k8s.api.autoscaling.v1.Scale'],
    ['autoscaling', 'v2', 'HorizontalPodAutoscaler', 'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler'],
    ['policy', 'v1', 'Eviction', 'io.k8s.api.policy.v1.Eviction'],
    ['authentication.k8s.io', 'v1', 'TokenRequest', 'io.k8s.api.authentication.v1.TokenRequest'],
    ['authentication.k8s.io', 'v1', 'TokenReview', 'io.k8s.api.authentication.v1.TokenReview'],
    ['authentication.k8s.io', 'v1', 'SelfSubjectReview', 'io.k8s.api.authentication.v1.SelfSubjectReview'],
    ['authorization.k8s.io', 'v1', 'SubjectAccessReview', 'io.k8s.api.authorization.v1.SubjectAccessReview'],
    ['authorization.k8s.io', 'v1', 'SelfSubjectRulesReview', 'io.k8s.api.authorization.v1.SelfSubjectRulesReview'],
    ['authorization.k8s.io', 'v1', 'LocalSubjectAccessReview', 'io.k8s.api.authorization.v1.LocalSubjectAccessReview'],
    ['admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration', 'io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration'],
    ['apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition'],
    ['apiextensions.k8s.io', 'v1', 'CustomResourceDefinitionList', 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionList'],
    ['node.k8s.io', 'v1', 'RuntimeClass', 'io.k8s.api.node.v1.RuntimeClass'],
    ['apiregistration.k8s.io', 'v1', 'APIService', 'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService'],
    ['apiregistration.k8s.io', 'v1', 'APIServiceList', 'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceList'],
    ['apiregistration.k8s.io', 'v1', 'DeleteOptions', `${META}.DeleteOptions`],
    ['flowcontrol.apiserver.k8s.io', 'v1', 'FlowSchema', 'io.k8s.api.flowcontrol.v1.FlowSchema'],
    ['storage.k8s.io', 'v1', 'CSIDriver', 'io.k8s.api.storage.v1.CSIDriver'],
    ['storage.k8s.io', 'v1', 'VolumeAttachment', 'io.k8s.api.storage.v1.VolumeAttachment'],
    ['apidiscovery.k8s.io', 'v2', 'APIGroupDiscoveryList', 'io.k8s.api.apidiscovery.v2.APIGroupDiscoveryList'],
    ['apidiscovery.k8s.io', 'v2beta1', 'APIGroupDiscoveryList', 'io.k8s.api.apidiscovery.v2beta1.APIGroupDiscoveryList'],
    ['', 'v1', 'ConfigMapList', `${CORE}.ConfigMapList`],
    ['', 'v1', 'PodExecOptions', `${CORE}.PodExecOptions`],
    ['', 'v1', 'PodLogOptions', `${CORE}.PodLogOptions`],
  ];
  for (const [g, v, k, name] of expect) assert.equal(typeForKind(g, v, k)?.name, name, `${g}/${v} ${k}`);
  assert.ok(allKinds().length > 100);
  const info = mustGetType('io.k8s.apimachinery.pkg.version.Info');
  assert.equal(info.noProto, true);
  assert.ok(jsonFields(info).has('gitVersion'));
  assert.equal(mustGetType(`${META}.Table`).noProto, true);
  assert.equal(typeForKind('', 'v1', 'List'), undefined);
  // the options and watch events are kinds of every group version
  assert.equal(typeForKind('apps', 'v1', 'DeleteOptions')?.name, `${META}.DeleteOptions`);
  assert.equal(typeForKind('batch', 'v1', 'WatchEvent')?.name, `${META}.WatchEvent`);
  // no group/version/kind has two root types
  const seen = new Map<string, string>();
  for (const t of allTypes().values()) {
    for (const g of t.gvk ?? []) {
      const key = `${g.group}/${g.version}/${g.kind}`;
      assert.ok(!seen.has(key), `${key}: ${seen.get(key)} and ${t.name}`);
      seen.set(key, t.name);
    }
  }
});

test('descriptions are merged for the main kinds', () => {
  const described = (t: TypeDecl): boolean => typeof t.description === 'string' && t.description.length > 0;
  for (const k of BUILTIN_KINDS) assert.ok(described(mustGetType(k.type)), `${k.type} has a description`);
  assert.ok(field(`${META}.ObjectMeta`, 'name').description);
  assert.ok(field(`${CORE}.PodSpec`, 'containers').description);
  assert.ok(field(`${CORE}.Container`, 'image').description);
});

test('every type and field of every generated package has a description', () => {
  const missing: string[] = [];
  for (const t of allTypes().values()) {
    if (!t.description) missing.push(t.name);
    for (const f of t.fields) if (!f.inline && !f.description) missing.push(`${t.name}.${f.name}`);
  }
  assert.deepEqual(missing, []);
});

test('apiregistration.k8s.io/v1 APIService as kube-aggregator declares it', () => {
  const A = 'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1';
  const svc = mustGetType(`${A}.APIService`);
  assert.equal(svc.protoName, 'k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIService');
  assert.equal(svc.typeMeta, true);
  assert.deepEqual(protoFields(svc).get(2)?.name, 'spec');
  const spec = mustGetType(`${A}.APIServiceSpec`);
  const byName = jsonFields(spec);
  assert.deepEqual(
    [...byName.values()].map((f) => [f.name, f.proto, f.optional]),
    [
      ['service', 1, true],
      ['group', 2, true],
      ['version', 3, true],
      ['insecureSkipTLSVerify', 4, true],
      ['caBundle', 5, true],
      ['groupPriorityMinimum', 7, false],
      ['versionPriority', 8, false],
    ],
  );
  assert.equal(byName.get('caBundle')?.listType, 'atomic');
  assert.deepEqual(byName.get('caBundle')?.type, { kind: 'scalar', scalar: 'bytes' });
  const conditions = field(`${A}.APIServiceStatus`, 'conditions');
  assert.equal(conditions.listType, 'map');
  assert.deepEqual(conditions.listMapKeys, ['type']);
  assert.equal(conditions.patchMergeKey, 'type');
  assert.equal(field(`${A}.ServiceReference`, 'port').nullable, true);
  assert.deepEqual(field(`${A}.APIServiceCondition`, 'lastTransitionTime').type, { kind: 'special', special: 'Time' });
});
