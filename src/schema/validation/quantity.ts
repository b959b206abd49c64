// resource.Quantity as validation needs it: parse, compare, and print in canonical form
// ("500m", "1Gi", "1k"), since messages such as "must be less than or equal to cpu limit of 1"
// show the canonical form. Values are kept exactly as a count of nano units (10^-9), which is
// the finest precision Kubernetes keeps (finer values are rounded up, away from zero).

import { GoRepr } from './errs.js';

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  /** the value in units of 10^-9 */
  nano: bigint;
  format: QuantityFormat;
}

const DEC_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BIN_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const NANO = 1_000_000_000n;

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** Parses a quantity string (or a JSON number); null when it is not a quantity. */
export function parseQuantity(input: unknown): Quantity | null {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return null;
    input = String(input);
  }
  if (typeof input !== 'string' || input.length === 0) return null;
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(input);
  if (!m) return null;
  const neg = m[1] === '-';
  const num = m[2] ?? '';
  const denom = m[3] ?? '';
  const suffix = m[4] ?? '';
  if (num.length + denom.length === 0) return null;
  let format: QuantityFormat;
  let exp10 = 0;
  let exp2 = 0;
  if (suffix in DEC_SUFFIX) {
    format = 'DecimalSI';
    exp10 = DEC_SUFFIX[suffix]!;
  } else if (suffix in BIN_SUFFIX) {
    format = 'BinarySI';
    exp2 = BIN_SUFFIX[suffix]!;
  } else if (/^[eE][+-]?[0-9]+$/.test(suffix)) {
    format = 'DecimalExponent';
    exp10 = Number(suffix.slice(1));
    if (!Number.isSafeInteger(exp10) || Math.abs(exp10) > 2147483647) return null;
  } else return null;
  let mant = BigInt((num + denom).replace(/^0+(?=.)/, '') || '0');
  mant *= 2n ** BigInt(exp2);
  // value = mant * 10^(exp10 - len(denom)); in nano units: * 10^(exp10 - len(denom) + 9)
  const shift = exp10 - denom.length + 9;
  let nano: bigint;
  if (shift >= 0) nano = mant * pow10(shift);
  else {
    const d = pow10(-shift);
    nano = mant / d;
    if (mant % d !== 0n) nano += 1n; // round up, away from zero
  }
  if (neg) nano = -nano;
  // a binary quantity below one is shown as a decimal one
  if (format === 'BinarySI' && nano > 0n && nano < NANO) format = 'DecimalSI';
  return { nano, format };
}

export function cmpQuantity(a: Quantity, b: Quantity): number {
  return a.nano < b.nano ? -1 : a.nano > b.nano ? 1 : 0;
}

export function isZero(q: Quantity): boolean {
  return q.nano === 0n;
}

/** Quantity.Value(): the integer value, rounded up (away from zero) */
export function quantityValue(q: Quantity): bigint {
  const v = q.nano / NANO;
  if (q.nano % NANO === 0n) return v;
  return q.nano > 0n ? v + 1n : v - 1n;
}

/** Quantity.MilliValue(): the value in thousandths, rounded up (away from zero) */
export function quantityMilliValue(q: Quantity): bigint {
  const d = 1_000_000n;
  const v = q.nano / d;
  if (q.nano % d === 0n) return v;
  return q.nano > 0n ? v + 1n : v - 1n;
}

function removeFactors(v: bigint, f: bigint): [bigint, number] {
  let times = 0;
  if (v === 0n) return [0n, 0];
  while (v % f === 0n) {
    v /= f;
    times++;
  }
  return [v, times];
}

/** The canonical form Quantity.String() prints. */
export function quantityString(q: Quantity): string {
  if (q.nano === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    const abs = q.nano < 0n ? -q.nano : q.nano;
    if (abs < 1024n * NANO || q.nano % NANO !== 0n) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    let [amount, times] = removeFactors(q.nano / NANO, 1024n);
    while (times > 6) {
      amount *= 1024n;
      times--;
    }
    const suffix = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'][times]!;
    return `${amount}${suffix}`;
  }
  let [amount, times] = removeFactors(q.nano, 10n);
  let exponent = times - 9;
  const r = exponent % 3; // Go's % keeps the sign of the dividend, as JavaScript's does
  if (r === 1 || r === -2) {
    amount *= 10n;
    exponent -= 1;
  } else if (r === 2 || r === -1) {
    amount *= 100n;
    exponent -= 2;
  }
  if (format === 'DecimalExponent') return exponent === 0 ? `${amount}` : `${amount}e${exponent}`;
  const dec: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
  while (exponent > 18) {
    amount *= 1000n;
    exponent -= 3;
  }
  return `${amount}${dec[exponent] ?? ''}`;
}

/** The canonical string of a raw quantity value, or the value itself when it does not parse. */
export function canonical(v: unknown): string {
  const q = parseQuantity(v);
  return q ? quantityString(q) : String(v);
}

/** a ResourceList as %#v prints it (core.ResourceList{"cpu":resource.Quantity{...}}) */
export function goResourceList(m: Record<string, unknown>): GoRepr {
  const keys = Object.keys(m).sort();
  return new GoRepr(`core.ResourceList{${keys.map((k) => `${JSON.stringify(k)}:${goQuantityStruct(m[k])}`).join(', ')}}`);
}

/** a Quantity as %#v prints it; the int64Amount parts follow the parser's representation */
export function goQuantityStruct(v: unknown): string {
  const s = typeof v === 'number' ? String(v) : String(v ?? '');
  const x = parseQuantity(s);
  if (!x) return `resource.Quantity{i:resource.int64Amount{value:0, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:""}`;
  let value = x.nano;
  let scale = -9;
  while (value !== 0n && value % 10n === 0n && scale < 0) {
    value /= 10n;
    scale++;
  }
  if (x.format === 'BinarySI') {
    value = x.nano / NANO;
    scale = 0;
  }
  const canon = quantityString(x) === s ? s : '';
  return `resource.Quantity{i:resource.int64Amount{value:${value}, scale:${scale}}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:${JSON.stringify(canon)}, Format:${JSON.stringify(x.format)}}`;
}
