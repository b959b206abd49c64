import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Json, JsonObject } from '../../src/apiserver/openapi/json.js';
import { gvDocName, gvPrefix } from '../../src/apiserver/openapi/routes.js';
import { BUILTIN_KINDS } from '../../src/schema/kinds.js';
import { docs, fresh, GIT_VERSION, keywords, obj, unresolvedRefs } from './helpers.js';

const PATCH_TYPES = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];

function doc(name: string): JsonObject {
  const d = docs().v3Object(name);
  assert.ok(d, `no v3 document ${name}`);
  return d;
}

function paramNames(op: JsonObject): string[] {
  return ((op.parameters ?? []) as JsonObject[]).map((p) => `${p.in}:${p.name}`);
}

/** the parameters that apply to an operation: its own and its path's */
function allParams(pathItem: JsonObject, op: JsonObject): string[] {
  return [...paramNames(op), ...paramNames(pathItem)];
}

function schemasWithGVK(d: JsonObject, g: { group: string; version: string; kind: string }): string[] {
  const out: string[] = [];
  for (const [name, s] of Object.entries(obj(obj(d.components).schemas))) {
    const gvks = (s as JsonObject)['x-kubernetes-group-version-kind'];
    if (Array.isArray(gvks) && gvks.some((x) => JSON.stringify(x) === JSON.stringify({ group: g.group, kind: g.kind, version: g.version }))) out.push(name);
  }
  return out;
}

