// ResourceList defaulting: Kubernetes rounds every quantity of a ResourceList up to milli-units
// (SetDefaults_ResourceList, "we round up resource values to milli scale to maintain API
// compatibility"), so "100u" of CPU is stored as "1m".
import { canonicalQuantity } from '../printers/quantity.js';

const SUB_MILLI = /^(-?)(\d+)(n|u|e-9|e-6)$/;

/** The quantity rounded up (away from zero) to a whole number of milli-units, in canonical form. */
export function roundUpToMilli(q: string): string {
  let m = SUB_MILLI.exec(q);
  if (!m) {
    // normalized input is canonical already; anything else is brought to canonical form first
    if (!/[.eEnu]/.test(q)) return q;
    const c = canonicalQuantity(q);
    m = SUB_MILLI.exec(c);
    if (!m) return q;
  }
  const [, sign, digits, unit] = m as unknown as [string, string, string, string];
  const div = unit === 'n' || unit === 'e-9' ? 1_000_000n : 1_000n;
  const v = BigInt(digits);
  let milli = v / div;
  if (v % div !== 0n) milli += 1n;
  return canonicalQuantity(`${sign}${milli}${unit.startsWith('e') ? 'e-3' : 'm'}`);
}
