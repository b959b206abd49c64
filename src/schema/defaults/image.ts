// The tag of a container image reference, as Kubernetes reads it to default imagePullPolicy:
// the reference is parsed as a normalized Docker reference (docker.io/library/ implied); no tag
// and no digest means "latest"; a reference that does not parse has no tag.

const ALNUM = '[a-z0-9]+';
const SEPARATOR = '(?:[._]|__|[-]+)';
const PATH_COMPONENT = `${ALNUM}(?:${SEPARATOR}${ALNUM})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const HOST = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])`;
const DOMAIN = `${HOST}(?::[0-9]+)?`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
/** a reference's grammar (distribution/reference's ReferenceRegexp, anchored): name, tag, digest */
export const IMAGE_REFERENCE = new RegExp(`^((?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)(?::(${TAG}))?(?:@(${DIGEST}))?$`);
const HEX64 = /^[a-f0-9]{64}$/;
/** a name's longest (NameTotalLengthMax) */
export const IMAGE_NAME_MAX = 255;

export interface ImageRef {
  name: string;
  tag: string;
  digest: string;
}

/** Parses an image reference; undefined when it is not a valid reference. */
export function parseImage(image: string): ImageRef | undefined {
  if (image === '' || HEX64.test(image)) return undefined;
  // the first component is a registry only if it looks like one (has '.' or ':', is localhost,
  // or has upper case letters); otherwise the image is on Docker Hub
  const slash = image.indexOf('/');
  let domain = 'docker.io';
  let remainder = image;
  if (slash >= 0) {
    const first = image.slice(0, slash);
    if (/[.:]/.test(first) || first === 'localhost' || first.toLowerCase() !== first) {
      domain = first;
      remainder = image.slice(slash + 1);
    }
  }
  const colon = remainder.indexOf(':');
  const remote = colon >= 0 ? remainder.slice(0, colon) : remainder;
  if (remote.toLowerCase() !== remote) return undefined;
  const m = IMAGE_REFERENCE.exec(`${domain}/${remainder}`);
  if (!m || m[1]!.length > IMAGE_NAME_MAX) return undefined;
  return { name: m[1]!, tag: m[2] ?? '', digest: m[3] ?? '' };
}

/** The pull policy Kubernetes gives a container (or image volume) without one. */
export function defaultPullPolicy(image: unknown): 'Always' | 'IfNotPresent' {
  const ref = typeof image === 'string' ? parseImage(image) : undefined;
  let tag = ref?.tag ?? '';
  if (ref && tag === '' && ref.digest === '') tag = 'latest';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}
