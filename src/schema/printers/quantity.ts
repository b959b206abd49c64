// The canonical string of a resource quantity, as Kubernetes prints a Quantity it has parsed
// ("1.5" -> "1500m", "1000" -> "1k", "2048Ki" -> "2Mi", "0.5Ki" -> "512"). The printers use it for
// capacities, quota usage and autoscaler metrics, so a value stored in a non-canonical spelling is
// shown the way a Kubernetes server would show it. Display only: this is not a general Quantity type.

type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const BIN: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DEC: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DEC_SUFFIX: Record<number, string> = Object.fromEntries(Object.entries(DEC).map(([s, e]) => [e, s]));
const BIN_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const NANO = 1_000_000_000n;

interface Parsed {
  /** the value times 10^9, rounded away from zero to a whole number */
  nano: bigint;
  format: Format;
}

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** value = sign * digits * 10^exp10 * mult, expressed in nano units, rounded away from zero */
function toNano(negative: boolean, digits: bigint, exp10: number, mult: bigint): bigint {
  let num = digits * mult;
  let e = exp10 + 9;
  let v: bigint;
  if (e >= 0) v = num * pow10(e);
  else {
    const d = pow10(-e);
    v = num / d;
    if (num % d !== 0n) v += 1n;
  }
  return negative ? -v : v;
}

function parse(input: string): Parsed | null {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/.exec(input.trim());
  if (!m) return null;
  const [, sign, whole, frac = '', suffix] = m;
  if (whole === '' && frac === '') return null;
  const digits = BigInt((whole || '0') + frac);
  const negative = sign === '-';
  if (suffix in BIN) return { nano: toNano(negative, digits, -frac.length, BIN[suffix]), format: 'BinarySI' };
  if (suffix in DEC) return { nano: toNano(negative, digits, DEC[suffix] - frac.length, 1n), format: 'DecimalSI' };
  const e = /^[eE]([+-]?\d+)$/.exec(suffix);
  if (e) return { nano: toNano(negative, digits, Number(e[1]) - frac.length, 1n), format: 'DecimalExponent' };
  return null;
}

function abs(v: bigint): bigint {
  return v < 0n ? -v : v;
}

/**
 * The canonical form of a quantity. Non-string inputs are read as their JSON text; an
 * unparsable quantity is returned as given. `undefined`/`null` is the zero quantity, "0".
 */
export function canonicalQuantity(value: unknown): string {
  if (value === undefined || value === null) return '0';
  const text = typeof value === 'string' ? value : String(value);
  const q = parse(text);
  if (!q) return text;
  if (q.nano === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    // Small or fractional binary values are shown in decimal, to avoid rounding.
    if (abs(q.nano) < 1024n * NANO || q.nano % NANO !== 0n) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    let v = q.nano / NANO;
    let exp = 0;
    while (v % 1024n === 0n && exp < BIN_SUFFIX.length - 1) {
      v /= 1024n;
      exp++;
    }
    return `${v}${BIN_SUFFIX[exp]}`;
  }
  let mantissa = q.nano;
  let exp = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exp++;
  }
  // Bring the exponent down to a multiple of three.
  const r = ((exp % 3) + 3) % 3;
  if (r !== 0) {
    mantissa *= pow10(r);
    exp -= r;
  }
  if (format === 'DecimalExponent') return exp === 0 ? `${mantissa}` : `${mantissa}e${exp}`;
  const suffix = DEC_SUFFIX[exp];
  return suffix === undefined ? `${mantissa}e${exp}` : `${mantissa}${suffix}`;
}