test('every kind has its paths, with fieldValidation on PATCH and POST and the group/version/kind of each operation', () => {
  for (const k of BUILTIN_KINDS) {
    const d = doc(gvDocName(k.group, k.version));
    const paths = obj(d.paths);
    const ns = k.namespaced ? '/namespaces/{namespace}' : '';
    const coll = `${gvPrefix(k.group, k.version)}${ns}/${k.resource}`;
    const item = `${coll}/{name}`;
    const gvk = { group: k.group, kind: k.kind, version: k.version };
    const verbs = new Set(k.verbs);
    const where = `${k.group}/${k.version} ${k.kind}`;

    if (verbs.has('patch')) {
      const pi = obj(paths[item]);
      const patch = obj(pi.patch);
      assert.deepEqual(patch['x-kubernetes-group-version-kind'], gvk, where);
      assert.equal(patch['x-kubernetes-action'], 'patch', where);
      // kubectl looks for fieldValidation on the PATCH operation itself, not on the path
      assert.ok(paramNames(patch).includes('query:fieldValidation'), `${where}: PATCH without fieldValidation`);
      assert.ok(paramNames(patch).includes('query:force'), where);
      assert.deepEqual(Object.keys(obj(obj(patch.requestBody).content)).sort(), PATCH_TYPES, where);
    }
    if (verbs.has('create')) {
      const post = obj(obj(paths[coll]).post);
      assert.deepEqual(post['x-kubernetes-group-version-kind'], gvk, where);
      assert.ok(allParams(obj(paths[coll]), post).includes('query:fieldValidation'), where);
      assert.equal(obj(post.requestBody).required, true, where);
    }
    if (verbs.has('get')) {
      const get = obj(obj(paths[item]).get);
      assert.equal(get['x-kubernetes-action'], 'get', where);
      assert.deepEqual(get['x-kubernetes-group-version-kind'], gvk, where);
      assert.deepEqual(paramNames(obj(paths[item])).sort(), [...(k.namespaced ? ['path:namespace'] : []), 'path:name', 'query:pretty'].sort(), where);
    }
    if (verbs.has('list')) {
      const list = obj(obj(paths[coll]).get);
      assert.equal(list['x-kubernetes-action'], 'list', where);
      // a collection path that is only listed (componentstatuses) carries the list parameters on the path
      for (const p of ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch']) {
        assert.ok(allParams(obj(paths[coll]), list).includes(`query:${p}`), `${where}: list without ${p}`);
      }
      const content = obj(obj(obj(list.responses)['200']).content);
      assert.ok(content['application/json;stream=watch'] && content['application/vnd.kubernetes.protobuf;stream=watch'], where);
      if (k.namespaced) assert.ok(obj(paths[`${gvPrefix(k.group, k.version)}/${k.resource}`]).get, `${where}: no list across namespaces`);
      assert.ok(schemasWithGVK(d, { group: k.group, version: k.version, kind: k.listKind }).length > 0, `${where}: no schema for ${k.listKind}`);
    }
    if (verbs.has('deletecollection')) {
      const del = obj(obj(paths[coll]).delete);
      assert.equal(del['x-kubernetes-action'], 'deletecollection', where);
      assert.ok(paramNames(del).includes('query:ignoreStoreReadErrorWithClusterBreakingPotential'), where);
    }
    if (verbs.has('delete')) {
      const del = obj(obj(paths[item]).delete);
      for (const p of ['dryRun', 'gracePeriodSeconds', 'ignoreStoreReadErrorWithClusterBreakingPotential', 'orphanDependents', 'propagationPolicy']) {
        assert.ok(paramNames(del).includes(`query:${p}`), `${where}: delete without ${p}`);
      }
    }
    if (verbs.has('watch')) {
      const w = `${gvPrefix(k.group, k.version)}/watch${ns}/${k.resource}`;
      assert.equal(obj(obj(paths[w]).get)['x-kubernetes-action'], 'watchlist', where);
      assert.equal(obj(obj(paths[`${w}/{name}`]).get)['x-kubernetes-action'], 'watch', where);
      if (k.namespaced) assert.ok(paths[`${gvPrefix(k.group, k.version)}/watch/${k.resource}`], where);
    }
    for (const sub of k.subresources) {
      const pi = obj(paths[`${item}/${sub.name}`]);
      const subGVK = { group: sub.group, kind: sub.kind, version: sub.version };
      for (const m of ['get', 'put', 'post', 'delete', 'patch']) {
        if (pi[m]) assert.deepEqual(obj(pi[m])['x-kubernetes-group-version-kind'], subGVK, `${where} ${sub.name} ${m}`);
      }
      if (sub.verbs.includes('patch') && !sub.kind.endsWith('Options')) assert.ok(paramNames(obj(pi.patch)).includes('query:fieldValidation'), `${where} ${sub.name}`);
    }
    // kubectl explain: a schema carries the kind's group/version/kind
    assert.deepEqual(schemasWithGVK(d, { group: k.group, version: k.version, kind: k.kind }).length, 1, `${where}: no single schema for the kind`);
  }
});

