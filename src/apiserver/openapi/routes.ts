// The REST operations of every served resource, in a form neutral to the OpenAPI version:
// the URL shapes kube-apiserver installs for a resource (collection and object, namespaced and
// across namespaces, the legacy /watch/ paths, every subresource), each with Kubernetes'
// operationId, tag, x-kubernetes-action, group/version/kind, parameters, body and responses.
import type { FieldDecl, KindDecl, SubresourceDecl, TypeDecl } from '../../schema/model.js';
import { byteOrder } from './json.js';
import {
  CREATE_PARAMS,
  DELETE_PARAMS,
  DELETECOLLECTION_PARAMS,
  LIST_PARAMS,
  NAMESPACE_PARAM,
  PATCH_PARAMS,
  UPDATE_PARAMS,
  P,
  pathParam,
  type Param,
  type ParamType,
} from './params.js';
import type { GVK } from './schemas.js';
import type { TypeSource } from './source.js';

export type Method = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch';
/** the order in which methods appear in a path item */
export const METHODS: Method[] = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

export type Schema = { ref: string } | { type: 'string' };

export interface Response {
  code: '200' | '201' | '202';
  schema: Schema;
  /** the media types of the response body */
  mediaTypes: string[];
}

export interface Operation {
  method: Method;
  operationId: string;
  description: string;
  tag: string;
  /** x-kubernetes-action */
  action?: string;
  gvk?: GVK;
  params: Param[];
  body?: { ref: string; mediaTypes: string[]; required: boolean };
  responses: Response[];
  /** v2 `consumes` and `produces` */
  consumes: string[];
  produces: string[];
}

export interface Route {
  path: string;
  ops: Operation[];
}

export interface MediaOptions {
  /** list CBOR (application/cbor, application/cbor-seq) among the response media types */
  cbor: boolean;
}

export const PATCH_TYPES = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];
/** v2 `consumes` of a PATCH, in Kubernetes' order */
const PATCH_CONSUMES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];
/** a custom resource takes no strategic merge patch (kubectl's apply reads this to choose merge patch) */
const CUSTOM_PATCH_TYPES = PATCH_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json');
const CUSTOM_PATCH_CONSUMES = PATCH_CONSUMES.filter((t) => t !== 'application/strategic-merge-patch+json');

export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
export const DELETE_OPTIONS = `${META}.DeleteOptions`;
export const STATUS = `${META}.Status`;
export const WATCH_EVENT = `${META}.WatchEvent`;
export const PATCH = `${META}.Patch`;
export const API_RESOURCE_LIST = `${META}.APIResourceList`;

/**
 * Resources whose DELETE answers with the deleted object rather than a Status, as
 * kube-apiserver's registries for them do (ReturnDeletedObject), by '<group>/<resource>'.
 */
const RETURNS_DELETED_OBJECT = new Set([
  '/persistentvolumeclaims',
  '/persistentvolumes',
  '/pods',
  '/podtemplates',
  '/resourcequotas',
  '/serviceaccounts',
  '/services',
  'storage.k8s.io/csidrivers',
  'storage.k8s.io/csinodes',
  'storage.k8s.io/storageclasses',
  'storage.k8s.io/volumeattachments',
]);

/** 'Core', 'Apps', 'RbacAuthorization', 'Networking', 'FlowcontrolApiserver' */
export function groupTitle(group: string): string {
  if (group === '') return 'Core';
  return group
    .replace(/\.k8s\.io$/, '')
    .split(/[.-]/)
    .filter((s) => s !== '')
    .map((s) => s[0].toUpperCase() + s.slice(1))
    .join('');
}

/** 'core_v1', 'apps_v1', 'rbacAuthorization_v1' */
export function gvTag(group: string, version: string): string {
  const t = groupTitle(group);
  return `${t[0].toLowerCase()}${t.slice(1)}_${version}`;
}

/** 'core', 'apps', 'rbacAuthorization' */
export function groupTag(group: string): string {
  const t = groupTitle(group);
  return t[0].toLowerCase() + t.slice(1);
}

function cap(s: string): string {
  return s === '' ? s : s[0].toUpperCase() + s.slice(1);
}

