// Integers beyond 2^53 are kept exactly, as Kubernetes keeps every int64: through kubectl 1.33
// (which sends Protobuf) and 1.27 (JSON), raw bodies and answers in JSON, YAML, Protobuf and CBOR,
// watch events, patches of every kind, server-side apply, dry-run, Tables and field selectors of
// a custom resource, and a restart (the watch cache rebuilt from the stored bytes). Max int64 in
// every int64 field of several kinds and of DeleteOptions is an answer, never a 500.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, until, NO_CA_PUBLISHER, type Cluster, type RawResponse, NO_POD_GC } from './harness.js';
import { parseJSON, stringifyJSON } from '../../src/codec/int64.js';
import { decodeEnvelope, decodeMessage, encodeEnvelope, encodeMessage } from '../../src/codec/protobuf.js';

const MAX = '9223372036854775807';
const MIN = '-9223372036854775808';
const P53 = '9007199254740993'; // 2^53 + 1: JSON.parse makes it 2^53
const JOB = 'io.k8s.api.batch.v1.Job';
const jobs = '/apis/batch/v1/namespaces/default/jobs';
const pods = '/api/v1/namespaces/default/pods';

let c: Cluster;
const dataDir = mkdtempSync(join(tmpdir(), 'keelson-int64-'));

before(async () => {
  // (without the Job controller: its status writes on the Jobs made here would put their
  // MODIFIED events into the watch that expects the next Job's ADDED event)
  c = await startCluster({ args: [NO_CA_PUBLISHER, NO_POD_GC, '--controllers=*,-job-controller', '--feature-gates=CBORServingAndStorage=true'], dataDir, keepData: true });
});
after(async () => {
  await c?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const jobJSON = (name: string, ads: string) =>
  `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"${name}"},"spec":{"activeDeadlineSeconds":${ads},"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`;
const jobYAML = (name: string, ads: string) =>
  `apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: ${name}\nspec:\n  activeDeadlineSeconds: ${ads}\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n`;

/** the JSON text's spec.activeDeadlineSeconds, exactly as written */
function adsOf(r: RawResponse | string): string | undefined {
  const text = typeof r === 'string' ? r : r.text;
  return /"activeDeadlineSeconds":\s*(-?\d+)/.exec(text.replace(/"managedFields":\[.*?\]\}\]?/s, ''))?.[1];
}

async function ok(r: Promise<RawResponse>, status = 200): Promise<RawResponse> {
  const res = await r;
  assert.equal(res.status, status, res.text.slice(0, 500));
  return res;
}

describe('kubectl', () => {
  for (const version of ['1.33', '1.27']) {
    test(`kubectl ${version} creates and reads max int64, min int64 and 2^53 + 1 exactly`, () => {
      const v = version.replace('.', '');
      for (const [name, value] of [
        [`k${v}-max`, MAX],
        [`k${v}-min`, MIN],
        [`k${v}-p53`, P53],
      ] as const) {
        const cr = c.kubectl(['create', '-f', '-', '-o', 'jsonpath={.spec.activeDeadlineSeconds}'], { version, input: jobYAML(name, value) });
        // (a negative deadline is refused by validation, with the exact value)
        if (value === MIN) {
          assert.notEqual(cr.code, 0);
          assert.match(cr.stderr, /spec.activeDeadlineSeconds: Invalid value: -9223372036854775808: must be greater than or equal to 0/);
          continue;
        }
        assert.equal(cr.code, 0, cr.stderr);
        assert.equal(cr.stdout, value);
        const get = c.kubectl(['get', 'job', name, '-o', 'jsonpath={.spec.activeDeadlineSeconds}'], { version });
        assert.equal(get.stdout, value, get.stderr);
        const yaml = c.kubectl(['get', 'job', name, '-o', 'yaml'], { version });
        assert.match(yaml.stdout, new RegExp(`^  activeDeadlineSeconds: ${value}$`, 'm'));
      }
      // beyond int64: kubectl's own decoding makes it a float64, which it writes as Go does
      const over = c.kubectl(['create', '-f', '-'], { version, input: jobYAML(`k${v}-over`, '9223372036854775808') });
      assert.notEqual(over.code, 0);
      assert.match(over.stderr, /json: cannot unmarshal number 9223372036854776000 into Go struct field JobSpec.spec.activeDeadlineSeconds of type int64/);
    });
  }
});