test('a resource has exactly the operations of its verbs: create-only reviews, get and list only for componentstatuses', () => {
  const methodOf: Record<string, [string, 'coll' | 'item' | 'all' | 'watch']> = {
    list: ['get', 'coll'],
    create: ['post', 'coll'],
    deletecollection: ['delete', 'coll'],
    get: ['get', 'item'],
    update: ['put', 'item'],
    delete: ['delete', 'item'],
    patch: ['patch', 'item'],
  };
  for (const k of BUILTIN_KINDS) {
    const prefix = gvPrefix(k.group, k.version);
    const ns = k.namespaced ? '/namespaces/{namespace}' : '';
    const coll = `${prefix}${ns}/${k.resource}`;
    const shapes = {
      coll,
      item: `${coll}/{name}`,
      all: `${prefix}/${k.resource}`,
      watch: `${prefix}/watch${ns}/${k.resource}`,
    };
    const expected = new Set<string>();
    for (const v of k.verbs) {
      const m = methodOf[v];
      if (m) expected.add(`${m[0].toUpperCase()} ${shapes[m[1]]}`);
    }
    if (k.namespaced && k.verbs.includes('list')) expected.add(`GET ${shapes.all}`);
    if (k.verbs.includes('watch')) {
      expected.add(`GET ${shapes.watch}`);
      expected.add(`GET ${shapes.watch}/{name}`);
      if (k.namespaced) expected.add(`GET ${prefix}/watch/${k.resource}`);
    }
    const candidates = new Set([shapes.coll, shapes.item, shapes.all, shapes.watch, `${shapes.watch}/{name}`, `${prefix}/watch/${k.resource}`]);
    const actual = new Set<string>();
    for (const [path, item] of Object.entries(obj(doc(gvDocName(k.group, k.version)).paths))) {
      if (!candidates.has(path)) continue;
      for (const m of Object.keys(obj(item))) if (m !== 'parameters') actual.add(`${m.toUpperCase()} ${path}`);
    }
    assert.deepEqual([...actual].sort(), [...expected].sort(), `${k.group}/${k.version} ${k.kind}`);
  }
  const p = obj(doc('api/v1').paths);
  assert.equal(obj(obj(p['/api/v1/componentstatuses']).get).description, 'list objects of kind ComponentStatus');
  assert.equal(obj(obj(p['/api/v1/pods']).get).description, 'list or watch objects of kind Pod');
  // a review is answered in the body of the POST, with the review's own kind
  const sar = obj(obj(obj(doc('apis/authorization.k8s.io/v1').paths)['/apis/authorization.k8s.io/v1/selfsubjectaccessreviews']).post);
  assert.equal(sar.operationId, 'createAuthorizationV1SelfSubjectAccessReview');
  assert.equal(sar.description, 'create a SelfSubjectAccessReview');
  assert.deepEqual(Object.keys(obj(sar.responses)), ['200', '201', '202', '401']);
  assert.equal(obj(obj(obj(obj(obj(sar.responses)['201']).content)['application/json']).schema).$ref, '#/components/schemas/io.k8s.api.authorization.v1.SelfSubjectAccessReview');
  const lsar = obj(doc('apis/authorization.k8s.io/v1').paths)['/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews'];
  assert.equal(obj(obj(lsar).post).operationId, 'createAuthorizationV1NamespacedLocalSubjectAccessReview');
  // a virtual kind that cannot be listed has no list schema; componentstatuses has one
  const authz = obj(obj(doc('apis/authorization.k8s.io/v1').components).schemas);
  assert.ok(!Object.keys(authz).some((n) => n.endsWith('ReviewList')));
  assert.deepEqual(obj(obj(obj(doc('api/v1').components).schemas)['io.k8s.api.core.v1.ComponentStatusList'])['x-kubernetes-group-version-kind'], [{ group: '', kind: 'ComponentStatusList', version: 'v1' }]);
});

test('DELETE answers with the object for the resources whose registry returns it', () => {
  const returns = ['/api/v1/namespaces/{namespace}/pods/{name}', '/api/v1/namespaces/{namespace}/podtemplates/{name}', '/apis/storage.k8s.io/v1/csidrivers/{name}', '/apis/storage.k8s.io/v1/csinodes/{name}', '/apis/storage.k8s.io/v1/storageclasses/{name}', '/apis/storage.k8s.io/v1/volumeattachments/{name}'];
  const status = ['/apis/storage.k8s.io/v1/namespaces/{namespace}/csistoragecapacities/{name}', '/apis/node.k8s.io/v1/runtimeclasses/{name}', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}'];
  for (const path of [...returns, ...status]) {
    const name = path.startsWith('/api/') ? 'api/v1' : path.split('/').slice(1, 4).join('/');
    const del = obj(obj(obj(doc(name).paths)[path]).delete);
    const ref = obj(obj(obj(obj(obj(del.responses)['200']).content)['application/json']).schema).$ref as string;
    assert.equal(ref.endsWith('.Status'), status.includes(path), path);
  }
});

