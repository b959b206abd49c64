// Kustomization directories for the kustomize tests: each case is a tree of files (path →
// content) with the directory to build. Shared by the unit test (against `kubectl kustomize`)
// and usable by the end-to-end test.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface KustomizeCase {
  name: string;
  files: Record<string, string | Buffer>;
  /** the directory to build, relative to the case's root (default '.') */
  dir?: string;
}

export function writeCase(root: string, c: KustomizeCase): string {
  for (const [p, content] of Object.entries(c.files)) {
    const f = join(root, p);
    mkdirSync(dirname(f), { recursive: true });
    writeFileSync(f, content);
  }
  return join(root, c.dir ?? '.');
}

const deploy = (name: string, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: 1
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        envFrom:
        - configMapRef: {name: settings}
        - secretRef: {name: creds}
        env:
        - name: A
          valueFrom:
            configMapKeyRef: {name: settings, key: a}
        - name: P
          valueFrom:
            secretKeyRef: {name: creds, key: p}
      initContainers:
      - name: init
        image: busybox
      imagePullSecrets:
      - name: creds
      volumes:
      - name: v
        configMap: {name: settings}
      - name: s
        secret: {secretName: creds}
      - name: p
        projected:
          sources:
          - configMap: {name: settings}
          - secret: {name: creds}
${extra}`;

export const CASES: KustomizeCase[] = [
  {
    name: 'configMapGenerator: literals, files, envs',
    files: {
      'kustomization.yaml': `configMapGenerator:
- name: settings
  literals:
  - a=1
  - b="quoted value"
  - c='single'
  - d=x=y
  - html=<a&b>
  files:
  - app.properties
  - renamed=conf/other.txt
  envs:
  - vars.env
`,
      'app.properties': 'x=1\ny=2\n',
      'conf/other.txt': 'multi\nline\n',
      'vars.env': '\ufeffE1=one\n# comment\n\n  E2 = spaced \r\nE3\nE4=a=b\n',
    },
  },
  {
    name: 'secretGenerator: literals, files, type, long values',
    files: {
      'kustomization.yaml': `secretGenerator:
- name: creds
  literals:
  - p=secret
  - long=${'x'.repeat(120)}
  files:
  - key.pem
- name: tls
  type: kubernetes.io/tls
  files:
  - tls.crt=key.pem
  - tls.key=key.pem
`,
      'key.pem': '-----BEGIN KEY-----\nabc\n-----END KEY-----\n',
    },
  },
  {
    name: 'generator options, immutable, disableNameSuffixHash, binary data',
    files: {
      'kustomization.yaml': `generatorOptions:
  labels: {gen: "yes", both: global}
  annotations: {note: global}
configMapGenerator:
- name: plain
  literals: [k=v]
  options:
    disableNameSuffixHash: true
    labels: {both: local}
- name: frozen
  literals: [k=v]
  options:
    immutable: true
    annotations: {extra: "1"}
- name: bin
  files: [blob.bin]
- name: empty
secretGenerator:
- name: s
  literals: [k=v]
  options: {immutable: true}
- name: es
`,
      'blob.bin': Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80]),
    },
  },
  {
    name: 'generated names referenced from workloads, with prefix, suffix and namespace',
    files: {
      'kustomization.yaml': `namespace: shop
namePrefix: dev-
nameSuffix: -v1
resources:
- app.yaml
configMapGenerator:
- name: settings
  literals: [a=1]
secretGenerator:
- name: creds
  literals: [p=2]
`,
      'app.yaml': [
        deploy('web'),
        `apiVersion: batch/v1
kind: CronJob
metadata:
  name: cron
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: c
            image: busybox
            envFrom:
            - configMapRef: {name: settings}
          volumes:
          - name: v
            secret: {secretName: creds}
`,
        `apiVersion: v1
kind: Pod
metadata:
  name: pod
spec:
  containers:
  - name: c
    image: busybox
    env:
    - name: X
      valueFrom:
        configMapKeyRef: {name: settings, key: a}
    - name: Y
      valueFrom:
        configMapKeyRef: {name: not-mine, key: a}
`,
        `apiVersion: v1
kind: ServiceAccount
metadata:
  name: runner
imagePullSecrets:
- name: creds
`,
      ].join('---\n'),
    },
  },
  {
    name: 'base with generator, overlay merges and replaces',
    dir: 'overlay',
    files: {
      'base/kustomization.yaml': `resources:
- deploy.yaml
configMapGenerator:
- name: settings
  literals: [a=1, b=2]
  options:
    labels: {from: base}
- name: other
  literals: [x=1]
secretGenerator:
- name: creds
  literals: [p=1]
`,
      'base/deploy.yaml': deploy('web'),
      'overlay/kustomization.yaml': `resources:
- ../base
namePrefix: prod-
configMapGenerator:
- name: settings
  behavior: merge
  literals: [b=3, c=4]
  options:
    labels: {from: overlay}
- name: other
  behavior: replace
  literals: [y=2]
secretGenerator:
- name: creds
  behavior: merge
  literals: [q=2]
`,
    },
  },
  {
    name: 'merge into a plain ConfigMap (no hash)',
    dir: 'overlay',
    files: {
      'base/kustomization.yaml': 'resources:\n- cm.yaml\n',
      'base/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: "1"\n',
      'overlay/kustomization.yaml': 'resources:\n- ../base\nconfigMapGenerator:\n- name: settings\n  behavior: merge\n  literals: [b=2]\n',
    },
  },
  {
    name: 'images',
    files: {
      'kustomization.yaml': `resources:
- app.yaml
images:
- name: nginx
  newTag: "1.27"
- name: busybox
  newName: registry.example.com/busybox
  digest: sha256:0123456789abcdef
- name: example.com/app
  newName: example.com/app2
  newTag: v2
- name: redis
  newName: valkey
`,
      'app.yaml': [
        deploy('web'),
        `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: a
    image: example.com/app:v1
  - name: b
    image: redis@sha256:abc
  - name: c
    image: nginxinc/nginx
`,
        `apiVersion: batch/v1
kind: CronJob
metadata:
  name: cron
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: c
            image: nginx
`,
        `apiVersion: example.com/v1
kind: Thing
metadata:
  name: t
spec:
  deep:
    containers:
    - image: nginx:old
`,
      ].join('---\n'),
    },
  },
  {
    name: 'replicas',
    files: {
      'kustomization.yaml': 'resources:\n- app.yaml\nreplicas:\n- name: web\n  count: 5\n- name: db\n  count: 2\n',
      'app.yaml': [
        deploy('web'),
        'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  serviceName: db\n  selector:\n    matchLabels: {app: db}\n  template:\n    metadata:\n      labels: {app: db}\n    spec:\n      containers:\n      - name: db\n        image: postgres\n',
      ].join('---\n'),
    },
  },
  {
    name: 'patches: inline strategic merge, file, JSON 6902 as YAML and JSON, targets',
    files: {
      'kustomization.yaml': `resources:
- app.yaml
patches:
- patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
    spec:
      template:
        spec:
          containers:
          - name: web
            image: nginx:patched
            resources:
              limits: {cpu: "1"}
- path: patch-sm.yaml
- target:
    kind: Deployment
    name: "w.*"
  patch: |-
    - op: replace
      path: /spec/replicas
      value: 3
- target:
    group: apps
    version: v1
    kind: Deployment
    labelSelector: tier=back
  path: patch.json
- target:
    kind: ConfigMap
    annotationSelector: patch=me
  patch: |-
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: ignored
    data:
      added: "yes"
`,
      'patch-sm.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n    targetPort: 9090\n',
      'patch.json': '[{"op": "add", "path": "/metadata/labels/patched", "value": "json"}]',
      'app.yaml': [
        deploy('web'),
        deploy('worker').replace('  name: worker\n', '  name: worker\n  labels: {tier: back}\n'),
        'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports:\n  - port: 80\n    targetPort: 8080\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: {patch: me}\ndata: {k: v}\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata: {k: v}\n',
      ].join('---\n'),
    },
  },
  {
    name: 'patchesStrategicMerge and patchesJson6902 (deprecated fields), $patch: delete',
    files: {
      'kustomization.yaml': `resources:
- app.yaml
patchesStrategicMerge:
- drop.yaml
- |-
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: keep
  data:
    inline: "yes"
patchesJson6902:
- target:
    version: v1
    kind: ConfigMap
    name: keep
  path: ops.yaml
`,
      'drop.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: drop\n$patch: delete\n',
      'ops.yaml': '- op: add\n  path: /data/json\n  value: "6902"\n',
      'app.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\ndata: {k: v}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: drop\ndata: {k: v}\n',
    },
  },
  {
    name: 'patch renames with allowNameChange and references follow',
    files: {
      'kustomization.yaml': `resources:
- app.yaml
patches:
- target: {kind: ConfigMap, name: settings}
  patch: |-
    - op: replace
      path: /metadata/name
      value: renamed
`,
      'app.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata: {a: "1"}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n---\n' + deploy('web'),
    },
  },
  {
    name: 'components',
    files: {
      'kustomization.yaml': 'resources:\n- app.yaml\ncomponents:\n- comp\nnamePrefix: x-\n',
      'app.yaml': deploy('web'),
      'comp/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
configMapGenerator:
- name: settings
  literals: [from=component]
secretGenerator:
- name: creds
  literals: [p=c]
patches:
- patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 4
commonLabels:
  comp: "yes"
`,
    },
  },
  {
    name: 'bases with prefixes at two levels and shared names',
    dir: 'top',
    files: {
      'a/kustomization.yaml': 'namePrefix: a-\nresources:\n- ../app\n',
      'b/kustomization.yaml': 'namePrefix: b-\nresources:\n- ../app\nnamespace: bns\n',
      'app/kustomization.yaml': 'resources:\n- deploy.yaml\nconfigMapGenerator:\n- name: settings\n  literals: [a=1]\nsecretGenerator:\n- name: creds\n  literals: [p=1]\n',
      'app/deploy.yaml': deploy('web'),
      'top/kustomization.yaml': 'resources:\n- ../a\n- ../b\nnamePrefix: top-\ncommonLabels:\n  top: "1"\n',
    },
  },
  {
    name: 'labels with includeSelectors/includeTemplates, commonAnnotations, RBAC references',
    files: {
      'kustomization.yaml': `namespace: team
namePrefix: p-
resources:
- rbac.yaml
- app.yaml
labels:
- pairs: {only: meta}
- pairs: {tmpl: "yes"}
  includeTemplates: true
- pairs: {sel: "yes"}
  includeSelectors: true
commonAnnotations:
  note: hello
`,
      'app.yaml': deploy('web') + '---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\nspec:\n  rules:\n  - http:\n      paths:\n      - path: /\n        pathType: Prefix\n        backend:\n          service: {name: web, port: {number: 80}}\n',
      'rbac.yaml': `apiVersion: v1
kind: ServiceAccount
metadata:
  name: runner
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: read
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- {kind: ServiceAccount, name: runner}
- {kind: ServiceAccount, name: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cluster-reader
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: cluster-read
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-reader}
subjects:
- {kind: ServiceAccount, name: runner, namespace: elsewhere}
`,
    },
  },
  {
    name: 'a List document and a Namespace object',
    files: {
      'kustomization.yaml': 'namespace: listed\nresources:\n- list.yaml\n- ns.yaml\n',
      'list.yaml': 'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: l1}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: l2}\n',
      'ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: whatever\n',
    },
  },
  // errors
  { name: 'error: missing resource file', files: { 'kustomization.yaml': 'resources:\n- nope.yaml\n' } },
  { name: 'error: unknown field', files: { 'kustomization.yaml': 'resourcez:\n- a.yaml\n' } },
  { name: 'error: empty kustomization', files: { 'kustomization.yaml': '' } },
  { name: 'error: missing metadata.name', files: { 'kustomization.yaml': 'resources:\n- a.yaml\n', 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n' } },
  { name: 'error: repeated generator key', files: { 'kustomization.yaml': 'configMapGenerator:\n- name: a\n  literals: [x=1, x=2]\n' } },
  { name: 'error: merge with nothing to merge into', files: { 'kustomization.yaml': 'configMapGenerator:\n- name: a\n  behavior: merge\n  literals: [x=1]\n' } },
  { name: 'error: generator name repeated', files: { 'kustomization.yaml': 'configMapGenerator:\n- name: a\n  literals: [x=1]\n- name: a\n  literals: [y=1]\n' } },
  { name: 'error: file outside the root', dir: 'k', files: { 'k/kustomization.yaml': 'configMapGenerator:\n- name: a\n  files: [../secret.txt]\n', 'secret.txt': 'x' } },
  { name: 'error: replicas without a target', files: { 'kustomization.yaml': 'replicas:\n- name: nope\n  count: 2\n' } },
  { name: 'error: patch that is neither', files: { 'kustomization.yaml': 'patches:\n- patch: |\n    foo: bar\n' } },
  { name: 'error: duplicate resources', files: { 'kustomization.yaml': 'resources: [a.yaml, a.yaml]\n', 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' } },
  { name: 'error: strategic merge patch without a target', files: { 'kustomization.yaml': 'patchesStrategicMerge:\n- |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: nope}\n' } },
  { name: 'error: component that is not a Component', files: { 'kustomization.yaml': 'components: [c]\n', 'c/kustomization.yaml': 'namePrefix: x-\n' } },
  { name: 'error: JSON patch without target', files: { 'kustomization.yaml': 'patches:\n- patch: |\n    - {op: add, path: /x, value: 1}\n' } },
  { name: 'error: literal without =', files: { 'kustomization.yaml': 'configMapGenerator:\n- name: a\n  literals: [novalue]\n' } },
  {
    name: 'overlay prefix over base generators, HPA, Ingress TLS, StatefulSet claims, Job',
    dir: 'overlay',
    files: {
      'base/kustomization.yaml': `resources:
- app.yaml
configMapGenerator:
- name: settings
  literals: [a=1]
secretGenerator:
- name: creds
  literals: [p=1]
- name: tls
  type: kubernetes.io/tls
  literals: [tls.crt=c, tls.key=k]
`,
      'base/app.yaml': [
        deploy('web'),
        'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 1\n  maxReplicas: 3\n',
        'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\nspec:\n  tls:\n  - secretName: tls\n  defaultBackend:\n    service: {name: web, port: {number: 80}}\n',
        'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports: [{port: 80}]\n',
        'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  serviceName: web\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers: [{name: db, image: postgres}]\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n',
        'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: once\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: busybox}]\n',
      ].join('---\n'),
      'overlay/kustomization.yaml': 'resources:\n- ../base\nnamePrefix: prod-\nnamespace: prod\ncommonLabels:\n  env: prod\ncommonAnnotations:\n  team: a\nimages:\n- name: postgres\n  newTag: "16"\n',
    },
  },
  {
    name: 'patch targets by namespace and name regex, patch of a kind given only in the target',
    files: {
      'kustomization.yaml': `resources:
- app.yaml
patches:
- target: {namespace: "team-.*", kind: ConfigMap}
  patch: |-
    kind: ConfigMap
    metadata: {name: any}
    data: {ns: matched}
- target: {name: "^(one|two)$"}
  patch: |-
    - {op: add, path: /metadata/annotations, value: {picked: "yes"}}
`,
      'app.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one, namespace: team-a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: two, namespace: other}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: three, namespace: team-b}\n',
    },
  },
  {
    name: 'a Component built at the root, YAML 1.2 scalars, generated object with a namespace',
    files: {
      'kustomization.yaml': 'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- cm.yaml\nconfigMapGenerator:\n- name: g\n  namespace: own\n  literals: [k=v]\nnamespace: other\n',
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  a: y\n  b: "on"\n  c: off\n',
    },
  },
  {
    name: 'images with tagSuffix, digest and tag, and an unmatched image',
    files: {
      'kustomization.yaml': 'resources:\n- pod.yaml\nimages:\n- name: nginx\n  newTag: "1.27"\n  digest: sha256:abc\n- name: redis\n  tagSuffix: -alpine\n',
      'pod.yaml': 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - {name: a, image: nginx}\n  - {name: b, image: redis:7}\n  - {name: c, image: postgres:16}\n  initContainers:\n  - {name: i, image: redis}\n',
    },
  },
  { name: 'error: resource directory with a broken kustomization', files: { 'kustomization.yaml': 'resources:\n- base\n', 'base/kustomization.yaml': 'resources:\n- missing.yaml\n' } },
  { name: 'error: a Component as a resource', files: { 'kustomization.yaml': 'resources:\n- comp\n', 'comp/kustomization.yaml': 'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamePrefix: x-\n' } },
  { name: 'error: wrong apiVersion', files: { 'kustomization.yaml': 'apiVersion: v1\nkind: Kustomization\nnamePrefix: x-\n' } },
  { name: 'the same label in labels and commonLabels (commonLabels last)', files: { 'kustomization.yaml': 'resources: [a.yaml]\ncommonLabels: {a: "1"}\nlabels:\n- pairs: {a: "2"}\n', 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' } },
];
