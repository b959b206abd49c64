// Timestamps as Kubernetes writes them (metav1.Time: RFC 3339 in whole seconds, UTC, "Z").

let lastSecond = -1;
let lastText = '';

/**
 * `ms` plus a number of seconds as Go adds them to a time (t.Add(time.Second * time.Duration(s))):
 * the product is int64 nanoseconds, which wrap beyond ~292 years (a grace period of max int64
 * seconds is -1 s). `s` may be a bigint (an int64 beyond 2^53).
 */
export function addGoSeconds(ms: number, s: number | bigint): number {
  if (typeof s === 'number' && s <= 9223372036 && s >= -9223372036) return ms + s * 1000;
  const ns = BigInt.asIntN(64, BigInt(s) * 1_000_000_000n);
  return ms + Number(ns / 1_000_000n);
}

/** RFC 3339 in whole seconds (cached per second: it is on every write's path) */
export function rfc3339(ms: number): string {
  const sec = Math.floor(ms / 1000);
  if (sec !== lastSecond) {
    lastSecond = sec;
    lastText = new Date(sec * 1000).toISOString().replace('.000Z', 'Z');
  }
  return lastText;
}