test('apiextensions JSONSchemaProps is published as Kubernetes publishes it: a recursive schema whose fields may be named $ref or allOf', () => {
  const A = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1';
  const s = obj(obj(doc('apis/apiextensions.k8s.io/v1').components).schemas);
  const props = obj(obj(s[`${A}.JSONSchemaProps`]).properties);
  assert.equal(obj(s[`${A}.JSONSchemaProps`]).type, 'object');
  assert.equal(obj(props.$ref).type, 'string');
  assert.equal(obj(props.$schema).type, 'string');
  assert.deepEqual(obj(props.properties).additionalProperties, { allOf: [{ $ref: `#/components/schemas/${A}.JSONSchemaProps` }], default: {} });
  assert.equal(obj(props.properties).type, 'object');
  for (const f of ['allOf', 'oneOf', 'anyOf']) {
    assert.equal(obj(props[f]).type, 'array', f);
    assert.deepEqual(obj(obj(props[f]).items).allOf, [{ $ref: `#/components/schemas/${A}.JSONSchemaProps` }], f);
  }
  // a described field wraps its reference in allOf
  const refOf = (v: Json | undefined) => {
    const o = obj(v);
    return (o.$ref ?? obj((o.allOf as Json[] | undefined)?.[0]).$ref) as string;
  };
  assert.equal(refOf(props.not), `#/components/schemas/${A}.JSONSchemaProps`);
  assert.equal(refOf(props.items), `#/components/schemas/${A}.JSONSchemaPropsOrArray`);
  assert.equal(refOf(props.additionalItems), `#/components/schemas/${A}.JSONSchemaPropsOrBool`);
  assert.equal(refOf(props.additionalProperties), `#/components/schemas/${A}.JSONSchemaPropsOrBool`);
  assert.deepEqual(obj(props.dependencies).additionalProperties, { $ref: `#/components/schemas/${A}.JSONSchemaPropsOrStringArray` });
  assert.deepEqual(obj(props.enum).items, { $ref: `#/components/schemas/${A}.JSON` });
  assert.equal(refOf(props.default), `#/components/schemas/${A}.JSON`);
  assert.equal(refOf(props.example), `#/components/schemas/${A}.JSON`);
  assert.deepEqual(obj(props['x-kubernetes-validations'])['x-kubernetes-list-map-keys'], ['rule']);
  assert.equal(obj(props['x-kubernetes-preserve-unknown-fields']).type, 'boolean');
  assert.deepEqual({ type: obj(props.maxLength).type, format: obj(props.maxLength).format }, { type: 'integer', format: 'int64' });
  // the values that are "a schema or something else" carry no type, as kube-openapi leaves them
  for (const t of ['JSON', 'JSONSchemaPropsOrArray', 'JSONSchemaPropsOrBool', 'JSONSchemaPropsOrStringArray']) {
    assert.deepEqual(Object.keys(obj(s[`${A}.${t}`])), ['description'], t);
  }
  // kubectl explain customresourcedefinitions.spec.versions.schema reaches openAPIV3Schema
  const validation = obj(obj(obj(s[`${A}.CustomResourceValidation`]).properties).openAPIV3Schema);
  assert.deepEqual(validation.allOf, [{ $ref: `#/components/schemas/${A}.JSONSchemaProps` }]);
  assert.deepEqual(obj(obj(obj(s[`${A}.CustomResourceDefinitionVersion`]).properties).schema).allOf, [{ $ref: `#/components/schemas/${A}.CustomResourceValidation` }]);
});

