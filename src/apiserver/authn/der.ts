// A small DER reader: what authentication needs from an X.509 certificate that Node's
// X509Certificate does not expose as structured data (the subject's attributes with their OIDs
// and string types, the serial number, the key identifiers, critical extensions). Node's
// `subject` is OpenSSL's text rendering, which loses the order of multi-valued RDNs and the
// difference between a string and a non-string attribute value (Kubernetes treats them
// differently for the UID attribute).

export class DERError extends Error {
  override name = 'DERError';
}

export interface TLV {
  tag: number;
  /** start of the content */
  start: number;
  /** end of the content (exclusive) */
  end: number;
  /** start of the tag byte */
  off: number;
}

export function readTLV(buf: Uint8Array, off: number, limit = buf.length): TLV {
  if (off + 2 > limit) throw new DERError('truncated DER element');
  const tag = buf[off]!;
  if ((tag & 0x1f) === 0x1f) throw new DERError('multi-byte DER tags are not supported');
  let len = buf[off + 1]!;
  let start = off + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new DERError('unsupported DER length');
    if (start + n > limit) throw new DERError('truncated DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i]!;
    start += n;
  }
  const end = start + len;
  if (end > limit) throw new DERError('DER element longer than its container');
  return { tag, start, end, off };
}

export function children(buf: Uint8Array, parent: TLV): TLV[] {
  const out: TLV[] = [];
  for (let off = parent.start; off < parent.end; ) {
    const t = readTLV(buf, off, parent.end);
    out.push(t);
    off = t.end;
  }
  return out;
}

export function oidToString(b: Uint8Array): string {
  if (b.length === 0) throw new DERError('empty OID');
  const parts: number[] = [];
  const first = b[0]!;
  let i = 0;
  // the first arcs: 40*X+Y (X is 2 for anything >= 80)
  let v = 0;
  for (; i < b.length; i++) {
    v = v * 128 + (b[i]! & 0x7f);
    if (!(b[i]! & 0x80)) break;
  }
  i++;
  if (first < 0x80 && v < 80) parts.push(Math.floor(v / 40), v % 40);
  else parts.push(2, v - 80);
  v = 0;
  for (; i < b.length; i++) {
    v = v * 128 + (b[i]! & 0x7f);
    if (!(b[i]! & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

/** An attribute of a distinguished name: its OID and its value (a string when it is one of ASN.1's string types). */
export interface NameAttribute {
  oid: string;
  value: string | { tag: number; bytes: Buffer };
}

function decodeString(tag: number, bytes: Buffer): string | undefined {
  switch (tag) {
    case 0x0c: // UTF8String
      return bytes.toString('utf8');
    case 0x13: // PrintableString
    case 0x16: // IA5String
    case 0x12: // NumericString
      return bytes.toString('latin1');
    case 0x14: // T61String (Go decodes it as Latin-1)
      return bytes.toString('latin1');
    case 0x1e: {
      // BMPString: UTF-16BE
      if (bytes.length % 2) return undefined;
      const sw = Buffer.from(bytes);
      sw.swap16();
      return sw.toString('utf16le');
    }
    case 0x1c: {
      // UniversalString: UTF-32BE
      if (bytes.length % 4) return undefined;
      let s = '';
      for (let i = 0; i < bytes.length; i += 4) s += String.fromCodePoint(bytes.readUInt32BE(i));
      return s;
    }
    default:
      return undefined;
  }
}

export interface ParsedCertificate {
  /** serial number, unsigned big-endian bytes as DER holds them */
  serial: Buffer;
  subject: NameAttribute[];
  subjectKeyId?: Buffer;
  authorityKeyId?: Buffer;
  /** OIDs of critical extensions */
  criticalExtensions: string[];
}

const OID_SKID = '2.5.29.14';
const OID_AKID = '2.5.29.35';

function parseName(buf: Buffer, name: TLV): NameAttribute[] {
  const out: NameAttribute[] = [];
  for (const rdn of children(buf, name)) {
    if (rdn.tag !== 0x31) throw new DERError('malformed RDN');
    for (const atv of children(buf, rdn)) {
      const [oid, val] = children(buf, atv);
      if (!oid || !val || oid.tag !== 0x06) throw new DERError('malformed attribute');
      const bytes = Buffer.from(buf.subarray(val.start, val.end));
      const s = decodeString(val.tag, bytes);
      out.push({ oid: oidToString(buf.subarray(oid.start, oid.end)), value: s ?? { tag: val.tag, bytes } });
    }
  }
  return out;
}

/** Parses the parts of a DER certificate authentication uses. Throws DERError on malformed input. */
export function parseCertificate(der: Buffer): ParsedCertificate {
  const cert = readTLV(der, 0);
  if (cert.tag !== 0x30) throw new DERError('certificate is not a SEQUENCE');
  const [tbs] = children(der, cert);
  if (!tbs || tbs.tag !== 0x30) throw new DERError('malformed TBSCertificate');
  let fields = children(der, tbs);
  if (fields[0]?.tag === 0xa0) fields = fields.slice(1); // version
  const [serial, , , , subject] = fields;
  if (!serial || serial.tag !== 0x02 || !subject || subject.tag !== 0x30) throw new DERError('malformed TBSCertificate');
  let s = der.subarray(serial.start, serial.end);
  while (s.length > 1 && s[0] === 0) s = s.subarray(1);
  const out: ParsedCertificate = { serial: Buffer.from(s), subject: parseName(der, subject), criticalExtensions: [] };
  const ext = fields.find((f) => f.tag === 0xa3);
  if (ext) {
    const [list] = children(der, ext);
    if (!list) return out;
    for (const e of children(der, list)) {
      const parts = children(der, e);
      const oid = oidToString(der.subarray(parts[0]!.start, parts[0]!.end));
      const critical = parts.length === 3 && parts[1]!.tag === 0x01 && der[parts[1]!.start] !== 0;
      if (critical) out.criticalExtensions.push(oid);
      const value = parts[parts.length - 1]!; // OCTET STRING
      if (oid === OID_SKID) {
        const inner = readTLV(der, value.start, value.end);
        out.subjectKeyId = Buffer.from(der.subarray(inner.start, inner.end));
      } else if (oid === OID_AKID) {
        const seq = readTLV(der, value.start, value.end);
        for (const c of children(der, seq)) if (c.tag === 0x80) out.authorityKeyId = Buffer.from(der.subarray(c.start, c.end));
      }
    }
  }
  return out;
}

/** Go's `%d` of a certificate serial number (big.Int). */
export function serialDecimal(serial: Buffer): string {
  if (serial.length === 0) return '0';
  return BigInt('0x' + serial.toString('hex')).toString(10);
}
