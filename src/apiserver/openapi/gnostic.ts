// The protobuf form of the Swagger 2.0 document, as gnostic's openapi_v2.Document: what
// kube-apiserver serves for Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf
// and what kubectl 1.27 and 1.28 read first (kube-openapi's util/proto models). The mapping
// follows gnostic's compiler: a JSON object becomes its message, maps become repeated Named*
// pairs in document order, `$ref` becomes `_ref`, parameters and responses are oneofs chosen by
// their shape, and every free-form value (`default`, `enum`, `example`, vendor extensions) is
// an Any whose `yaml` field holds the value as YAML text. That text is written in YAML's flow
// style, which is JSON: readers (kube-openapi unmarshals it with a YAML parser) take it as they
// take gnostic's block style, and it is much cheaper to write.
//
// Field numbers (openapi.v2 package of gnostic's OpenAPIv2.proto), only those written here:
//   Document: 1 swagger, 2 info, 3 host, 4 base_path, 5 schemes, 6 consumes, 7 produces, 8 paths,
//     9 definitions, 10 parameters, 11 responses, 12 security, 13 security_definitions, 14 tags,
//     16 vendor_extension
//   Info: 1 title, 2 version, 3 description, 7 vendor_extension
//   Paths: 1 vendor_extension, 2 path (NamedPathItem 1 name, 2 value)
//   PathItem: 1 _ref, 2 get, 3 put, 4 post, 5 delete, 6 options, 7 head, 8 patch, 9 parameters, 10 vendor_extension
//   Operation: 1 tags, 2 summary, 3 description, 5 operation_id, 6 produces, 7 consumes, 8 parameters,
//     9 responses, 10 schemes, 11 deprecated, 13 vendor_extension
//   ParametersItem: 1 parameter, 2 json_reference;  JsonReference: 1 _ref, 2 description
//   Parameter: 1 body_parameter, 2 non_body_parameter
//   BodyParameter: 1 description, 2 name, 3 in, 4 required, 5 schema, 6 vendor_extension
//   NonBodyParameter: 1 header, 2 form_data, 3 query, 4 path (the *ParameterSubSchema messages)
//   Header/Query/FormData/PathParameterSubSchema: see SUBSCHEMA_FIELDS below
//   Responses: 1 response_code (NamedResponseValue 1 name, 2 value), 2 vendor_extension
//   ResponseValue: 1 response, 2 json_reference;  Response: 1 description, 2 schema (SchemaItem 1 schema), 5 vendor_extension
//   Schema: 1 _ref, 2 format, 3 title, 4 description, 5 default, 6 multiple_of, 7 maximum,
//     8 exclusive_maximum, 9 minimum, 10 exclusive_minimum, 11 max_length, 12 min_length, 13 pattern,
//     14 max_items, 15 min_items, 16 unique_items, 17 max_properties, 18 min_properties, 19 required,
//     20 enum, 21 additional_properties (AdditionalPropertiesItem 1 schema, 2 boolean), 22 type (TypeItem 1 value),
//     23 items (ItemsItem 1 schema), 24 all_of, 25 properties (Properties 1 additional_properties),
//     26 discriminator, 27 read_only, 30 example, 31 vendor_extension
//   Definitions/ParameterDefinitions/SecurityDefinitions/SecurityRequirement: 1 additional_properties (Named*: 1 name, 2 value)
//   SecurityDefinitionsItem: 2 api_key_security (ApiKeySecurity 1 type, 2 name, 3 in, 4 description, 5 vendor_extension)
//   StringArray: 1 value;  NamedAny: 1 name, 2 value;  Any: 2 yaml;  Tag: 1 name, 2 description
import { stringifyJSON } from '../../codec/int64.js';
import type { Json, JsonObject } from './json.js';

// ---------------------------------------------------------------------------------------------
// A minimal protobuf writer: varints, length-delimited fields and fixed64 doubles. Nested
// messages are written in place and their length prefix is inserted when they end.