/** 'a Pod', 'an Event', 'Endpoints' (a plural takes no article, as in Kubernetes' descriptions) */
function withArticle(kind: string): string {
  if (kind.endsWith('s') && !kind.endsWith('ss')) return kind;
  return `${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

/** '/api/v1' or '/apis/<group>/<version>' */
export function gvPrefix(group: string, version: string): string {
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

/** 'api/v1' or 'apis/<group>/<version>': the name of the group version's OpenAPI v3 document */
export function gvDocName(group: string, version: string): string {
  return gvPrefix(group, version).slice(1);
}

export class RouteBuilder {
  private readonly object: string[];
  private readonly stream: string[];

  constructor(
    private readonly src: TypeSource,
    media: MediaOptions,
  ) {
    this.object = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
    if (media.cbor) this.object.push('application/cbor');
    this.stream = [...this.object, 'application/json;stream=watch', 'application/vnd.kubernetes.protobuf;stream=watch'];
    if (media.cbor) this.stream.push('application/cbor-seq');
  }

  /** the root type of a kind, by its declaration, by the schema loader, or by name */
  typeOf(group: string, version: string, kind: string, fallback?: string): string {
    return this.src.forKind(group, version, kind)?.name ?? fallback ?? conventionalTypeName(group, version, kind);
  }

  /** the routes of one group version: its discovery path and every resource's paths, sorted by path */
  groupVersion(group: string, version: string, kinds: KindDecl[]): Route[] {
    const routes = new Map<string, Operation[]>();
    const add = (path: string, op: Operation) => {
      let ops = routes.get(path);
      if (!ops) routes.set(path, (ops = []));
      if (!ops.some((o) => o.method === op.method)) ops.push(op);
    };
    const prefix = gvPrefix(group, version);
    const tag = gvTag(group, version);
    const gvTitle = groupTitle(group) + cap(version);
    add(`${prefix}/`, {
      method: 'get',
      operationId: `get${gvTitle}APIResources`,
      description: 'get available resources',
      tag,
      params: [],
      responses: [{ code: '200', schema: { ref: API_RESOURCE_LIST }, mediaTypes: this.discoveryMedia() }],
      consumes: ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'],
      produces: this.discoveryMedia(),
    });
    for (const k of kinds) this.resource(k, prefix, tag, gvTitle, add);
    return [...routes.entries()]
      .sort((a, b) => byteOrder(a[0], b[0]))
      .map(([path, ops]) => ({ path, ops: ops.sort((a, b) => METHODS.indexOf(a.method) - METHODS.indexOf(b.method)) }));
  }

  discoveryMedia(): string[] {
    return ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
  }

  private resource(k: KindDecl, prefix: string, tag: string, gvTitle: string, add: (path: string, op: Operation) => void): void {
    const K = k.kind;
    const gvk: GVK = { group: k.group, version: k.version, kind: K };
    const kindType = this.typeOf(k.group, k.version, K, k.type);
    const listType = this.typeOf(k.group, k.version, k.listKind, `${k.type}List`);
    const scope = k.namespaced ? 'Namespaced' : '';
    const nsSeg = k.namespaced ? '/namespaces/{namespace}' : '';
    const nsParams = k.namespaced ? [NAMESPACE_PARAM] : [];
    const coll = `${prefix}${nsSeg}/${k.resource}`;
    const item = `${coll}/{name}`;
    const nameParam = pathParam('name', `name of the ${K}`);
    const verbs = new Set(k.verbs);
    const base = { tag, gvk };
    const objResp = (codes: Response['code'][], ref = kindType): Response[] => codes.map((code) => ({ code, schema: { ref }, mediaTypes: this.object }));
    const deleteRef = RETURNS_DELETED_OBJECT.has(`${k.group}/${k.resource}`) ? kindType : STATUS;

    if (verbs.has('list')) {
      const list = (path: string, operationId: string, params: Param[]) =>
        add(path, {
          ...base,
          method: 'get',
          operationId,
          // a resource that cannot be watched (componentstatuses) is only listed
          description: verbs.has('watch') ? `list or watch objects of kind ${K}` : `list objects of kind ${K}`,
          action: 'list',
          params: [...params, P.pretty, ...LIST_PARAMS],
          responses: [{ code: '200', schema: { ref: listType }, mediaTypes: this.stream }],
          consumes: ['*/*'],
          produces: this.stream,
        });
      list(coll, `list${gvTitle}${scope}${K}`, nsParams);
      if (k.namespaced) list(`${prefix}/${k.resource}`, `list${gvTitle}${K}ForAllNamespaces`, []);
    }
    if (verbs.has('create')) {
      add(coll, {
        ...base,
        method: 'post',
        operationId: `create${gvTitle}${scope}${K}`,
        description: `create ${withArticle(K)}`,
        action: 'post',
        params: [...nsParams, P.pretty, ...CREATE_PARAMS],
        body: { ref: kindType, mediaTypes: ['*/*'], required: true },
        responses: objResp(['200', '201', '202']),
        consumes: ['*/*'],
        produces: this.object,
      });
    }
    if (verbs.has('deletecollection')) {
      add(coll, {
        ...base,
        method: 'delete',
        operationId: `delete${gvTitle}Collection${scope}${K}`,
        description: `delete collection of ${K}`,
        action: 'deletecollection',
        params: [...nsParams, P.pretty, ...DELETECOLLECTION_PARAMS],
        body: { ref: DELETE_OPTIONS, mediaTypes: ['*/*'], required: false },
        responses: objResp(['200'], STATUS),
        consumes: ['*/*'],
        produces: this.object,
      });
    }
    const itemParams = [nameParam, ...nsParams, P.pretty];
    if (verbs.has('get')) {
      add(item, {
        ...base,
        method: 'get',
        operationId: `read${gvTitle}${scope}${K}`,
        description: `read the specified ${K}`,
        action: 'get',
        params: itemParams,
        responses: objResp(['200']),
        consumes: ['*/*'],
        produces: this.object,
      });
    }
    if (verbs.has('update')) {
      add(item, {
        ...base,
        method: 'put',
        operationId: `replace${gvTitle}${scope}${K}`,
        description: `replace the specified ${K}`,
        action: 'put',
        params: [...itemParams, ...UPDATE_PARAMS],
        body: { ref: kindType, mediaTypes: ['*/*'], required: true },
        responses: objResp(['200', '201']),
        consumes: ['*/*'],
        produces: this.object,
      });
    }
    if (verbs.has('delete')) {
      add(item, {
        ...base,
        method: 'delete',
        operationId: `delete${gvTitle}${scope}${K}`,
        description: `delete ${withArticle(K)}`,
        action: 'delete',
        params: [...itemParams, ...DELETE_PARAMS],
        body: { ref: DELETE_OPTIONS, mediaTypes: ['*/*'], required: false },
        responses: objResp(['200', '202'], deleteRef),
        consumes: ['*/*'],
        produces: this.object,
      });
    }
    if (verbs.has('patch')) {
      add(item, {
        ...base,
        method: 'patch',
        operationId: `patch${gvTitle}${scope}${K}`,
        description: `partially update the specified ${K}`,
        action: 'patch',
        params: [...itemParams, ...PATCH_PARAMS],
        body: { ref: PATCH, mediaTypes: k.custom ? CUSTOM_PATCH_TYPES : PATCH_TYPES, required: true },
        responses: objResp(['200', '201']),
        consumes: k.custom ? CUSTOM_PATCH_CONSUMES : PATCH_CONSUMES,
        produces: this.object,
      });
    }
    if (verbs.has('watch')) {
      const watch = (path: string, operationId: string, action: string, description: string, params: Param[]) =>
        add(path, {
          ...base,
          method: 'get',
          operationId,
          description,
          action,
          params: [...params, P.pretty, ...LIST_PARAMS],
          responses: [{ code: '200', schema: { ref: WATCH_EVENT }, mediaTypes: this.stream }],
          consumes: ['*/*'],
          produces: this.stream,
        });
      const wprefix = `${prefix}/watch${nsSeg}/${k.resource}`;
      const listNote = "deprecated: use the 'watch' parameter with a list operation instead.";
      watch(
        `${wprefix}/{name}`,
        `watch${gvTitle}${scope}${K}`,
        'watch',
        `watch changes to an object of kind ${K}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`,
        [nameParam, ...nsParams],
      );
      watch(wprefix, `watch${gvTitle}${scope}${K}List`, 'watchlist', `watch individual changes to a list of ${K}. ${listNote}`, nsParams);
      if (k.namespaced) {
        watch(`${prefix}/watch/${k.resource}`, `watch${gvTitle}${K}ListForAllNamespaces`, 'watchlist', `watch individual changes to a list of ${K}. ${listNote}`, []);
      }
    }
    for (const sub of k.subresources) this.subresource(k, sub, item, nsParams, base.tag, gvTitle, scope, add);
  }

  private subresource(
    k: KindDecl,
    sub: SubresourceDecl,
    item: string,
    nsParams: Param[],
    tag: string,
    gvTitle: string,
    scope: string,
    add: (path: string, op: Operation) => void,
  ): void {
    const K = k.kind;
    const S = cap(sub.name);
    const path = `${item}/${sub.name}`;
    const subGVK: GVK = { group: sub.group, version: sub.version, kind: sub.kind };
    const verbs = new Set(sub.verbs);

    if (isConnect(sub)) {
      const opts = this.src.forKind(sub.group, sub.version, sub.kind);
      const nameParam = pathParam('name', `name of the ${sub.kind}`);
      const query = optionParams(opts);
      const methods: Method[] = verbs.has('update') || verbs.has('delete') || verbs.has('patch')
        ? ['get', 'put', 'post', 'delete', 'options', 'head', 'patch']
        : METHODS.filter((m) => (m === 'get' && verbs.has('get')) || (m === 'post' && verbs.has('create')));
      const connect = (p: string, suffix: string, params: Param[]) => {
        for (const m of methods) {
          add(p, {
            method: m,
            operationId: `connect${gvTitle}${cap(m)}${scope}${K}${S}${suffix}`,
            description: `connect ${m.toUpperCase()} requests to ${sub.name} of ${K}`,
            tag,
            action: 'connect',
            gvk: subGVK,
            params,
            responses: [{ code: '200', schema: { type: 'string' }, mediaTypes: ['*/*'] }],
            consumes: ['*/*'],
            produces: ['*/*'],
          });
        }
      };
      connect(path, '', [nameParam, ...nsParams, ...query]);
      // a proxy also takes the rest of the URL as the path to proxy to
      if (query.some((p) => p.name === 'path')) {
        connect(`${path}/{path}`, 'WithPath', [nameParam, ...nsParams, pathParam('path', 'path to the resource'), ...query]);
      }
      return;
    }

    const nameParam = pathParam('name', `name of the ${K}`);
    const itemParams = [nameParam, ...nsParams, P.pretty];

    if (sub.name === 'log') {
      // a getter with options: the query parameters are the fields of PodLogOptions
      const opts = this.src.forKind(k.group, k.version, `${K}LogOptions`);
      const media = ['text/plain', ...this.object];
      add(path, {
        method: 'get',
        operationId: `read${gvTitle}${scope}${K}${S}`,
        description: `read ${sub.name} of the specified ${K}`,
        tag,
        action: 'get',
        gvk: subGVK,
        params: [...itemParams, ...optionParams(opts)],
        responses: [{ code: '200', schema: { type: 'string' }, mediaTypes: media }],
        consumes: ['*/*'],
        produces: media,
      });
      return;
    }

    const subType = this.typeOf(sub.group, sub.version, sub.kind);
    const objResp = (codes: Response['code'][]): Response[] => codes.map((code) => ({ code, schema: { ref: subType }, mediaTypes: this.object }));
    if (verbs.has('get')) {
      add(path, {
        method: 'get',
        operationId: `read${gvTitle}${scope}${K}${S}`,
        description: `read ${sub.name} of the specified ${K}`,
        tag,
        action: 'get',
        gvk: subGVK,
        params: itemParams,
        responses: objResp(['200']),
        consumes: ['*/*'],
        produces: this.object,
      });
    }
    if (verbs.has('create')) {
      add(path, {
        method: 'post',
        operationId: `create${gvTitle}${scope}${K}${S}`,
        description: `create ${sub.name} of ${withArticle(K)}`,
        tag,
        action: 'post',
        gvk: subGVK,
        params: [...itemParams, ...CREATE_PARAMS],
        body: { ref: subType, mediaTypes: ['*/*'], required: true },
        responses: objResp(['200', '201', '202']),
        consumes: ['*/*'],
        produces: this.object,
      });
    }
    if (verbs.has('update')) {
      add(path, {
        method: 'put',
        operationId: `replace${gvTitle}${scope}${K}${S}`,
        description: `replace ${sub.name} of the specified ${K}`,
        tag,
        action: 'put',
        gvk: subGVK,
        params: [...itemParams, ...UPDATE_PARAMS],
        body: { ref: subType, mediaTypes: ['*/*'], required: true },
        responses: objResp(['200', '201']),
        consumes: ['*/*'],
        produces: this.object,
      });
    }
    if (verbs.has('patch')) {
      add(path, {
        method: 'patch',
        operationId: `patch${gvTitle}${scope}${K}${S}`,
        description: `partially update ${sub.name} of the specified ${K}`,
        tag,
        action: 'patch',
        gvk: subGVK,
        params: [...itemParams, ...PATCH_PARAMS],
        body: { ref: PATCH, mediaTypes: k.custom ? CUSTOM_PATCH_TYPES : PATCH_TYPES, required: true },
        responses: objResp(['200', '201']),
        consumes: k.custom ? CUSTOM_PATCH_CONSUMES : PATCH_CONSUMES,
        produces: this.object,
      });
    }
  }
}

/** Subresources served by a connecter (exec, attach, portforward, proxy): their kind is an options kind. */
function isConnect(sub: SubresourceDecl): boolean {
  return /Options$/.test(sub.kind);
}

/** The query parameters of an options kind: its scalar fields (and lists of scalars), by JSON name. */
function optionParams(decl: TypeDecl | undefined): Param[] {
  if (!decl) return [];
  const out: Param[] = [];
  for (const f of decl.fields) {
    if (f.inline) continue;
    const type = paramType(f);
    if (!type) continue;
    out.push({ name: f.name, in: 'query', type, description: f.description ?? f.name });
  }
  return out;
}

function paramType(f: FieldDecl): ParamType | undefined {
  let t = f.type;
  if (t.kind === 'array') t = t.items;
  if (t.kind !== 'scalar') return undefined;
  switch (t.scalar) {
    case 'string':
      return 'string';
    case 'bool':
      return 'boolean';
    case 'int32':
    case 'int64':
      return 'integer';
    default:
      return undefined;
  }
}

/** io.k8s.api.<package>.<version>.<Kind>, for a kind the schema loader does not know */
export function conventionalTypeName(group: string, version: string, kind: string): string {
  if (group === '') return `io.k8s.api.core.${version}.${kind}`;
  if (group === 'apiextensions.k8s.io') return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}.${kind}`;
  if (group === 'apiregistration.k8s.io') return `io.k8s.kube-aggregator.pkg.apis.apiregistration.${version}.${kind}`;
  if (group === 'rbac.authorization.k8s.io') return `io.k8s.api.rbac.${version}.${kind}`;
  return `io.k8s.api.${group.replace(/\.k8s\.io$/, '').split('.')[0]}.${version}.${kind}`;
}

