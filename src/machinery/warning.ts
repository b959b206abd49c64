// The Warning header Kubernetes sends with a response for each warning of a request.

/**
 * The Warning header value of a warning text, as Kubernetes writes it (k8s.io/apimachinery's
 * NewWarningHeader: code 299, agent "-", the text in quotes with `"` and `\` escaped and every
 * other character as it is), in a form Node.js can send. Node refuses a header value holding a
 * character above U+00FF and writes each character below it as one byte, so the text's UTF-8
 * bytes go as a latin1 string: the bytes on the wire are Kubernetes' own. Line breaks and the
 * other control characters Node refuses become spaces (Go's net/http turns \r and \n into spaces
 * too). A warning can hold what a client sent (a field's name), so nothing in it may make the
 * header unsendable.
 */
export function warningHeaderValue(text: string): string {
  let v = '299 - "' + text.replace(/["\\]/g, '\\$&').replace(/[\x00-\x08\x0a-\x1f\x7f]/g, ' ') + '"';
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(v)) v = Buffer.from(v, 'utf8').toString('latin1');
  return v;
}
