// The errors of Go's json.Unmarshal into a map[string]interface{}, which Kubernetes reports for
// docker config secrets: the syntax error of encoding/json's scanner, or the type mismatch.
import { goJSONKind, goJSONSyntaxError } from '../../machinery/gostrings.js';

// the scanner's syntax errors are shared (machinery/gostrings); re-exported for the API server
export { goJSONSyntaxError };

/** the error of json.Unmarshal(data, &map[string]interface{}{}), or null */
export function goUnmarshalObjectError(data: Uint8Array): string | null {
  const syn = goJSONSyntaxError(data);
  if (syn) return syn;
  const v = JSON.parse(Buffer.from(data).toString('utf8'));
  const type = 'map[string]interface {}';
  if (v === null || (typeof v === 'object' && !Array.isArray(v))) return null;
  return `json: cannot unmarshal ${goJSONKind(v)} into Go value of type ${type}`;
}
