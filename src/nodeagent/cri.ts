// The node agent's client of the Container Runtime Interface (CRI v1) of a container runtime
// (containerd), over gRPC on a unix socket.
//
// Design: the message declarations are data, not generated code: cri/runtime.v1.json (written by
// scripts/gen-cri.mjs) is loaded into a protobufjs Root, with field names camel-cased on load,
// and every call is a plain grpc-js unary request whose (de)serializers are that Root's
// encode/decode. Responses are decoded with defaults, so scalars, lists and maps are always
// present, and message fields the runtime left unset are absent (not null). Each call has a
// deadline (the runtime request timeout, as the kubelet's --runtime-request-timeout), except
// PullImage (none unless asked) and ExecSync/StopContainer (the request timeout on top of their
// own). gRPC failures become CRIError, whose message reads as Go's grpc prints a status
// (`rpc error: code = NotFound desc = ...`), since pod statuses carry these messages.

import { readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type {
  AttachRequest, AuthConfig, Container, ContainerConfig, ContainerFilter, ContainerStats, ContainerStatsFilter,
  ContainerStatusResponse, ExecRequest, Image, ImageFilter, ImageFsInfoResponse, ImageServiceMethods, ImageSpec,
  PodSandbox, PodSandboxConfig, PodSandboxFilter, PodSandboxStatusResponse, PortForwardRequest,
  RuntimeServiceMethods, StatusResponse, VersionResponse,
} from './cri/types.js';

export type * from './cri/types.js';

/** the CRI API version the client speaks, sent in VersionRequest (the kubelet sends the same) */
const KUBE_RUNTIME_API_VERSION = '0.1.0';
const DEFAULT_TIMEOUT_MS = 2 * 60_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** gRPC's message size limit both ways, as the kubelet sets it */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface CRIOptions {
  /** the runtime service's socket: unix:///path, unix:/path or /path */
  endpoint: string;
  /** the image service's socket when it is not the runtime's */
  imageEndpoint?: string;
  /** the deadline of each call (the kubelet's --runtime-request-timeout), default 2 minutes;
   * also how long connect() waits for the runtime, default 10 s */
  timeoutMs?: number;
  /** how long connect() waits for the runtime, overriding timeoutMs */
  connectTimeoutMs?: number;
}

// ---------------------------------------------------------------------------------------------
// Errors

/** the names of gRPC status codes, as Go's grpc (codes.Code.String) spells them */
const CODE_NAMES = [
  'OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists',
  'PermissionDenied', 'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange',
  'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated',
];

export function grpcCodeName(code: number): string {
  return CODE_NAMES[code] ?? `Code(${code})`;
}

/** a failed CRI call: the gRPC status the runtime (or the channel) returned */
export class CRIError extends Error {
  override readonly name = 'CRIError';
  /** the gRPC status code */
  readonly code: number;
  /** its name, e.g. 'NotFound', 'Unimplemented', 'DeadlineExceeded' */
  readonly codeName: string;
  /** the call, e.g. 'ContainerStatus' */
  readonly method: string;
  /** the status message from the runtime */
  readonly details: string;
  constructor(method: string, code: number, details: string) {
    super(`rpc error: code = ${grpcCodeName(code)} desc = ${details}`);
    this.code = code;
    this.codeName = grpcCodeName(code);
    this.method = method;
    this.details = details;
  }
}

/** whether e is the runtime saying that the sandbox, container or image does not exist */
export function isCRINotFound(e: unknown): boolean {
  return e instanceof CRIError && e.code === grpc.status.NOT_FOUND;
}

/** whether e is the runtime saying that it does not implement the call */
export function isCRIUnimplemented(e: unknown): boolean {
  return e instanceof CRIError && e.code === grpc.status.UNIMPLEMENTED;
}

// ---------------------------------------------------------------------------------------------
// Endpoints

/** the socket path of a --container-runtime-endpoint value; only unix sockets are supported */
export function parseCRIEndpoint(endpoint: string): string {
  const e = endpoint.trim();
  let path: string;
  if (e.startsWith('unix://')) path = e.slice('unix://'.length);
  else if (e.startsWith('unix:')) path = e.slice('unix:'.length);
  else if (e.startsWith('/')) path = e;
  else {
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(e)?.[1];
    throw new Error(
      scheme
        ? `container runtime endpoint ${JSON.stringify(endpoint)}: the ${scheme} scheme is not supported, only unix sockets (unix:///path/to/socket)`
        : `container runtime endpoint ${JSON.stringify(endpoint)}: expected unix:///path/to/socket or an absolute path`,
    );
  }
  if (!path.startsWith('/')) throw new Error(`container runtime endpoint ${JSON.stringify(endpoint)}: the socket path must be absolute (unix:///path/to/socket)`);
  return path;
}