class Writer {
  private buf = new Uint8Array(1 << 16);
  private pos = 0;
  private readonly starts: number[] = [];

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.pos));
    this.buf = b;
  }

  private raw(v: number): void {
    this.ensure(10);
    while (v > 0x7f) {
      this.buf[this.pos++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }

  private tag(field: number, wire: number): void {
    this.raw(field * 8 + wire);
  }

  string(field: number, s: string | undefined): void {
    if (s === undefined || s === '') return;
    this.tag(field, 2);
    const len = Buffer.byteLength(s, 'utf8');
    this.raw(len);
    this.ensure(len);
    Buffer.from(this.buf.buffer, this.buf.byteOffset, this.buf.length).write(s, this.pos, 'utf8');
    this.pos += len;
  }

  strings(field: number, a: Json | undefined): void {
    if (!Array.isArray(a)) return;
    for (const s of a) {
      // a repeated string keeps empty elements
      const t = String(s);
      this.tag(field, 2);
      const len = Buffer.byteLength(t, 'utf8');
      this.raw(len);
      this.ensure(len);
      Buffer.from(this.buf.buffer, this.buf.byteOffset, this.buf.length).write(t, this.pos, 'utf8');
      this.pos += len;
    }
  }

  bool(field: number, b: Json | undefined): void {
    if (b !== true) return;
    this.tag(field, 0);
    this.raw(1);
  }

  int64(field: number, n: Json | undefined): void {
    if (typeof n !== 'number' || n === 0) return;
    this.tag(field, 0);
    if (n > 0) this.raw(n);
    else {
      // two's complement over 64 bits, as ten bytes
      let big = BigInt.asUintN(64, BigInt(Math.trunc(n)));
      this.ensure(10);
      while (big > 0x7fn) {
        this.buf[this.pos++] = Number(big & 0x7fn) | 0x80;
        big >>= 7n;
      }
      this.buf[this.pos++] = Number(big);
    }
  }

  double(field: number, n: Json | undefined): void {
    if (typeof n !== 'number' || n === 0) return;
    this.tag(field, 1);
    this.ensure(8);
    new DataView(this.buf.buffer, this.buf.byteOffset).setFloat64(this.pos, n, true);
    this.pos += 8;
  }

  /** begins a nested message in `field`; end it with end() */
  begin(field: number): void {
    this.tag(field, 2);
    this.starts.push(this.pos);
  }

  end(): void {
    const start = this.starts.pop()!;
    const len = this.pos - start;
    let n = 1;
    for (let v = len; v > 0x7f; v = Math.floor(v / 128)) n++;
    this.ensure(n);
    this.buf.copyWithin(start + n, start, this.pos);
    let v = len;
    let p = start;
    while (v > 0x7f) {
      this.buf[p++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[p] = v;
    this.pos += n;
  }

  message(field: number, write: () => void): void {
    this.begin(field);
    write();
    this.end();
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

// ---------------------------------------------------------------------------------------------

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** the YAML text kept in Any.yaml: the value in flow style (JSON is valid YAML 1.2) */
export function yamlText(v: Json): string {
  return stringifyJSON(v) + '\n';
}

function any(w: Writer, field: number, v: Json): void {
  w.message(field, () => w.string(2, yamlText(v)));
}

function vendorExtensions(w: Writer, field: number, o: JsonObject): void {
  for (const [k, v] of Object.entries(o)) {
    if (!k.startsWith('x-')) continue;
    w.message(field, () => {
      w.string(1, k);
      any(w, 2, v);
    });
  }
}

function schema(w: Writer, s: JsonObject): void {
  w.string(1, s.$ref as string | undefined);
  w.string(2, s.format as string | undefined);
  w.string(3, s.title as string | undefined);
  w.string(4, s.description as string | undefined);
  if (s.default !== undefined) any(w, 5, s.default);
  w.double(6, s.multipleOf);
  w.double(7, s.maximum);
  w.bool(8, s.exclusiveMaximum);
  w.double(9, s.minimum);
  w.bool(10, s.exclusiveMinimum);
  w.int64(11, s.maxLength);
  w.int64(12, s.minLength);
  w.string(13, s.pattern as string | undefined);
  w.int64(14, s.maxItems);
  w.int64(15, s.minItems);
  w.bool(16, s.uniqueItems);
  w.int64(17, s.maxProperties);
  w.int64(18, s.minProperties);
  w.strings(19, s.required);
  if (Array.isArray(s.enum)) for (const e of s.enum) any(w, 20, e);
  const ap = s.additionalProperties;
  if (isObject(ap)) w.message(21, () => w.message(1, () => schema(w, ap)));
  else if (typeof ap === 'boolean') w.message(21, () => w.bool(2, ap));
  if (s.type !== undefined) w.message(22, () => w.strings(1, Array.isArray(s.type) ? s.type : [s.type as string]));
  const items = s.items;
  if (isObject(items)) w.message(23, () => w.message(1, () => schema(w, items)));
  else if (Array.isArray(items)) w.message(23, () => items.forEach((i) => w.message(1, () => schema(w, i as JsonObject))));
  if (Array.isArray(s.allOf)) for (const a of s.allOf) w.message(24, () => schema(w, a as JsonObject));
  const props = s.properties;
  if (isObject(props)) w.message(25, () => named(w, 1, props, (v) => schema(w, v as JsonObject)));
  w.string(26, s.discriminator as string | undefined);
  w.bool(27, s.readOnly);
  if (s.example !== undefined) any(w, 30, s.example);
  vendorExtensions(w, 31, s);
}

/** repeated Named* entries {1 name, 2 value} */
function named(w: Writer, field: number, o: JsonObject, value: (v: Json) => void): void {
  for (const [k, v] of Object.entries(o)) {
    w.message(field, () => {
      w.string(1, k);
      w.message(2, () => value(v));
    });
  }
}

/** field numbers of the four NonBodyParameter sub-schemas */
const SUBSCHEMA_FIELDS = {
  // required, in, description, name, allow_empty_value, type, format, items, collection_format, default,
  // maximum, exclusive_maximum, minimum, exclusive_minimum, max_length, min_length, pattern, max_items,
  // min_items, unique_items, enum, multiple_of, vendor_extension
  query: { oneof: 3, f: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23] },
  formData: { oneof: 2, f: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23] },
  // header and path have no allow_empty_value
  header: { oneof: 1, f: [1, 2, 3, 4, 0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22] },
  path: { oneof: 4, f: [1, 2, 3, 4, 0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22] },
} as const;

function primitivesItems(w: Writer, s: JsonObject): void {
  // PrimitivesItems: 1 type, 2 format, 3 items, 4 collection_format, 5 default, 15 unique_items, 16 enum
  w.string(1, s.type as string | undefined);
  w.string(2, s.format as string | undefined);
  if (isObject(s.items)) {
    const inner = s.items;
    w.message(3, () => primitivesItems(w, inner));
  }
  w.string(4, s.collectionFormat as string | undefined);
  if (s.default !== undefined) any(w, 5, s.default);
  w.bool(15, s.uniqueItems);
  if (Array.isArray(s.enum)) for (const e of s.enum) any(w, 16, e);
}

function nonBody(w: Writer, p: JsonObject): void {
  const kind = (p.in as string) in SUBSCHEMA_FIELDS ? (p.in as keyof typeof SUBSCHEMA_FIELDS) : 'query';
  const { oneof, f } = SUBSCHEMA_FIELDS[kind];
  w.message(oneof, () => {
    w.bool(f[0], p.required);
    w.string(f[1], p.in as string);
    w.string(f[2], p.description as string | undefined);
    w.string(f[3], p.name as string);
    if (f[4]) w.bool(f[4], p.allowEmptyValue);
    w.string(f[5], p.type as string | undefined);
    w.string(f[6], p.format as string | undefined);
    if (isObject(p.items)) {
      const items = p.items;
      w.message(f[7], () => primitivesItems(w, items));
    }
    w.string(f[8], p.collectionFormat as string | undefined);
    if (p.default !== undefined) any(w, f[9], p.default);
    w.double(f[10], p.maximum);
    w.bool(f[11], p.exclusiveMaximum);
    w.double(f[12], p.minimum);
    w.bool(f[13], p.exclusiveMinimum);
    w.int64(f[14], p.maxLength);
    w.int64(f[15], p.minLength);
    w.string(f[16], p.pattern as string | undefined);
    w.int64(f[17], p.maxItems);
    w.int64(f[18], p.minItems);
    w.bool(f[19], p.uniqueItems);
    if (Array.isArray(p.enum)) for (const e of p.enum) any(w, f[20], e);
    w.double(f[21], p.multipleOf);
    vendorExtensions(w, f[22], p);
  });
}

/** a Parameter message (oneof body_parameter, non_body_parameter) */
function parameter(w: Writer, p: JsonObject): void {
  if (p.in === 'body') {
    w.message(1, () => {
      w.string(1, p.description as string | undefined);
      w.string(2, p.name as string);
      w.string(3, 'body');
      w.bool(4, p.required);
      if (isObject(p.schema)) {
        const s = p.schema;
        w.message(5, () => schema(w, s));
      }
      vendorExtensions(w, 6, p);
    });
  } else {
    w.message(2, () => nonBody(w, p));
  }
}

/** a ParametersItem: the parameter itself or a JSON reference */
function parametersItem(w: Writer, field: number, p: JsonObject): void {
  w.message(field, () => {
    if (typeof p.$ref === 'string') {
      const ref = p.$ref;
      w.message(2, () => w.string(1, ref));
    } else {
      w.message(1, () => parameter(w, p));
    }
  });
}

function operation(w: Writer, op: JsonObject): void {
  w.strings(1, op.tags);
  w.string(2, op.summary as string | undefined);
  w.string(3, op.description as string | undefined);
  w.string(5, op.operationId as string | undefined);
  w.strings(6, op.produces);
  w.strings(7, op.consumes);
  if (Array.isArray(op.parameters)) for (const p of op.parameters) parametersItem(w, 8, p as JsonObject);
  if (isObject(op.responses)) {
    const responses = op.responses;
    w.message(9, () => {
      for (const [code, r] of Object.entries(responses)) {
        if (code.startsWith('x-')) continue;
        w.message(1, () => {
          w.string(1, code);
          w.message(2, () => {
            const resp = r as JsonObject;
            if (typeof resp.$ref === 'string') {
              const ref = resp.$ref;
              w.message(2, () => w.string(1, ref));
              return;
            }
            w.message(1, () => {
              w.string(1, resp.description as string | undefined);
              if (isObject(resp.schema)) {
                const s = resp.schema;
                w.message(2, () => w.message(1, () => schema(w, s)));
              }
              vendorExtensions(w, 5, resp);
            });
          });
        });
      }
      vendorExtensions(w, 2, responses);
    });
  }
  w.strings(10, op.schemes);
  w.bool(11, op.deprecated);
  vendorExtensions(w, 13, op);
}

const PATH_METHODS: [string, number][] = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['options', 6],
  ['head', 7],
  ['patch', 8],
];

function pathItem(w: Writer, item: JsonObject): void {
  w.string(1, item.$ref as string | undefined);
  for (const [m, f] of PATH_METHODS) {
    const op = item[m];
    if (isObject(op)) w.message(f, () => operation(w, op));
  }
  if (Array.isArray(item.parameters)) for (const p of item.parameters) parametersItem(w, 9, p as JsonObject);
  vendorExtensions(w, 10, item);
}

/** Encodes a Swagger 2.0 document (as JSON) as gnostic's openapi_v2.Document. */
export function encodeOpenAPIv2(doc: JsonObject): Uint8Array {
  const w = new Writer();
  w.string(1, doc.swagger as string);
  if (isObject(doc.info)) {
    const info = doc.info;
    w.message(2, () => {
      w.string(1, info.title as string | undefined);
      w.string(2, info.version as string | undefined);
      w.string(3, info.description as string | undefined);
      vendorExtensions(w, 7, info);
    });
  }
  w.string(3, doc.host as string | undefined);
  w.string(4, doc.basePath as string | undefined);
  w.strings(5, doc.schemes);
  w.strings(6, doc.consumes);
  w.strings(7, doc.produces);
  if (isObject(doc.paths)) {
    const paths = doc.paths;
    w.message(8, () => {
      vendorExtensions(w, 1, paths);
      for (const [p, item] of Object.entries(paths)) {
        if (p.startsWith('x-')) continue;
        w.message(2, () => {
          w.string(1, p);
          w.message(2, () => pathItem(w, item as JsonObject));
        });
      }
    });
  }
  if (isObject(doc.definitions)) {
    const defs = doc.definitions;
    w.message(9, () => named(w, 1, defs, (v) => schema(w, v as JsonObject)));
  }
  if (isObject(doc.parameters)) {
    const params = doc.parameters;
    w.message(10, () => named(w, 1, params, (v) => parameter(w, v as JsonObject)));
  }
  if (Array.isArray(doc.security)) {
    for (const req of doc.security) {
      w.message(12, () => named(w, 1, req as JsonObject, (v) => w.strings(1, v)));
    }
  }
  if (isObject(doc.securityDefinitions)) {
    const defs = doc.securityDefinitions;
    w.message(13, () =>
      named(w, 1, defs, (v) => {
        const d = v as JsonObject;
        // only API key schemes are written (the one Kubernetes publishes)
        w.message(2, () => {
          w.string(1, d.type as string);
          w.string(2, d.name as string);
          w.string(3, d.in as string);
          w.string(4, d.description as string | undefined);
          vendorExtensions(w, 5, d);
        });
      }),
    );
  }
  if (Array.isArray(doc.tags)) {
    for (const t of doc.tags) {
      const tag = t as JsonObject;
      w.message(14, () => {
        w.string(1, tag.name as string);
        w.string(2, tag.description as string | undefined);
      });
    }
  }
  vendorExtensions(w, 16, doc);
  return w.finish();
}
