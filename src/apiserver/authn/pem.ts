// PEM blocks as Go's encoding/pem reads them: `-----BEGIN <type>-----`, optional `Key: value`
// headers, a base64 body and a matching `-----END <type>-----`. A block whose body is not valid
// base64 or whose END does not match is skipped, as pem.Decode skips it.

export interface PEMBlock {
  type: string;
  headers: Record<string, string>;
  bytes: Buffer;
}

const BEGIN = /-----BEGIN ([^\r\n]*?)-----[ \t]*\r?\n/g;

export function pemBlocks(data: string | Buffer): PEMBlock[] {
  const text = typeof data === 'string' ? data : data.toString('latin1');
  const out: PEMBlock[] = [];
  BEGIN.lastIndex = 0;
  for (let m = BEGIN.exec(text); m; m = BEGIN.exec(text)) {
    // the BEGIN line must start a line
    if (m.index > 0 && text[m.index - 1] !== '\n') continue;
    const type = m[1]!;
    const endMarker = `-----END ${type}-----`;
    const endAt = text.indexOf(endMarker, BEGIN.lastIndex);
    if (endAt < 0) continue;
    const body = text.slice(BEGIN.lastIndex, endAt);
    const lines = body.split(/\r?\n/);
    const headers: Record<string, string> = {};
    let i = 0;
    for (; i < lines.length; i++) {
      const l = lines[i]!;
      const c = l.indexOf(':');
      if (c < 0) break;
      headers[l.slice(0, c).trim()] = l.slice(c + 1).trim();
    }
    const b64 = lines.slice(i).join('').replace(/[ \t\r\n]/g, '');
    if (b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) continue;
    out.push({ type, headers, bytes: Buffer.from(b64, 'base64') });
    BEGIN.lastIndex = endAt + endMarker.length;
  }
  return out;
}