// ---------------------------------------------------------------------------------------------
// Messages

type Desc = { nested?: Record<string, Desc>; fields?: Record<string, unknown>; oneofs?: Record<string, { oneof: string[] }>; [k: string]: unknown };

/** the descriptor with its fields renamed as protobufjs names them when it parses without keepCase */
function camelCased(d: Desc): Desc {
  const out: Desc = { ...d };
  if (d.fields) out.fields = Object.fromEntries(Object.entries(d.fields).map(([k, v]) => [protobuf.util.camelCase(k), v]));
  if (d.oneofs) out.oneofs = Object.fromEntries(Object.entries(d.oneofs).map(([k, v]) => [protobuf.util.camelCase(k), { ...v, oneof: v.oneof.map((f) => protobuf.util.camelCase(f)) }]));
  if (d.nested) out.nested = Object.fromEntries(Object.entries(d.nested).map(([k, v]) => [k, camelCased(v)]));
  return out;
}

let root: protobuf.Root | undefined;
function criRoot(): protobuf.Root {
  if (!root) {
    const json = JSON.parse(readFileSync(new URL('./cri/runtime.v1.json', import.meta.url), 'utf8')) as Desc;
    root = protobuf.Root.fromJSON(camelCased(json) as protobuf.INamespace);
    root.resolveAll();
  }
  return root;
}

const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, enums: String, bytes: Buffer, defaults: true, arrays: true, objects: true };

/** drops the nulls toObject gives unset message fields, so that they read as absent */
function dropNulls(v: unknown): void {
  if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) return;
  if (Array.isArray(v)) {
    for (const x of v) dropNulls(x);
    return;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (o[k] === null) delete o[k];
    else dropNulls(o[k]);
  }
}

interface Codec {
  path: string;
  serialize(v: object): Buffer;
  deserialize(b: Buffer): object;
}