test('operation ids follow Kubernetes naming and are unique in each document', () => {
  const ids = new Map<string, string>();
  for (const name of docs().v3Names()) {
    const seen = new Set<string>();
    for (const [path, item] of Object.entries(obj(doc(name).paths))) {
      for (const [m, op] of Object.entries(obj(item))) {
        if (m === 'parameters') continue;
        const id = obj(op).operationId as string;
        assert.ok(!seen.has(id), `${name}: duplicate operationId ${id}`);
        seen.add(id);
        ids.set(id, `${m.toUpperCase()} ${path}`);
      }
    }
  }
  const expect: Record<string, string> = {
    listCoreV1NamespacedPod: 'GET /api/v1/namespaces/{namespace}/pods',
    listCoreV1PodForAllNamespaces: 'GET /api/v1/pods',
    createAppsV1NamespacedDeployment: 'POST /apis/apps/v1/namespaces/{namespace}/deployments',
    deleteAppsV1CollectionNamespacedDeployment: 'DELETE /apis/apps/v1/namespaces/{namespace}/deployments',
    readAppsV1NamespacedDeploymentScale: 'GET /apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale',
    patchCoreV1NamespacedPodStatus: 'PATCH /api/v1/namespaces/{namespace}/pods/{name}/status',
    replaceCoreV1NamespaceFinalize: 'PUT /api/v1/namespaces/{name}/finalize',
    readCoreV1NamespacedPodLog: 'GET /api/v1/namespaces/{namespace}/pods/{name}/log',
    connectCoreV1GetNamespacedPodExec: 'GET /api/v1/namespaces/{namespace}/pods/{name}/exec',
    connectCoreV1PostNamespacedPodAttach: 'POST /api/v1/namespaces/{namespace}/pods/{name}/attach',
    connectCoreV1GetNamespacedPodPortforward: 'GET /api/v1/namespaces/{namespace}/pods/{name}/portforward',
    connectCoreV1HeadNodeProxyWithPath: 'HEAD /api/v1/nodes/{name}/proxy/{path}',
    connectCoreV1OptionsNamespacedServiceProxy: 'OPTIONS /api/v1/namespaces/{namespace}/services/{name}/proxy',
    createCoreV1NamespacedPodBinding: 'POST /api/v1/namespaces/{namespace}/pods/{name}/binding',
    createCoreV1NamespacedBinding: 'POST /api/v1/namespaces/{namespace}/bindings',
    createCoreV1NamespacedPodEviction: 'POST /api/v1/namespaces/{namespace}/pods/{name}/eviction',
    createCoreV1NamespacedServiceAccountToken: 'POST /api/v1/namespaces/{namespace}/serviceaccounts/{name}/token',
    patchCoreV1NamespacedPodEphemeralcontainers: 'PATCH /api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers',
    readCoreV1NamespacedPodResize: 'GET /api/v1/namespaces/{namespace}/pods/{name}/resize',
    replaceCertificatesV1CertificateSigningRequestApproval: 'PUT /apis/certificates.k8s.io/v1/certificatesigningrequests/{name}/approval',
    watchCoreV1NamespacedPod: 'GET /api/v1/watch/namespaces/{namespace}/pods/{name}',
    watchCoreV1NamespacedPodList: 'GET /api/v1/watch/namespaces/{namespace}/pods',
    watchCoreV1PodListForAllNamespaces: 'GET /api/v1/watch/pods',
    watchCoreV1NodeList: 'GET /api/v1/watch/nodes',
    watchCoreV1Node: 'GET /api/v1/watch/nodes/{name}',
    listRbacAuthorizationV1NamespacedRole: 'GET /apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles',
    patchNetworkingV1IngressClass: 'PATCH /apis/networking.k8s.io/v1/ingressclasses/{name}',
    getCoreV1APIResources: 'GET /api/v1/',
    getAppsV1APIResources: 'GET /apis/apps/v1/',
    getCoreAPIVersions: 'GET /api/',
    getAPIVersions: 'GET /apis/',
    getRbacAuthorizationAPIGroup: 'GET /apis/rbac.authorization.k8s.io/',
    getCodeVersion: 'GET /version/',
  };
  for (const [id, where] of Object.entries(expect)) assert.equal(ids.get(id), where, id);
});

