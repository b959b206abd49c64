// kubectl's printers and the pieces under them: YAML written and read as go-yaml v2 does (recorded
// from kubectl 1.33), JSON as encoding/json writes it, the name printer, the -o flag rules, and
// the error rendering of cmdutil.CheckErr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { yamlMarshal, yamlToJSONDocuments, yamlKeyLess, resolvePlain } from '../../src/kubectl/goyaml.js';
import { jsonMarshal, sprintf, formatFloat, goJSONSyntaxError, GoInt } from '../../src/kubectl/gofmt.js';
import { toPrinter, PrintError } from '../../src/kubectl/printers.js';
import { checkErr } from '../../src/kubectl/cmd.js';
import { parseWarningHeader, parseTimeout, WarningPrinter } from '../../src/kubectl/factory.js';
import { warningHeaderValue } from '../../src/machinery/warning.js';
import { dryRunStrategy } from '../../src/kubectl/patch.js';
import { AggregateError } from '../../src/kubectl/resource.js';
import { StatusError } from '../../src/machinery/errors.js';
import { YAML_OBJECT, YAML_TEXT, MANIFEST, MANIFEST_JSON } from './yaml-cases.js';

test('-o yaml writes what kubectl writes (quoting, literal blocks, folding, key order)', () => {
  assert.equal(yamlMarshal(YAML_OBJECT), YAML_TEXT);
});

test('manifests are read with go-yaml v2\'s YAML 1.1 rules', () => {
  const docs = yamlToJSONDocuments(MANIFEST);
  assert.equal(docs.length, 1);
  const mine = JSON.parse(jsonMarshal(docs[0]));
  assert.deepEqual(mine, MANIFEST_JSON);
});

test('plain scalars resolve as go-yaml v2 resolves them', () => {
  assert.deepEqual(resolvePlain('yes'), { tag: 'bool', value: true });
  assert.deepEqual(resolvePlain('n'), { tag: 'bool', value: false });
  assert.deepEqual(resolvePlain('0x1F'), { tag: 'int', value: 31n });
  assert.deepEqual(resolvePlain('017'), { tag: 'int', value: 15n });
  assert.equal(resolvePlain('1:20').tag, 'str');
  assert.equal(resolvePlain('2024-01-01').tag, 'timestamp');
  assert.equal(resolvePlain('<<').tag, 'str');
});

test('go-yaml key order: letters first, digit runs as numbers', () => {
  const keys = ['a10', 'a9', 'A', '_u', '10', '2', 'b'].sort((x, y) => (yamlKeyLess(x, y) ? -1 : yamlKeyLess(y, x) ? 1 : 0));
  assert.deepEqual(keys, ['_u', '2', '10', 'A', 'a9', 'a10', 'b']);
});

test('multi-document streams and JSON streams', () => {
  assert.deepEqual(yamlToJSONDocuments('a: 1\n---\n---\nb: 2\n'), [{ a: 1 }, { b: 2 }]);
  assert.deepEqual(yamlToJSONDocuments('{"a":1}\n{"b":2}'), [{ a: 1 }, { b: 2 }]);
  assert.throws(() => yamlToJSONDocuments('a: b: c'), /^.*yaml: mapping values are not allowed in this context$/);
});

test('encoding/json: sorted keys, HTML escaping, Go float formatting', () => {
  assert.equal(jsonMarshal({ b: '<&>', a: [1e21, 1e-7, 0.5, 100] }), '{"a":[1e+21,1e-7,0.5,100],"b":"\\u003c\\u0026\\u003e"}');
  assert.equal(jsonMarshal({ a: {}, b: [] }, '    '), '{\n    "a": {},\n    "b": []\n}');
  assert.equal(goJSONSyntaxError('{"a":'), 'unexpected end of JSON input');
  assert.equal(goJSONSyntaxError('{} x'), "invalid character 'x' after top-level value");
  assert.equal(goJSONSyntaxError('[1,]'), "invalid character ']' looking for beginning of value");
});

