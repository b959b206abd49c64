// CRD conversion webhooks (spec.conversion.strategy: Webhook): custom resources sent to the CRD's
// webhook in a ConversionReview (apiextensions.k8s.io v1 or v1beta1, the first of
// conversionReviewVersions that Keelson speaks) and taken back as kube-apiserver takes them:
//
// - only objects not already in the desired version are sent; an answer is refused (with
//   kube-apiserver's words) when its review has the wrong kind or uid (v1), no response, a result
//   other than Success (its message is the error), another number of objects, an object of
//   another group version or kind, or another name, namespace or uid;
// - the converted object keeps the original's metadata, except labels and annotations, which the
//   webhook may change (they are validated as on any write);
// - every failure reads `conversion webhook for <group/version>, Kind=<kind> failed: ...`.
//
// Objects go to the webhook in batches (one review for the events of one commit, or for a page
// of a list), which the ConversionReview allows; when a webhook answers a batch badly, each
// object is sent again on its own, so that one bad object does not fail its neighbours.
import { stringifyJSON } from '../../codec/int64.js';
import { aggregate } from '../../machinery/errors.js';
import { goTypeName } from '../../patch/errors.js';
import { newUUID } from '../../machinery/uuid.js';
import { validateAnnotations, validateLabels } from '../../machinery/validation.js';
import { postWebhook, WebhookCallError, type ServiceResolver } from '../admission/webhook.js';

/** conversion requests have no timeout field: kube-apiserver's webhook client gives them 30 s */
const CONVERSION_TIMEOUT_SECONDS = 30;

/** a conversion that failed; the message is kube-apiserver's */
export class ConversionFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConversionFailedError';
  }
}

export interface ConversionWebhookConfig {
  /** the CRD's spec.conversion.webhook.clientConfig */
  clientConfig: unknown;
  /** the CRD's spec.conversion.webhook.conversionReviewVersions */
  conversionReviewVersions: unknown;
}