describe('raw bodies and answers', () => {
  test('a body in JSON, YAML, Protobuf or CBOR keeps the value, and every representation answers it', async () => {
    const { encode, decode } = (await import('cborg')) as any;
    const pb = (name: string, ads: bigint) =>
      Buffer.from(
        encodeEnvelope(
          'batch/v1',
          'Job',
          encodeMessage(JOB, { metadata: { name }, spec: { activeDeadlineSeconds: ads, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } }),
        ),
      );
    const cbor = (name: string, ads: bigint) =>
      Buffer.from(encode({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { activeDeadlineSeconds: ads, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } }));
    const bodies: [string, string, Buffer | string][] = [
      ['raw-json', 'application/json', jobJSON('raw-json', P53)],
      ['raw-yaml', 'application/yaml', jobYAML('raw-yaml', MAX)],
      ['raw-pb', 'application/vnd.kubernetes.protobuf', pb('raw-pb', BigInt(MAX))],
      ['raw-cbor', 'application/cbor', cbor('raw-cbor', BigInt(P53))],
    ];
    for (const [name, ct, body] of bodies) {
      const want = name === 'raw-yaml' || name === 'raw-pb' ? MAX : P53;
      const cr = await ok(c.raw('POST', jobs, { headers: { 'content-type': ct }, body }), 201);
      // (the answer is in the body's representation: JSON for JSON and YAML)
      if (ct === 'application/json' || ct === 'application/yaml') assert.equal(adsOf(cr), want, name);
      const json = await ok(c.raw('GET', `${jobs}/${name}`));
      assert.equal(adsOf(json), want, name);
      assert.equal(parseJSON(json.text).spec.activeDeadlineSeconds, BigInt(want));
      const yaml = await ok(c.raw('GET', `${jobs}/${name}`, { headers: { accept: 'application/yaml' } }));
      assert.match(yaml.text, new RegExp(`^  activeDeadlineSeconds: ${want}$`, 'm'), name);
      const proto = await ok(c.raw('GET', `${jobs}/${name}`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } }));
      assert.equal((decodeMessage(JOB, decodeEnvelope(proto.body).raw) as any).spec.activeDeadlineSeconds, BigInt(want), name);
      const cb = await ok(c.raw('GET', `${jobs}/${name}`, { headers: { accept: 'application/cbor' } }));
      const tags: any[] = [];
      tags[55799] = (d: any) => d();
      const back = decode(cb.body, { tags, useMaps: true });
      const spec = [...back.entries()].find(([k]: [Uint8Array]) => Buffer.from(k).toString() === 'spec')[1];
      const ads = [...spec.entries()].find(([k]: [Uint8Array]) => Buffer.from(k).toString() === 'activeDeadlineSeconds')[1];
      assert.equal(BigInt(ads), BigInt(want), name);
      // a list, and a list as a Table
      const list = await ok(c.raw('GET', `${jobs}?fieldSelector=metadata.name%3D${name}`));
      assert.equal(adsOf(list), want);
    }
  });

  test('beyond int64, and a float, are refused as Go refuses them', async () => {
    for (const [v, msg] of [
      ['9223372036854775808', 'json: cannot unmarshal number 9223372036854775808 into Go struct field JobSpec.spec.activeDeadlineSeconds of type int64'],
      ['-9223372036854775809', 'json: cannot unmarshal number -9223372036854775809 into Go struct field JobSpec.spec.activeDeadlineSeconds of type int64'],
      ['1.5', 'json: cannot unmarshal number 1.5 into Go struct field JobSpec.spec.activeDeadlineSeconds of type int64'],
    ]) {
      const r = await c.raw('POST', jobs, { headers: { 'content-type': 'application/json' }, body: jobJSON('bad', v!) });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json().message, `Job in version "v1" cannot be handled as a Job: ${msg}`);
    }
  });

  test('an integer written with a fraction or an exponent (1.0, 1e3) is refused as Go refuses it, with its literal', async () => {
    const refused = `Job in version "v1" cannot be handled as a Job: json: cannot unmarshal number`;
    for (const [v, q] of [
      ['1.0', ''],
      ['1e3', '?fieldValidation=Ignore'],
      ['1.50', '?fieldValidation=Strict'],
      ['2E+1', '?dryRun=All'],
    ]) {
      const r = await c.raw('POST', `${jobs}${q}`, { headers: { 'content-type': 'application/json' }, body: jobJSON('lit', v!) });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json().message, `${refused} ${v} into Go struct field JobSpec.spec.activeDeadlineSeconds of type int64`);
    }
    // a Pod: an int32 in a list item, an IntOrString, and numbers in strings (an image tag) that are no literals
    const pod = (ports: string, probe: string) =>
      `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"lit","annotations":{"n":"x: 1.0"}},"spec":{"containers":[{"name":"c","image":"nginx:1.14.2","ports":[{"containerPort":${ports}}],"readinessProbe":{"httpGet":{"port":${probe}}}}]}}`;
    const r1 = await c.raw('POST', `${pods}?dryRun=All`, { headers: { 'content-type': 'application/json' }, body: pod('8e1', '80') });
    assert.equal(r1.status, 400, r1.text);
    assert.equal(r1.json().message, 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number 8e1 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32');
    const r2 = await c.raw('POST', `${pods}?dryRun=All`, { headers: { 'content-type': 'application/json' }, body: pod('80', '80.0') });
    assert.equal(r2.status, 400, r2.text);
    assert.equal(r2.json().message, 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number 80.0 into Go struct field HTTPGetAction.spec.containers.readinessProbe.httpGet.port of type int32');
    await ok(c.raw('POST', `${pods}?dryRun=All`, { headers: { 'content-type': 'application/json' }, body: pod('80', '80') }), 201);
    // a replace (PUT) decodes its body the same way; YAML's 1.0 is a number that Go's YAML-to-JSON writes as 1, and is taken
    await ok(c.raw('POST', jobs, { headers: { 'content-type': 'application/json' }, body: jobJSON('lit', '7') }), 201);
    const cur = JSON.parse((await ok(c.raw('GET', `${jobs}/lit`))).text);
    cur.spec.activeDeadlineSeconds = 8;
    const put = await c.raw('PUT', `${jobs}/lit`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(cur).replace('"activeDeadlineSeconds":8', '"activeDeadlineSeconds":8.0') });
    assert.equal(put.status, 400, put.text);
    assert.equal(put.json().message, `${refused} 8.0 into Go struct field JobSpec.spec.activeDeadlineSeconds of type int64`);
    const yaml = await ok(c.raw('POST', `${jobs}?dryRun=All`, { headers: { 'content-type': 'application/yaml' }, body: jobYAML('lit-yaml', '1.0') }), 201);
    assert.equal(yaml.json().spec.activeDeadlineSeconds, 1);
  });

  test('watch events carry the exact value, in JSON and Protobuf', async () => {
    const rv = (await ok(c.raw('GET', jobs))).json().metadata.resourceVersion;
    const s = c.stream(`${jobs}?watch=1&resourceVersion=${rv}`);
    const p = c.stream(`${jobs}?watch=1&resourceVersion=${rv}`, { accept: 'application/vnd.kubernetes.protobuf;stream=watch' });
    try {
      await s.ready;
      await p.ready;
      await ok(c.raw('POST', jobs, { headers: { 'content-type': 'application/json' }, body: jobJSON('watched', MAX) }), 201);
      await s.until(() => /"watched"/.test(s.text));
      assert.equal(adsOf(s.text), MAX);
      await until('protobuf event', () => Buffer.concat(p.chunks).includes('watched'), 10_000);
    } finally {
      s.close();
      p.close();
    }
  });
});