test('tags, actions and the connect, log and subresource operations are those of kube-apiserver', () => {
  const p = obj(doc('api/v1').paths);
  const exec = obj(p['/api/v1/namespaces/{namespace}/pods/{name}/exec']);
  assert.deepEqual(Object.keys(exec).filter((k) => k !== 'parameters'), ['get', 'post']);
  assert.equal(obj(exec.get)['x-kubernetes-action'], 'connect');
  assert.deepEqual(obj(exec.get).tags, ['core_v1']);
  assert.deepEqual(obj(exec.get)['x-kubernetes-group-version-kind'], { group: '', kind: 'PodExecOptions', version: 'v1' });
  for (const q of ['command', 'container', 'stderr', 'stdin', 'stdout', 'tty']) assert.ok(paramNames(exec).includes(`query:${q}`), q);
  const proxy = obj(p['/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}']);
  assert.deepEqual(Object.keys(proxy).filter((k) => k !== 'parameters'), ['get', 'put', 'post', 'delete', 'options', 'head', 'patch']);
  assert.ok(paramNames(proxy).includes('path:path') && paramNames(proxy).includes('query:path'));
  const log = obj(obj(p['/api/v1/namespaces/{namespace}/pods/{name}/log']).get);
  assert.equal(log['x-kubernetes-action'], 'get');
  assert.ok(obj(obj(obj(log.responses)['200']).content)['text/plain']);
  for (const q of ['container', 'follow', 'previous', 'sinceSeconds', 'tailLines', 'timestamps', 'limitBytes']) {
    assert.ok(allParams(obj(p['/api/v1/namespaces/{namespace}/pods/{name}/log']), log).includes(`query:${q}`), q);
  }
  const eviction = obj(obj(p['/api/v1/namespaces/{namespace}/pods/{name}/eviction']).post);
  assert.equal(obj(obj(obj(eviction.requestBody).content)['*/*']).schema && JSON.stringify(obj(eviction.requestBody)), JSON.stringify({ content: { '*/*': { schema: { $ref: '#/components/schemas/io.k8s.api.policy.v1.Eviction' } } }, required: true }));
  // a pod's DELETE answers with the pod; a config map's with a Status
  const podDelete = obj(obj(p['/api/v1/namespaces/{namespace}/pods/{name}']).delete);
  assert.equal(obj(obj(obj(obj(obj(podDelete.responses)['200']).content)['application/json']).schema).$ref, '#/components/schemas/io.k8s.api.core.v1.Pod');
  const cmDelete = obj(obj(p['/api/v1/namespaces/{namespace}/configmaps/{name}']).delete);
  assert.equal(obj(obj(obj(obj(obj(cmDelete.responses)['200']).content)['application/json']).schema).$ref, '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Status');
  assert.deepEqual(obj(obj(cmDelete.responses)['401']), { description: 'Unauthorized' });
  const scale = obj(obj(doc('apis/apps/v1').paths)['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale']);
  assert.equal(obj(obj(obj(obj(obj(obj(scale.get).responses)['200']).content)['application/json']).schema).$ref, '#/components/schemas/io.k8s.api.autoscaling.v1.Scale');
  assert.ok(obj(obj(doc('apis/apps/v1').components).schemas)['io.k8s.api.autoscaling.v1.Scale']);
});

test('every $ref of every v3 document resolves within it', () => {
  for (const name of docs().v3Names()) assert.deepEqual(unresolvedRefs(doc(name)), [], name);
  assert.deepEqual(docs().missingTypes(), []);
});