test('strconv and fmt corner cases', () => {
  assert.equal(formatFloat(1e6, 'g', -1), '1e+06');
  assert.equal(formatFloat(0.5, 'f', 0), '0');
  assert.equal(formatFloat(2.5, 'f', 0), '2');
  assert.equal(formatFloat(1.005, 'f', 2), '1.00');
  assert.equal(sprintf('%08.3f|%+d|% d|%x|%d', -3.14159, GoInt.of(5), GoInt.of(5), GoInt.of(-255), 1.5), '-003.142|+5| 5|-ff|%!d(float64=1.5)');
});

test('name printer and -o selection', () => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } };
  const dep = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } };
  const flags = { output: '', outputChanged: false, template: '', allowMissingTemplateKeys: true, showManagedFields: false };
  assert.equal(toPrinter(flags, 'patched').print(cm), 'configmap/x patched\n');
  assert.equal(toPrinter(flags, 'patched (no change)').print(dep), 'deployment.apps/d patched (no change)\n');
  assert.equal(toPrinter({ ...flags, output: 'name' }, 'patched').print(dep), 'deployment.apps/d\n');
  assert.equal(toPrinter({ ...flags, template: '{{.kind}}' }, 'patched').print(cm), 'ConfigMap');
  assert.throws(() => toPrinter({ ...flags, output: 'wide' }, 'patched'), (e: Error) => e instanceof PrintError && /allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,yaml$/.test(e.message));
  assert.throws(() => toPrinter({ ...flags, output: 'jsonpath' }, 'patched'), /template format specified but no template given/);
});

test('CheckErr rendering', () => {
  assert.deepEqual(checkErr(new StatusError(404, 'NotFound', 'configmaps "x" not found')), { message: 'Error from server (NotFound): configmaps "x" not found\n', code: 1 });
  assert.deepEqual(checkErr(new StatusError(401, 'Unauthorized', 'Unauthorized')), { message: 'error: You must be logged in to the server (Unauthorized)\n', code: 1 });
  assert.deepEqual(checkErr(new StatusError(422, 'Invalid', 'x', { kind: 'Deployment', name: 'd', causes: [{ field: 'spec.replicas', message: 'must be >= 0' }] })), {
    message: 'The Deployment "d" is invalid: spec.replicas: must be >= 0\n',
    code: 1,
  });
  assert.deepEqual(checkErr(new AggregateError([new StatusError(404, 'NotFound', 'a'), new Error('b')])), { message: 'Error from server (NotFound): a\nb\n', code: 1 });
  assert.deepEqual(checkErr(new Error('boom')), { message: 'error: boom\n', code: 1 });
});

test('warning headers, timeouts and --dry-run values', () => {
  assert.deepEqual(parseWarningHeader('299 - "unknown field \\"spec.x\\"", 299 - "second"'), [
    { code: 299, agent: '-', text: 'unknown field "spec.x"' },
    { code: 299, agent: '-', text: 'second' },
  ]);
  // a warning of UTF-8 text, as the server sends it and Node.js reads it (latin1), prints as it was
  let printed = '';
  new WarningPrinter({ write: (t: string) => (printed += t) }).handle([warningHeaderValue('unknown field "ü€😀"')]);
  assert.equal(printed, 'Warning: unknown field "ü€😀"\n');
  assert.equal(parseTimeout('0'), 0);
  assert.equal(parseTimeout('5'), 5000);
  assert.equal(parseTimeout('1m30s'), 90000);
  assert.throws(() => parseTimeout('soon'), /Invalid timeout value/);
  assert.equal(dryRunStrategy('server'), 'server');
  assert.equal(dryRunStrategy('none'), 'none');
  assert.throws(() => dryRunStrategy('maybe'), /Invalid dry-run value \(maybe\)/);
});