describe('patches, apply and dry-run', () => {
  test('merge, strategic and JSON patches, server-side apply and dry-run keep the value', async () => {
    const url = `${jobs}/patched`;
    await ok(c.raw('POST', jobs, { headers: { 'content-type': 'application/json' }, body: jobJSON('patched', MAX) }), 201);
    const patch = (ct: string, body: string, q = '') => ok(c.raw('PATCH', `${url}${q}`, { headers: { 'content-type': ct }, body }));
    // (a deadline may only be lowered on a job that has started; these are all lower)
    assert.equal(adsOf(await patch('application/merge-patch+json', '{"spec":{"activeDeadlineSeconds":9223372036854775806}}')), '9223372036854775806');
    assert.equal(adsOf(await patch('application/strategic-merge-patch+json', '{"spec":{"activeDeadlineSeconds":9223372036854775805}}')), '9223372036854775805');
    // a JSON patch's test compares the exact value
    const failed = await c.raw('PATCH', url, { headers: { 'content-type': 'application/json-patch+json' }, body: '[{"op":"test","path":"/spec/activeDeadlineSeconds","value":9223372036854775806}]' });
    assert.equal(failed.status, 422, failed.text);
    assert.equal(
      adsOf(await patch('application/json-patch+json', '[{"op":"test","path":"/spec/activeDeadlineSeconds","value":9223372036854775805},{"op":"replace","path":"/spec/activeDeadlineSeconds","value":9223372036854775804}]')),
      '9223372036854775804',
    );
    const applied = await patch('application/apply-patch+yaml', 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: patched\nspec:\n  activeDeadlineSeconds: 9223372036854775803\n', '?fieldManager=int64-test&force=true');
    assert.equal(adsOf(applied), '9223372036854775803');
    const mf = parseJSON(applied.text).metadata.managedFields.find((m: any) => m.manager === 'int64-test');
    assert.ok(mf.fieldsV1['f:spec']['f:activeDeadlineSeconds'], JSON.stringify(mf));
    // the same apply again changes nothing
    const again = await patch('application/apply-patch+yaml', 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: patched\nspec:\n  activeDeadlineSeconds: 9223372036854775803\n', '?fieldManager=int64-test');
    assert.equal(parseJSON(again.text).metadata.resourceVersion, parseJSON(applied.text).metadata.resourceVersion);
    // dry-run answers the change and stores nothing
    assert.equal(adsOf(await patch('application/merge-patch+json', '{"spec":{"activeDeadlineSeconds":9007199254740993}}', '?dryRun=All')), P53);
    assert.equal(adsOf(await ok(c.raw('GET', url))), '9223372036854775803');
    // an update (PUT) of what was read
    const cur = parseJSON((await ok(c.raw('GET', url))).text);
    cur.metadata.labels = { touched: 'yes' };
    assert.equal(adsOf(await ok(c.raw('PUT', url, { headers: { 'content-type': 'application/json' }, body: stringifyJSON(cur) }))), '9223372036854775803');
  });
});

describe('every int64 field', () => {
  test('a Pod with max int64 in its int64 fields: the range errors Kubernetes gives, and a graceful delete of max int64', async () => {
    const sc = `"runAsUser":${MAX},"runAsGroup":${MAX}`;
    const bad = await c.raw('POST', pods, {
      headers: { 'content-type': 'application/json' },
      body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-bad"},"spec":{"activeDeadlineSeconds":${MAX},"securityContext":{${sc},"fsGroup":${MAX},"supplementalGroups":[${MAX}]},"containers":[{"name":"c","image":"busybox","securityContext":{${sc}}}]}}`,
    });
    assert.equal(bad.status, 422, bad.text);
    const causes = parseJSON(bad.text).details.causes.map((x: any) => `${x.field}: ${x.message}`);
    for (const want of [
      `spec.activeDeadlineSeconds: Invalid value: ${MAX}: must be between 1 and 2147483647, inclusive`,
      `spec.securityContext.runAsUser: Invalid value: ${MAX}: must be between 0 and 2147483647, inclusive`,
      `spec.securityContext.fsGroup: Invalid value: ${MAX}: must be between 0 and 2147483647, inclusive`,
      `spec.containers[0].securityContext.runAsUser: Invalid value: ${MAX}: must be between 0 and 2147483647, inclusive`,
    ]) assert.ok(causes.includes(want), `${want} in ${causes.join('\n')}`);
    // the fields whose whole int64 range is valid
    const good = await ok(
      c.raw('POST', pods, {
        headers: { 'content-type': 'application/json' },
        body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-good"},"spec":{"nodeName":"nowhere","terminationGracePeriodSeconds":${MAX},"tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":${MAX}}],"containers":[{"name":"c","image":"busybox","lifecycle":{"preStop":{"sleep":{"seconds":${MAX}}}},"livenessProbe":{"exec":{"command":["true"]},"terminationGracePeriodSeconds":${MAX}}}]}}`,
      }),
      201,
    );
    const gp = parseJSON(good.text);
    assert.equal(gp.spec.terminationGracePeriodSeconds, BigInt(MAX));
    assert.equal(gp.spec.tolerations.find((t: any) => t.key === 'k').tolerationSeconds, BigInt(MAX));
    assert.equal(gp.spec.containers[0].lifecycle.preStop.sleep.seconds, BigInt(MAX));
    // the pod's default grace period is its own max int64: Go's time.Second * max int64 is -1 s
    const del = await ok(c.raw('DELETE', `${pods}/p-good`));
    const d = parseJSON(del.text);
    assert.equal(d.metadata.deletionGracePeriodSeconds, BigInt(MAX));
    const at = Date.parse(d.metadata.deletionTimestamp);
    assert.ok(Math.abs(at - (Date.now() - 1000)) < 5000, d.metadata.deletionTimestamp);
    // a shorter grace period (in the body, then in the query) moves it, in the same arithmetic
    const shorter = await ok(c.raw('DELETE', `${pods}/p-good`, { headers: { 'content-type': 'application/json' }, body: `{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":${P53}}` }));
    assert.equal(parseJSON(shorter.text).metadata.deletionGracePeriodSeconds, BigInt(P53));
    const out = await c.raw('DELETE', `${pods}/p-good?gracePeriodSeconds=9223372036854775808`);
    assert.equal(out.status, 400);
    assert.equal(out.json().message, 'strconv.ParseInt: parsing "9223372036854775808": value out of range');
    const body = await c.raw('DELETE', `${pods}/p-good`, { headers: { 'content-type': 'application/json' }, body: '{"gracePeriodSeconds":9223372036854775808}' });
    assert.equal(body.status, 400);
    assert.match(body.json().message, /cannot unmarshal number 9223372036854775808 into Go struct field DeleteOptions.gracePeriodSeconds of type int64/);
    await ok(c.raw('DELETE', `${pods}/p-good?gracePeriodSeconds=0`));
    // a namespace deleted while such a pod runs: its controller's estimate of the pod's grace
    // period is Go's (time.Duration(max int64) * time.Second is -1 s: nothing to wait for)
    await ok(c.raw('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'int64-ns' } } }), 201);
    await ok(
      c.raw('POST', '/api/v1/namespaces/int64-ns/pods', {
        headers: { 'content-type': 'application/json' },
        body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"nodeName":"nowhere","terminationGracePeriodSeconds":${MAX},"containers":[{"name":"c","image":"busybox"}]}}`,
      }),
      201,
    );
    await ok(c.raw('DELETE', '/api/v1/namespaces/int64-ns'));
    const terminating = await until('the pod is marked for deletion', async () => {
      const p = await c.raw('GET', '/api/v1/namespaces/int64-ns/pods/p');
      return p.status === 200 && parseJSON(p.text).metadata.deletionTimestamp ? parseJSON(p.text) : undefined;
    });
    assert.equal(terminating.metadata.deletionGracePeriodSeconds, BigInt(MAX));
  });

  test('other kinds: CronJob, ControllerRevision, CustomResourceDefinition, TokenRequest, CSIDriver, pod logs', async () => {
    const post = (path: string, body: string) => c.raw('POST', path, { headers: { 'content-type': 'application/json' }, body });
    const cj = await post(
      '/apis/batch/v1/namespaces/default/cronjobs',
      `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cj"},"spec":{"schedule":"* * * * *","startingDeadlineSeconds":${MAX},"jobTemplate":{"spec":{"activeDeadlineSeconds":${MAX},"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}}`,
    );
    assert.equal(cj.status, 201, cj.text);
    assert.equal(parseJSON(cj.text).spec.startingDeadlineSeconds, BigInt(MAX));
    const cr = await post('/apis/apps/v1/namespaces/default/controllerrevisions', `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"rev"},"data":{"n":${MAX}},"revision":${MAX}}`);
    assert.equal(cr.status, 201, cr.text);
    assert.equal(parseJSON(cr.text).revision, BigInt(MAX));
    assert.equal(parseJSON(cr.text).data.n, BigInt(MAX));
    const revs = c.kubectl(['get', 'controllerrevisions']);
    assert.match(revs.stdout, new RegExp(`^rev\\s+<none>\\s+${MAX}\\s`, 'm'), revs.stdout);
    const csi = await post('/apis/storage.k8s.io/v1/csidrivers', `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"csi.example.com"},"spec":{"nodeAllocatableUpdatePeriodSeconds":${MAX}}}`);
    assert.notEqual(csi.status, 500, csi.text);
    await ok(c.raw('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa' } } }), 201);
    const tr = await post('/api/v1/namespaces/default/serviceaccounts/sa/token', `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":${MAX}}}`);
    assert.ok(tr.status < 500, tr.text);
    const logs = await c.raw('GET', `${pods}/none/log?tailLines=${MAX}&limitBytes=${MAX}&sinceSeconds=${MAX}`);
    assert.equal(logs.status, 404, logs.text);
  });

  test('a custom resource: integers in its schema, its Table and field selectors', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'bigs.int64.example.com' },
      spec: {
        group: 'int64.example.com',
        scope: 'Namespaced',
        names: { plural: 'bigs', singular: 'big', kind: 'Big', listKind: 'BigList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            selectableFields: [{ jsonPath: '.spec.n' }],
            additionalPrinterColumns: [{ name: 'N', type: 'integer', jsonPath: '.spec.n' }],
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: { n: { type: 'integer', maximum: 9223372036854775000 }, free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
                  },
                },
              },
            },
          },
        ],
      },
    };
    await ok(c.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd }), 201);
    const base = '/apis/int64.example.com/v1/namespaces/default/bigs';
    await until('the resource is served', async () => (await c.raw('GET', base)).status === 200, 15_000);
    const mk = (name: string, n: string, free = '{}') => c.raw('POST', base, { headers: { 'content-type': 'application/json' }, body: `{"apiVersion":"int64.example.com/v1","kind":"Big","metadata":{"name":"${name}"},"spec":{"n":${n},"free":${free}}}` });
    const made = await ok(mk('b1', '9223372036854774000', `{"x":${MAX},"y":[${MIN},99999999999999999999]}`), 201);
    // (beyond int64, unstructured content holds a float64, as Kubernetes decodes it)
    assert.match(made.text, new RegExp(`"free":\\{"x":${MAX},"y":\\[${MIN},100000000000000000000\\]\\}`));
    await ok(mk('b2', '5'), 201);
    // the schema's maximum (a float64) compares exactly
    const over = await mk('b3', MAX);
    assert.equal(over.status, 422, over.text);
    assert.match(over.text, /spec.n: Invalid value: 9223372036854775807: spec.n in body should be less than or equal to /);
    // an update that changes the spec (a new generation): the old and new spec compared exactly
    const patched = await ok(c.raw('PATCH', `${base}/b1`, { headers: { 'content-type': 'application/merge-patch+json' }, body: `{"spec":{"free":{"x":${P53}}}}` }));
    assert.match(patched.text, new RegExp(`"free":\\{"x":${P53},"y":`));
    assert.equal(parseJSON(patched.text).metadata.generation, 2);
    // the Table's cell, and a field selector on the value
    const t = c.kubectl(['get', 'bigs', '--field-selector', 'spec.n=9223372036854774000']);
    assert.equal(t.code, 0, t.stderr);
    assert.match(t.stdout, /^b1\s+9223372036854774000\s/m);
    assert.doesNotMatch(t.stdout, /^b2/m);
  });
});