test('schemas carry merge keys, list and map types, formats, defaults, required fields and descriptions', () => {
  const s = obj(obj(doc('api/v1').components).schemas);
  const props = (t: string) => obj(obj(s[t]).properties);

  const containers = obj(props('io.k8s.api.core.v1.PodSpec').containers);
  assert.equal(containers['x-kubernetes-patch-merge-key'], 'name');
  assert.equal(containers['x-kubernetes-patch-strategy'], 'merge');
  assert.equal(containers['x-kubernetes-list-type'], 'map');
  assert.deepEqual(containers['x-kubernetes-list-map-keys'], ['name']);
  assert.deepEqual(obj(containers.items), { allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.Container' }], default: {} });

  const ports = obj(props('io.k8s.api.core.v1.Container').ports);
  assert.equal(ports['x-kubernetes-patch-merge-key'], 'containerPort');
  assert.deepEqual(ports['x-kubernetes-list-map-keys'], ['containerPort', 'protocol']);

  const volumes = obj(props('io.k8s.api.core.v1.PodSpec').volumes);
  assert.equal(volumes['x-kubernetes-patch-strategy'], 'merge,retainKeys');

  const nodeSelector = obj(props('io.k8s.api.core.v1.PodSpec').nodeSelector);
  assert.equal(nodeSelector.type, 'object');
  assert.deepEqual(nodeSelector.additionalProperties, { type: 'string', default: '' });
  assert.equal(nodeSelector['x-kubernetes-map-type'], 'atomic');

  const finalizers = obj(props('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta').finalizers);
  assert.equal(finalizers['x-kubernetes-list-type'], 'set');
  assert.equal(finalizers['x-kubernetes-patch-strategy'], 'merge');
  const owners = obj(props('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta').ownerReferences);
  assert.equal(owners['x-kubernetes-patch-merge-key'], 'uid');

  // an atomic struct
  assert.equal(obj(s['io.k8s.api.core.v1.LocalObjectReference'])['x-kubernetes-map-type'], 'atomic');

  // formats, a required field with its zero default, an enum
  assert.deepEqual({ type: obj(props('io.k8s.api.core.v1.ContainerPort').containerPort).type, format: obj(props('io.k8s.api.core.v1.ContainerPort').containerPort).format }, { type: 'integer', format: 'int32' });
  assert.ok((obj(s['io.k8s.api.core.v1.ContainerPort']).required as string[]).includes('containerPort'));
  assert.equal(obj(props('io.k8s.api.core.v1.Container').name).default, '');
  assert.ok(Array.isArray(obj(props('io.k8s.api.core.v1.Container').imagePullPolicy).enum));

  // the object's metadata is a described reference, wrapped in allOf so that the description stays
  const md = obj(props('io.k8s.api.core.v1.Pod').metadata);
  assert.deepEqual(md.allOf, [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
  assert.deepEqual(md.default, {});
  assert.equal(obj(props('io.k8s.api.core.v1.Pod').apiVersion).type, 'string');
  assert.equal(obj(props('io.k8s.api.core.v1.Pod').kind).type, 'string');

  // kinds carry their group/version/kind as an array
  assert.deepEqual(obj(s['io.k8s.api.core.v1.Pod'])['x-kubernetes-group-version-kind'], [{ group: '', kind: 'Pod', version: 'v1' }]);
  const deleteGVKs = obj(s['io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions'])['x-kubernetes-group-version-kind'] as JsonObject[];
  assert.ok(deleteGVKs.some((g) => g.group === 'apps' && g.version === 'v1'));

  // the special types
  const ios = obj(s['io.k8s.apimachinery.pkg.util.intstr.IntOrString']);
  assert.equal(ios.format, 'int-or-string');
  assert.equal(ios['x-kubernetes-int-or-string'], true);
  assert.deepEqual(ios.oneOf, [{ type: 'integer' }, { type: 'string' }]);
  assert.equal(obj(s['io.k8s.apimachinery.pkg.runtime.RawExtension'])['x-kubernetes-preserve-unknown-fields'], true);
  assert.deepEqual({ type: obj(s['io.k8s.apimachinery.pkg.apis.meta.v1.Time']).type, format: obj(s['io.k8s.apimachinery.pkg.apis.meta.v1.Time']).format }, { type: 'string', format: 'date-time' });
  assert.ok(obj(s['io.k8s.apimachinery.pkg.api.resource.Quantity']).oneOf);
  // a field that refers to a special type keeps its description next to the reference
  const targetPort = obj(obj(obj(s['io.k8s.api.core.v1.ServicePort']).properties).targetPort);
  assert.deepEqual(targetPort.allOf, [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString' }]);

  // no schema key is misplaced: every allOf is a one-element list of a reference
  for (const [k, path, v] of keywords(doc('api/v1'))) {
    if (k !== 'allOf') continue;
    assert.ok(Array.isArray(v) && v.length === 1 && typeof obj(v[0] as Json).$ref === 'string', path);
  }
});

test('the index lists every document by a URL whose hash is the SHA-512 of that document', () => {
  const index = JSON.parse(Buffer.from(docs().v3Index()).toString('utf8')) as { paths: Record<string, { serverRelativeURL: string }> };
  const names = Object.keys(index.paths);
  for (const n of ['api', 'api/v1', 'apis', 'apis/apps', 'apis/apps/v1', 'apis/rbac.authorization.k8s.io/v1', 'version']) assert.ok(names.includes(n), n);
  assert.deepEqual(names, [...names].sort());
  for (const [name, { serverRelativeURL }] of Object.entries(index.paths)) {
    const u = new URL(serverRelativeURL, 'http://x');
    assert.equal(u.pathname, `/openapi/v3/${name}`);
    const d = docs().v3Doc(name);
    assert.ok(d, name);
    const hash = createHash('sha512').update(d.body).digest('hex').toUpperCase();
    assert.equal(u.searchParams.get('hash'), hash, name);
    assert.equal(d.hash, hash);
    assert.match(hash, /^[0-9A-F]{128}$/);
  }
});

test('the discovery documents are those of /api, /apis, /apis/<group> and /version', () => {
  const api = doc('api');
  assert.equal(api.openapi, '3.0.0');
  assert.deepEqual(api.info, { title: 'Kubernetes', version: GIT_VERSION });
  const get = obj(obj(obj(api.paths)['/api/']).get);
  assert.equal(get.operationId, 'getCoreAPIVersions');
  assert.ok(obj(obj(api.components).schemas)['io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions']);
  assert.equal(obj(obj(obj(doc('apis').paths)['/apis/']).get).operationId, 'getAPIVersions');
  assert.equal(obj(obj(obj(doc('apis/apps').paths)['/apis/apps/']).get).operationId, 'getAppsAPIGroup');
  assert.ok(obj(obj(doc('apis/apps').components).schemas)['io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup']);
  const version = doc('version');
  assert.ok(obj(obj(version.components).schemas)['io.k8s.apimachinery.pkg.version.Info']);
  assert.deepEqual(Object.keys(obj(obj(obj(obj(obj(obj(version.paths)['/version/']).get).responses)['200']).content)), ['application/json']);
  assert.ok(obj(obj(doc('api/v1').components).securitySchemes).BearerToken);
  assert.equal(docs().v3Doc('apis/nope/v1'), undefined);
});

test('generation is deterministic', () => {
  const a = fresh();
  const b = fresh();
  // build b's documents in another order than a's
  assert.deepEqual(Buffer.from(b.v2Proto()), Buffer.from(a.v2Proto()));
  for (const n of [...b.v3Names()].reverse()) b.v3Doc(n);
  assert.deepEqual(Buffer.from(a.v3Index()), Buffer.from(b.v3Index()));
  for (const n of a.v3Names()) assert.deepEqual(Buffer.from(a.v3Doc(n)!.body), Buffer.from(b.v3Doc(n)!.body), n);
  assert.deepEqual(Buffer.from(a.v2Json()), Buffer.from(b.v2Json()));
});

test('CBOR media types are listed only when asked for', async () => {
  const { buildOpenAPI } = await import('../../src/apiserver/openapi/index.js');
  const plain = docs().v3Object('api/v1')!;
  const withCbor = buildOpenAPI(BUILTIN_KINDS, { gitVersion: GIT_VERSION, cbor: true }).v3Object('api/v1')!;
  const content = (d: JsonObject) => Object.keys(obj(obj(obj(obj(obj(obj(d.paths)['/api/v1/namespaces/{namespace}/pods']).get).responses)['200']).content));
  assert.ok(!content(plain).includes('application/cbor'));
  assert.ok(content(withCbor).includes('application/cbor') && content(withCbor).includes('application/cbor-seq'));
});