function isObject(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Go's GroupVersionKind.String() of an object */
function gvkOf(o: any): string {
  return `${typeof o?.apiVersion === 'string' ? o.apiVersion : ''}, Kind=${typeof o?.kind === 'string' ? o.kind : ''}`;
}

/** Go's %T of a JSON value as decoded into interface{} */
function goType(v: unknown): string {
  return goTypeName(v) ?? '<nil>';
}

/**
 * The original's metadata with the converted object's labels and annotations (kube-apiserver's
 * restoreObjectMeta); throws the error kube-apiserver words.
 */
function restoreObjectMeta(original: any, converted: any): void {
  const response = converted.metadata;
  if (response === undefined) throw new Error('missing metadata in converted object');
  if (!isObject(response)) throw new Error(`invalid metadata of type ${goType(response)} in converted object`);
  const meta: Record<string, unknown> = isObject(original.metadata) ? structuredClone(original.metadata) : {};
  for (const fld of ['labels', 'annotations'] as const) {
    const got = response[fld];
    if (got === undefined || got === null) {
      delete meta[fld];
      continue;
    }
    if (!isObject(got)) throw new Error(`invalid metadata.${fld} of type ${goType(got)} in converted object`);
    const had = meta[fld];
    if (had !== undefined && had !== null && !isObject(had)) throw new Error(`invalid metadata.${fld} of type ${goType(had)} in original object`);
    const before = (had ?? {}) as Record<string, unknown>;
    let changed = Object.keys(before).length !== Object.keys(got).length;
    for (const [k, v] of Object.entries(got)) {
      if (typeof v !== 'string') throw new Error(`metadata.${fld}[${k}] must be a string, but is ${goType(v)} in converted object`);
      if (before[k] !== v) changed = true;
    }
    if (changed) {
      // (kube-apiserver names the annotations' path metadata.annotation)
      const errs = fld === 'labels' ? validateLabels(got, 'metadata.labels') : validateAnnotations(got, 'metadata.annotation');
      if (errs.length > 0) throw new Error(aggregate(errs.map((e) => e.toString())));
    }
    meta[fld] = got;
  }
  converted.metadata = meta;
}

/** the review version to send: the first of the CRD's list that kube-apiserver speaks */
function reviewVersion(versions: unknown): 'v1' | 'v1beta1' | undefined {
  if (!Array.isArray(versions)) return undefined;
  for (const v of versions) if (v === 'v1' || v === 'v1beta1') return v;
  return undefined;
}

export class WebhookConverter {
  constructor(
    private readonly config: ConversionWebhookConfig,
    private readonly resolver: ServiceResolver,
  ) {}

  /**
   * Each object in `desired` (an apiVersion): the object itself when it is in that version
   * already, else the webhook's conversion of it, or the ConversionFailedError that says why not.
   * The objects given are not changed.
   */
  async convert(objs: any[], desired: string): Promise<(any | ConversionFailedError)[]> {
    const out: (any | ConversionFailedError)[] = objs.slice();
    const todo: number[] = [];
    for (let i = 0; i < objs.length; i++) if (objs[i]?.apiVersion !== desired) todo.push(i);
    if (todo.length === 0) return out;
    const batch = await this.review(todo.map((i) => objs[i]), desired);
    if (batch.every((r) => !(r instanceof ConversionFailedError)) || todo.length === 1 || batch.callFailed) {
      todo.forEach((i, j) => (out[i] = batch[j]));
      return out;
    }
    // an answer refused for the batch: each object on its own
    for (const i of todo) out[i] = (await this.review([objs[i]], desired))[0];
    return out;
  }

  /** one ConversionReview; every result fails alike when the call or the answer as a whole fails */
  private async review(objs: any[], desired: string): Promise<(any | ConversionFailedError)[] & { callFailed?: boolean }> {
    const prefix = `conversion webhook for ${gvkOf(objs[0])}`;
    const failAll = (message: string, callFailed = false) => {
      const e = new ConversionFailedError(message);
      const r: (any | ConversionFailedError)[] & { callFailed?: boolean } = objs.map(() => e);
      r.callFailed = callFailed;
      return r;
    };
    const version = reviewVersion(this.config.conversionReviewVersions);
    if (!version) return failAll('no supported conversion review versions', true);
    const uid = newUUID();
    const review = {
      kind: 'ConversionReview',
      apiVersion: `apiextensions.k8s.io/${version}`,
      request: { uid, desiredAPIVersion: desired, objects: objs },
      response: { uid: '', convertedObjects: null, result: { metadata: {} } },
    };
    let answer: any;
    try {
      answer = await postWebhook({ clientConfig: this.config.clientConfig, timeoutSeconds: CONVERSION_TIMEOUT_SECONDS, timeoutInURL: false, userAgent: 'kube-apiserver-admission' }, stringifyJSON(review), this.resolver);
    } catch (e) {
      if (e instanceof WebhookCallError) return failAll(`${prefix} failed: ${e.message}`, true);
      throw e;
    }
    const response = isObject(answer) ? answer.response : undefined;
    if (version === 'v1' && (answer?.apiVersion !== 'apiextensions.k8s.io/v1' || answer?.kind !== 'ConversionReview')) {
      return failAll(`${prefix} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${gvkOf(answer)}`);
    }
    if (!isObject(response)) return failAll(`${prefix} failed: no response provided`);
    if (version === 'v1' && response.uid !== uid) return failAll(`${prefix} failed: expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(String(response.uid ?? ''))}`);
    const result = isObject(response.result) ? response.result : {};
    if (result.status !== 'Success') {
      const message = typeof result.message === 'string' && result.message ? result.message : `response.result.status was '${typeof result.status === 'string' ? result.status : ''}', not 'Success'`;
      return failAll(`${prefix} failed: ${message}`);
    }
    const converted: unknown[] = Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
    if (converted.length !== objs.length) return failAll(`${prefix} returned ${converted.length} objects, expected ${objs.length}`);
    return objs.map((original, i) => {
      const c = converted[i];
      const at = `conversion webhook for ${gvkOf(original)}`;
      if (!isObject(c)) return new ConversionFailedError(`${at} returned invalid object at index ${i}: Object 'Kind' is missing in '${stringifyJSON(c ?? null)}'`);
      if (c.apiVersion !== desired) return new ConversionFailedError(`${at} returned invalid object at index ${i}: invalid groupVersion (expected ${desired}, received ${typeof c.apiVersion === 'string' ? c.apiVersion : ''})`);
      if (c.kind !== original.kind) return new ConversionFailedError(`${at} returned invalid object at index ${i}: invalid kind (expected ${original.kind}, received ${typeof c.kind === 'string' ? c.kind : ''})`);
      const om = isObject(original.metadata) ? original.metadata : {};
      const cm = isObject(c.metadata) ? c.metadata : {};
      for (const [f, label] of [
        ['name', 'name'],
        ['namespace', 'namespace'],
        ['uid', 'UID'],
      ] as const) {
        const a = om[f] ?? '';
        const b = cm[f] ?? '';
        if (a !== b) return new ConversionFailedError(`${at} returned invalid object: must have the same ${label}: ${a} != ${b}`);
      }
      try {
        restoreObjectMeta(original, c);
      } catch (e) {
        return new ConversionFailedError(`${at} returned invalid metadata: ${(e as Error).message}`);
      }
      return c;
    });
  }
}