test("a ValidatingAdmissionPolicy's CEL sees the int64 exactly", async () => {
  const policy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: deadline}
spec:
  failurePolicy: Fail
  matchConstraints: {resourceRules: [{apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}]}
  validations:
  - expression: "!has(object.spec.activeDeadlineSeconds) || object.spec.activeDeadlineSeconds < 9223372036854775807"
    messageExpression: "'deadline ' + string(object.spec.activeDeadlineSeconds) + ' is max int64'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: deadline}
spec: {policyName: deadline, validationActions: [Deny]}
`;
  const r = c.kubectl(['create', '-f', '-'], { input: policy });
  assert.equal(r.code, 0, r.stderr);
  const post = (name: string, v: string) => c.raw('POST', `${jobs}?dryRun=All`, { headers: { 'content-type': 'application/json' }, body: jobJSON(name, v) });
  const denied = await until('policy in force', async () => {
    const d = await post('cel-max', MAX);
    return d.status === 422 ? d : undefined;
  });
  assert.match(denied.json().message, /deadline 9223372036854775807 is max int64/);
  await ok(post('cel-below', '9223372036854775806'), 201);
  c.kubectl(['delete', 'validatingadmissionpolicybinding', 'deadline']);
});

test('a restart reads the stored values back exactly', async () => {
  await c.stopProcess();
  await c.launch();
  assert.equal(adsOf(await ok(c.raw('GET', `${jobs}/k133-max`))), MAX);
  assert.equal(adsOf(await ok(c.raw('GET', `${jobs}/raw-json`))), P53);
  assert.equal(adsOf(await ok(c.raw('GET', `${jobs}/patched`))), '9223372036854775803');
  const list = await ok(c.raw('GET', jobs));
  assert.equal(parseJSON(list.text).items.find((j: any) => j.metadata.name === 'raw-yaml').spec.activeDeadlineSeconds, BigInt(MAX));
  // the custom resource definition (its schema's maximum is a float64 beyond 2^53) serves again
  await until('the custom resource is served', async () => (await c.raw('GET', '/apis/int64.example.com/v1/namespaces/default/bigs/b1')).status === 200, 15_000);
  assert.match((await ok(c.raw('GET', '/apis/int64.example.com/v1/namespaces/default/bigs/b1'))).text, new RegExp(`"free":\\{"x":${P53},"y":\\[${MIN},`));
  await ok(c.raw('GET', '/openapi/v3/apis/int64.example.com/v1'));
  const pr = await ok(c.raw('GET', '/apis/apps/v1/namespaces/default/controllerrevisions/rev'));
  assert.equal(parseJSON(pr.text).revision, BigInt(MAX));
});

test('no part of the server (its controllers included) met a bigint it could not handle', () => {
  assert.doesNotMatch(c.logs, /BigInt|TypeError/);
});
