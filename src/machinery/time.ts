// Timestamps as Kubernetes writes them (metav1.Time: RFC 3339 in whole seconds, UTC, "Z").

let lastSecond = -1;
let lastText = '';

/** RFC 3339 in whole seconds (cached per second: it is on every write's path) */
export function rfc3339(ms: number): string {
  const sec = Math.floor(ms / 1000);
  if (sec !== lastSecond) {
    lastSecond = sec;
    lastText = new Date(sec * 1000).toISOString().replace('.000Z', 'Z');
  }
  return lastText;
}
