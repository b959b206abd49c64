// matchConditions: placeholder replaced below
import type { AdmissionAttributes } from './types.js';
export function evaluateMatchConditions(_conditions: unknown[], _a: AdmissionAttributes): { matches: boolean; error?: string } {
  return { matches: false, error: 'CEL is not supported' };
}