const codecs = new Map<string, Codec>();
function codec(service: string, method: string): Codec {
  const key = `${service}/${method}`;
  let c = codecs.get(key);
  if (!c) {
    const m = criRoot().lookupService(`runtime.v1.${service}`).methods[method];
    if (!m) throw new Error(`CRI: no method ${key}`);
    if (m.requestStream || m.responseStream) throw new Error(`CRI: ${key} is a streaming call`);
    m.resolve();
    const req = m.resolvedRequestType!;
    const res = m.resolvedResponseType!;
    c = {
      path: `/runtime.v1.${service}/${method}`,
      serialize: (v) => {
        const u = req.encode(req.fromObject(v as Record<string, unknown>)).finish();
        return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
      },
      deserialize: (b) => {
        const o = res.toObject(res.decode(b), TO_OBJECT);
        dropNulls(o);
        return o;
      },
    };
    codecs.set(key, c);
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// The client

type Unary<S> = { [K in keyof S]: S[K] extends { responseStream: true } ? never : K }[keyof S] & string;
type Req<S, M extends keyof S> = S[M] extends { request: infer R } ? R : never;
type Res<S, M extends keyof S> = S[M] extends { response: infer R } ? R : never;

/** deadline in ms: a number, or null for none */
type Deadline = number | null;

function channelOptions(): grpc.ClientOptions {
  return {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  };
}

/** connects to the socket once, so that a missing socket or a dead runtime fails at once with the
 * system's reason rather than after the channel's retries */
function probeSocket(path: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = netConnect({ path });
    const t = setTimeout(() => {
      s.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    s.once('connect', () => {
      clearTimeout(t);
      s.destroy();
      resolve();
    });
    s.once('error', (e) => {
      clearTimeout(t);
      s.destroy();
      reject(e);
    });
  });
}

function waitForReady(client: grpc.Client, deadline: number): Promise<void> {
  return new Promise((resolve, reject) => client.waitForReady(deadline, (e) => (e ? reject(e) : resolve())));
}

export class CRIClient {
  readonly endpoint: string;
  readonly imageEndpoint: string;
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  readonly runtimeApiVersion: string;
  private readonly timeoutMs: number;
  private readonly runtime: grpc.Client;
  private readonly images: grpc.Client;
  private closed = false;

  private constructor(o: CRIOptions, runtime: grpc.Client, images: grpc.Client, v: VersionResponse) {
    this.endpoint = o.endpoint;
    this.imageEndpoint = o.imageEndpoint ?? o.endpoint;
    this.timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.runtime = runtime;
    this.images = images;
    this.runtimeName = v.runtimeName ?? '';
    this.runtimeVersion = v.runtimeVersion ?? '';
    this.runtimeApiVersion = v.runtimeApiVersion ?? '';
  }

  /** connects to the runtime (and image) service, waits until the channel is ready and asks
   * the runtime's Version; fails with an error naming the endpoint when it cannot */
  static async connect(o: CRIOptions): Promise<CRIClient> {
    const connectMs = o.connectTimeoutMs ?? o.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const start = Date.now();
    const open = async (endpoint: string, what: string): Promise<grpc.Client> => {
      const fail = (why: string) => new Error(`cannot connect to the container ${what} at ${endpoint}: ${why}`);
      const path = parseCRIEndpoint(endpoint);
      try {
        await probeSocket(path, Math.max(1, connectMs - (Date.now() - start)));
      } catch (e) {
        throw fail((e as Error).message);
      }
      const client = new grpc.Client(`unix://${path}`, grpc.credentials.createInsecure(), channelOptions());
      try {
        await waitForReady(client, start + connectMs);
      } catch (e) {
        client.close();
        throw fail(`the channel was not ready within ${connectMs} ms (${(e as Error).message})`);
      }
      return client;
    };
    const runtime = await open(o.endpoint, 'runtime');
    let images = runtime;
    if (o.imageEndpoint && parseCRIEndpoint(o.imageEndpoint) !== parseCRIEndpoint(o.endpoint)) {
      try {
        images = await open(o.imageEndpoint, 'image service');
      } catch (e) {
        runtime.close();
        throw e;
      }
    }
    const closeAll = () => {
      runtime.close();
      if (images !== runtime) images.close();
    };
    let v: VersionResponse;
    try {
      v = (await unary(runtime, 'RuntimeService', 'Version', { version: KUBE_RUNTIME_API_VERSION }, Date.now() + Math.max(connectMs, 1000))) as VersionResponse;
    } catch (e) {
      closeAll();
      throw new Error(`cannot connect to the container runtime at ${o.endpoint}: Version failed: ${(e as Error).message}`);
    }
    return new CRIClient(o, runtime, images, v);
  }

  /** any unary call of the runtime service; deadline in ms from now (default: the request
   * timeout; null: none) */
  callRuntime<M extends Unary<RuntimeServiceMethods>>(method: M, req: Req<RuntimeServiceMethods, M>, timeoutMs?: Deadline): Promise<Res<RuntimeServiceMethods, M>> {
    return this.call(this.runtime, 'RuntimeService', method, req as object, timeoutMs) as Promise<Res<RuntimeServiceMethods, M>>;
  }

  /** any unary call of the image service */
  callImage<M extends Unary<ImageServiceMethods>>(method: M, req: Req<ImageServiceMethods, M>, timeoutMs?: Deadline): Promise<Res<ImageServiceMethods, M>> {
    return this.call(this.images, 'ImageService', method, req as object, timeoutMs) as Promise<Res<ImageServiceMethods, M>>;
  }

  private call(client: grpc.Client, service: string, method: string, req: object, timeoutMs: Deadline | undefined): Promise<object> {
    if (this.closed) return Promise.reject(new CRIError(method, grpc.status.CANCELLED, 'grpc: the client connection is closing'));
    const ms = timeoutMs === undefined ? this.timeoutMs : timeoutMs;
    return unary(client, service, method, req, ms === null ? null : Date.now() + ms);
  }

  // --- runtime service ---

  version(): Promise<VersionResponse> {
    return this.callRuntime('Version', { version: KUBE_RUNTIME_API_VERSION });
  }

  status(verbose = false): Promise<StatusResponse> {
    return this.callRuntime('Status', { verbose });
  }

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string> {
    return (await this.callRuntime('RunPodSandbox', { config, runtimeHandler: runtimeHandler ?? '' })).podSandboxId ?? '';
  }

  async stopPodSandbox(id: string): Promise<void> {
    await this.callRuntime('StopPodSandbox', { podSandboxId: id });
  }

  async removePodSandbox(id: string): Promise<void> {
    await this.callRuntime('RemovePodSandbox', { podSandboxId: id });
  }

  podSandboxStatus(id: string, verbose = false): Promise<PodSandboxStatusResponse> {
    return this.callRuntime('PodSandboxStatus', { podSandboxId: id, verbose });
  }

  async listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    return (await this.callRuntime('ListPodSandbox', { filter })).items ?? [];
  }

  async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    return (await this.callRuntime('CreateContainer', { podSandboxId, config, sandboxConfig })).containerId ?? '';
  }

  async startContainer(id: string): Promise<void> {
    await this.callRuntime('StartContainer', { containerId: id });
  }

  /** stops the container, killing it after timeoutSeconds; the call's deadline is the request
   * timeout on top of that grace period, as the kubelet's */
  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    await this.callRuntime('StopContainer', { containerId: id, timeout: timeoutSeconds }, this.timeoutMs + Math.max(0, timeoutSeconds) * 1000);
  }

  async removeContainer(id: string): Promise<void> {
    await this.callRuntime('RemoveContainer', { containerId: id });
  }

  async listContainers(filter?: ContainerFilter): Promise<Container[]> {
    return (await this.callRuntime('ListContainers', { filter })).containers ?? [];
  }

  containerStatus(id: string, verbose = false): Promise<ContainerStatusResponse> {
    return this.callRuntime('ContainerStatus', { containerId: id, verbose });
  }

  /** runs cmd in the container; timeoutSeconds 0 means no timeout (then the call has no
   * deadline), otherwise the call's deadline is the request timeout on top of it */
  async execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }> {
    const deadline = timeoutSeconds > 0 ? this.timeoutMs + timeoutSeconds * 1000 : null;
    const r = await this.callRuntime('ExecSync', { containerId: id, cmd, timeout: timeoutSeconds }, deadline);
    return { stdout: r.stdout ?? Buffer.alloc(0), stderr: r.stderr ?? Buffer.alloc(0), exitCode: r.exitCode ?? 0 };
  }

  /** the URL of the runtime's streaming server for this exec */
  async exec(req: ExecRequest): Promise<string> {
    return (await this.callRuntime('Exec', req)).url ?? '';
  }

  async attach(req: AttachRequest): Promise<string> {
    return (await this.callRuntime('Attach', req)).url ?? '';
  }

  async portForward(req: PortForwardRequest): Promise<string> {
    return (await this.callRuntime('PortForward', req)).url ?? '';
  }

  async reopenContainerLog(id: string): Promise<void> {
    await this.callRuntime('ReopenContainerLog', { containerId: id });
  }

  async listContainerStats(filter?: ContainerStatsFilter): Promise<ContainerStats[]> {
    return (await this.callRuntime('ListContainerStats', { filter })).stats ?? [];
  }

  /** the new resources of a running container (an in-place resize) */
  async updateContainerResources(id: string, linux: any): Promise<void> {
    await this.callRuntime('UpdateContainerResources', { containerId: id, linux });
  }

  async updateRuntimeConfig(podCIDR: string): Promise<void> {
    await this.callRuntime('UpdateRuntimeConfig', { runtimeConfig: { networkConfig: { podCidr: podCIDR } } });
  }

  // --- image service ---

  async listImages(filter?: ImageFilter): Promise<Image[]> {
    return (await this.callImage('ListImages', { filter })).images ?? [];
  }

  /** the image, or undefined when the runtime does not have it */
  async imageStatus(image: string | ImageSpec): Promise<Image | undefined> {
    return (await this.callImage('ImageStatus', { image: imageSpec(image), verbose: false })).image;
  }

  /** pulls the image and returns its reference (the runtime's image id); no deadline unless
   * timeoutMs is given */
  async pullImage(image: string | ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig, timeoutMs?: number): Promise<string> {
    return (await this.callImage('PullImage', { image: imageSpec(image), auth, sandboxConfig }, timeoutMs ?? null)).imageRef ?? '';
  }

  async removeImage(image: string | ImageSpec): Promise<void> {
    await this.callImage('RemoveImage', { image: imageSpec(image) });
  }

  imageFsInfo(): Promise<ImageFsInfoResponse> {
    return this.callImage('ImageFsInfo', {});
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.runtime.close();
    if (this.images !== this.runtime) this.images.close();
  }
}

function imageSpec(image: string | ImageSpec): ImageSpec {
  return typeof image === 'string' ? { image } : image;
}

function unary(client: grpc.Client, service: string, method: string, req: object, deadline: number | null): Promise<object> {
  let c: Codec;
  try {
    c = codec(service, method);
  } catch (e) {
    return Promise.reject(e);
  }
  const options: grpc.CallOptions = deadline === null ? {} : { deadline };
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(c.path, c.serialize, c.deserialize, req, new grpc.Metadata(), options, (err, res) => {
      if (err) reject(new CRIError(method, err.code ?? grpc.status.UNKNOWN, err.details ?? err.message));
      else resolve(res ?? {});
    });
  });
}