// ---------------------------------------------------------------------------------------------
// The discovery documents: /api, /apis, /apis/<group> and /version

export const API_VERSIONS = `${META}.APIVersions`;
export const API_GROUP_LIST = `${META}.APIGroupList`;
export const API_GROUP = `${META}.APIGroup`;
export const VERSION_INFO = 'io.k8s.apimachinery.pkg.version.Info';

const DISCOVERY_MEDIA = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

function discoveryRoute(path: string, operationId: string, description: string, tag: string, ref: string, media = DISCOVERY_MEDIA): Route {
  return {
    path,
    ops: [
      {
        method: 'get',
        operationId,
        description,
        tag,
        params: [],
        responses: [{ code: '200', schema: { ref }, mediaTypes: media }],
        consumes: media,
        produces: media,
      },
    ],
  };
}

/** GET /api/: the versions of the core group (APIVersions) */
export function coreDiscoveryRoute(): Route {
  return discoveryRoute('/api/', 'getCoreAPIVersions', 'get available API versions', 'core', API_VERSIONS);
}

/** GET /apis/: every group (APIGroupList) */
export function groupsDiscoveryRoute(): Route {
  return discoveryRoute('/apis/', 'getAPIVersions', 'get available API versions', 'apis', API_GROUP_LIST);
}

/** GET /apis/<group>/: one group (APIGroup) */
export function groupDiscoveryRoute(group: string): Route {
  return discoveryRoute(`/apis/${group}/`, `get${groupTitle(group)}APIGroup`, 'get information of a group', groupTag(group), API_GROUP);
}

/** GET /version/: the version of the server */
export function versionRoute(): Route {
  return discoveryRoute('/version/', 'getCodeVersion', 'get the version information for this server', 'version', VERSION_INFO, ['application/json']);
}
