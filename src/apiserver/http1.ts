// HTTP/1.1 on the secure port, Keelson's own. Node's native parser (llhttp, the one node:http
// uses, exported by `_http_common`) reads each TLS connection in C++; this module turns its
// callbacks into requests and writes the answers, without node:http's IncomingMessage and
// ServerResponse streams. Why not node:http: its request and response objects, their streams
// and its header building cost ~30 µs of JavaScript per request (bench/echoes.ts measures it),
// about a fifth of a durable create's main-thread time, and the main thread bounds the creates
// rate. HTTP/2 connections still go to node:http2 (tls.ts chooses by ALPN).
//
// What the handlers get is the part of node:http's interface Keelson uses, with node's meaning:
// a request with method, url, headers (node's joining rules), headersDistinct, rawHeaders,
// httpVersion, socket, and its body as 'data'/'end' events once something listens or resume()
// is called; a response with statusCode, set/get/removeHeader, writeHead, write (chunked when no
// Content-Length is set), end, flushHeaders, destroy, headersSent, writableEnded,
// writableLength and 'drain', 'finish' and 'close' events. The connection follows HTTP/1.1:
// keep-alive (HTTP/1.0 only when asked), pipelining (requests handled one after another, as Go's
// server does), HEAD, 1xx/204/304
// without bodies, Expect: 100-continue, Go's answers to unparseable requests (400, 431), request
// lines as Go reads them where llhttp is stricter (any token as a method, bytes >= 0x80 in the
// target: see lineRecovery below; a bad escape in the path is 400 as in Go), an idle
// timeout, a header-reading timeout, and a graceful end (idle connections closed, busy ones
// after their answer).
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { STATUS_CODES } from 'node:http';
import type { TLSSocket } from 'node:tls';

interface NativeParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  consume(handle: unknown): void;
  unconsume(): void;
  execute(data: Buffer): number | Error;
  finish(): number | Error | undefined;
  close(): void;
  /** the bytes of the read being parsed (in the kOnExecute callback of a consumed stream) */
  getCurrentBuffer(): Buffer;
  [k: number]: unknown;
}
interface ParserModule {
  HTTPParser: { new (): NativeParser; REQUEST: number; kOnMessageBegin: number; kOnHeaders: number; kOnHeadersComplete: number; kOnBody: number; kOnMessageComplete: number; kOnExecute: number; kLenientNone: number };
  methods: string[];
  _checkIsHttpToken(s: string): boolean;
  _checkInvalidHeaderChar(s: string): boolean;
}
const common = createRequire(import.meta.url)('_http_common') as ParserModule;
const { HTTPParser, methods: METHODS } = common;
const kOnMessageBegin = HTTPParser.kOnMessageBegin | 0;
const kOnHeaders = HTTPParser.kOnHeaders | 0;
const kOnHeadersComplete = HTTPParser.kOnHeadersComplete | 0;
const kOnBody = HTTPParser.kOnBody | 0;
const kOnMessageComplete = HTTPParser.kOnMessageComplete | 0;
const kOnExecute = HTTPParser.kOnExecute | 0;

export interface H1Options {
  /** the most bytes of request line and headers (Go's MaxHeaderBytes) */
  maxHeaderSize: number;
  /** how long a request's headers may take to arrive, ms */
  headersTimeoutMs: number;
  /** how long a connection may sit idle between requests, ms (Go's IdleTimeout) */
  keepAliveTimeoutMs: number;
}

export type H1Handler = (req: H1Request, res: H1Response) => void;

// ---- the Date header, made once a second ----

let dateLine = '';
let dateSecond = -1;
function dateHeader(): string {
  const now = Date.now();
  const s = Math.floor(now / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateLine = `Date: ${new Date(now).toUTCString()}\r\n`;
  }
  return dateLine;
}

// ---- errors with node:http's codes and words ----

function codeError(code: string, message: string, Type: ErrorConstructor | TypeErrorConstructor = Error): Error {
  const e = new Type(message) as Error & { code: string };
  e.code = code;
  return e;
}

/**
 * A header name's lower-case form, remembered for up to `max` distinct names (clients and
 * handlers choose names, so the table is bounded); `check` runs on a name not remembered. The
 * same few names come on every request and answer: a look-up is cheaper than lower-casing (a new
 * string each time, which V8 then looks up in its string table when it is used as a key) and
 * than the check it saves.
 */
function lowerCaseTable(max: number, check?: (name: string) => void): (name: string) => string {
  const table = new Map<string, string>();
  return (name) => {
    const known = table.get(name);
    if (known !== undefined) return known;
    check?.(name);
    const lower = name.toLowerCase();
    if (table.size < max) table.set(name, lower);
    return lower;
  };
}

/** the lower-case form of a header name set on an answer, checked to be an HTTP token (node's error when not) */
const checkedName = lowerCaseTable(512, (name) => {
  if (typeof name !== 'string' || !name || !common._checkIsHttpToken(name)) {
    throw codeError('ERR_INVALID_HTTP_TOKEN', `Header name must be a valid HTTP token ["${name}"]`, TypeError);
  }
});

function checkValue(name: string, value: unknown): void {
  if (value === undefined) throw codeError('ERR_HTTP_INVALID_HEADER_VALUE', `Invalid value "undefined" for header "${name}"`, TypeError);
  // (a number's text has no character to refuse)
  if (typeof value === 'number') return;
  if (Array.isArray(value)) {
    for (const v of value) if (common._checkInvalidHeaderChar(String(v))) throw codeError('ERR_INVALID_CHAR', `Invalid character in header content ["${name}"]`, TypeError);
  } else if (common._checkInvalidHeaderChar(String(value))) {
    throw codeError('ERR_INVALID_CHAR', `Invalid character in header content ["${name}"]`, TypeError);
  }
}

// ---- the request ----

/** node:http's rule for a repeated header: these keep their first value, set-cookie is an array, cookie joins with '; ', the rest with ', ' */
const FIRST_WINS = new Set([
  'age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host', 'if-modified-since',
  'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'referer', 'retry-after',
  'server', 'user-agent',
]);

const EMPTY: Buffer[] = [];

/** a request header name's lower-case form (the parser has checked the name) */
const lowerName = lowerCaseTable(1024);

export class H1Request extends EventEmitter {
  readonly httpVersion: string;
  complete = false;
  /** set when the connection ends before the body did */
  aborted = false;
  private _headers?: Record<string, string | string[]>;
  private _distinct?: Record<string, string[]>;
  /** body chunks not yet given to 'data' listeners */
  private pending: Buffer[] = EMPTY;
  private flowing = false;
  private flushScheduled = false;
  private endEmitted = false;

  constructor(
    readonly socket: TLSSocket,
    readonly method: string,
    public url: string,
    readonly rawHeaders: string[],
    readonly httpVersionMajor: number,
    readonly httpVersionMinor: number,
  ) {
    super();
    this.httpVersion = `${httpVersionMajor}.${httpVersionMinor}`;
  }

  get connection(): TLSSocket {
    return this.socket;
  }

  get headers(): Record<string, string | string[]> {
    if (this._headers) return this._headers;
    const h: Record<string, string | string[]> = {};
    const raw = this.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const k = lowerName(raw[i]!);
      const v = raw[i + 1]!;
      const prev = h[k];
      if (prev === undefined) h[k] = k === 'set-cookie' ? [v] : v;
      else if (k === 'set-cookie') (prev as string[]).push(v);
      else if (FIRST_WINS.has(k)) continue;
      else h[k] = `${prev as string}${k === 'cookie' ? '; ' : ', '}${v}`;
    }
    this._headers = h;
    return h;
  }

  set headers(v: Record<string, string | string[]>) {
    this._headers = v;
  }

  get headersDistinct(): Record<string, string[]> {
    if (this._distinct) return this._distinct;
    const d: Record<string, string[]> = {};
    const raw = this.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) (d[raw[i]!.toLowerCase()] ??= []).push(raw[i + 1]!);
    this._distinct = d;
    return d;
  }

  /**
   * The whole body when it has all arrived and nobody has read any of it: the fast way for a
   * handler that wants it in one piece (readBody). Undefined otherwise: read the events.
   */
  takeBody(): Buffer | undefined {
    if (!this.complete || this.flowing || this.endEmitted) return undefined;
    const p = this.pending;
    this.pending = EMPTY;
    this.flowing = true;
    this.endEmitted = true;
    return p.length === 1 ? p[0]! : Buffer.concat(p);
  }

  /** the body's chunks that have come and have not been read (for the audit's BodyTap) */
  buffered(): readonly Buffer[] {
    return this.flowing ? EMPTY : this.pending;
  }

  override on(ev: string | symbol, fn: (...args: any[]) => void): this {
    super.on(ev, fn);
    if (ev === 'data' && !this.flowing) this.resume();
    return this;
  }

  override addListener(ev: string | symbol, fn: (...args: any[]) => void): this {
    return this.on(ev, fn);
  }

  resume(): this {
    if (this.flowing) return this;
    this.flowing = true;
    this.scheduleFlush();
    return this;
  }

  pause(): this {
    this.flowing = false;
    return this;
  }

  isPaused(): boolean {
    return !this.flowing;
  }

  destroy(err?: Error): this {
    this.socket.destroy(err);
    return this;
  }

  /** a body chunk from the parser (named as Readable's, which the audit's BodyTap wraps) */
  push(b: Buffer): boolean {
    if (this.flowing && !this.flushScheduled) {
      this.emit('data', b);
      return true;
    }
    if (this.pending === EMPTY) this.pending = [];
    this.pending.push(b);
    return true;
  }

  /** the body is complete */
  _end(): void {
    this.complete = true;
    if (this.flowing) this.scheduleFlush();
  }

  /** the connection ended before the body did */
  _abort(): void {
    if (this.complete || this.aborted) return;
    this.aborted = true;
    this.emit('aborted');
    if (this.listenerCount('error')) this.emit('error', codeError('ECONNRESET', 'aborted'));
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    process.nextTick(() => {
      this.flushScheduled = false;
      if (!this.flowing) return;
      const p = this.pending;
      this.pending = EMPTY;
      for (const b of p) this.emit('data', b);
      if (this.complete && !this.endEmitted) {
        this.endEmitted = true;
        this.emit('end');
      }
    });
  }
}

// ---- the response ----

type HeaderValue = string | number | readonly string[];

export class H1Response extends EventEmitter {
  statusCode = 200;
  statusMessage: string | undefined = undefined;
  sendDate = true;
  /** the head, once made (headersSent) */
  private head: string | undefined = undefined;
  /** the headers set, by lower-case name: the name as the handler wrote it, and the value */
  private readonly names = new Map<string, string>();
  private readonly values = new Map<string, HeaderValue>();
  private chunked = false;
  /** no body goes out (HEAD, 1xx, 204, 304) */
  private bodiless = false;
  /** the body runs to the connection's end (HTTP/1.0 without a length) */
  private closeDelimited = false;
  /** the body ends with the connection, without Content-Length or chunks (Go's own error answers) */
  delimitByClose = false;
  keepAlive: boolean;
  private ended = false;
  finished = false;
  private closed = false;
  destroyed = false;
  private waitingDrain = false;

  constructor(
    readonly req: H1Request,
    private readonly conn: H1Connection,
    keepAlive: boolean,
  ) {
    super();
    this.keepAlive = keepAlive;
  }

  get socket(): TLSSocket {
    return this.req.socket;
  }

  get connection(): TLSSocket {
    return this.req.socket;
  }

  get headersSent(): boolean {
    return this.head !== undefined;
  }

  get writableEnded(): boolean {
    return this.ended;
  }

  get writableFinished(): boolean {
    return this.finished;
  }

  get writableLength(): number {
    return this.req.socket.writableLength;
  }

  get writableNeedDrain(): boolean {
    return this.waitingDrain;
  }

  setHeader(name: string, value: HeaderValue): this {
    if (this.head !== undefined) throw codeError('ERR_HTTP_HEADERS_SENT', 'Cannot set headers after they are sent to the client');
    const k = checkedName(name);
    checkValue(name, value);
    this.names.set(k, name);
    this.values.set(k, value);
    return this;
  }

  appendHeader(name: string, value: HeaderValue): this {
    const k = typeof name === 'string' ? name.toLowerCase() : name;
    const prev = this.values.get(k);
    if (prev === undefined) return this.setHeader(name, value);
    const list = [...(Array.isArray(prev) ? prev : [String(prev)]), ...(Array.isArray(value) ? value : [String(value)])];
    return this.setHeader(this.names.get(k)!, list);
  }

  getHeader(name: string): HeaderValue | undefined {
    return this.values.get(name.toLowerCase());
  }

  hasHeader(name: string): boolean {
    return this.values.has(name.toLowerCase());
  }

  getHeaderNames(): string[] {
    return [...this.values.keys()];
  }

  getHeaders(): Record<string, HeaderValue> {
    const o: Record<string, HeaderValue> = Object.create(null);
    for (const [k, v] of this.values) o[k] = v;
    return o;
  }

  removeHeader(name: string): void {
    if (this.head !== undefined) throw codeError('ERR_HTTP_HEADERS_SENT', 'Cannot remove headers after they are sent to the client');
    const k = name.toLowerCase();
    this.names.delete(k);
    this.values.delete(k);
  }

  writeHead(code: number, msgOrHeaders?: string | Record<string, HeaderValue> | readonly string[], headers?: Record<string, HeaderValue> | readonly string[]): this {
    if (this.head !== undefined) throw codeError('ERR_HTTP_HEADERS_SENT', 'Cannot write headers after they are sent to the client');
    if (!Number.isInteger(code) || code < 100 || code > 999) throw codeError('ERR_HTTP_INVALID_STATUS_CODE', `Invalid status code: ${code}`, RangeError);
    this.statusCode = code;
    let h = headers;
    if (typeof msgOrHeaders === 'string') this.statusMessage = msgOrHeaders;
    else h = msgOrHeaders;
    if (h) {
      if (Array.isArray(h)) {
        for (let i = 0; i + 1 < h.length; i += 2) this.setHeader(h[i]!, h[i + 1]!);
      } else {
        for (const k of Object.keys(h)) {
          const v = (h as Record<string, HeaderValue>)[k];
          if (v !== undefined) this.setHeader(k, v);
        }
      }
    }
    this.makeHead(this.endLength);
    return this;
  }

  /** the whole body's length when end() makes the head (writeHead then sets Content-Length) */
  private endLength: number | undefined = undefined;

  /** the head made by a write, as node's _implicitHeader does: through writeHead, so that hooks on it (warnings, audit) run */
  private implicitHead(endLength: number | undefined): void {
    this.endLength = endLength;
    this.writeHead(this.statusCode);
    this.endLength = undefined;
  }

  flushHeaders(): void {
    if (this.head === undefined) this.implicitHead(undefined);
    if (!this.headOut) this.out(undefined);
  }

  write(chunk: string | Uint8Array, enc?: BufferEncoding | ((e?: Error | null) => void), cb?: (e?: Error | null) => void): boolean {
    if (typeof enc === 'function') {
      cb = enc;
      enc = undefined;
    }
    if (this.ended) {
      const e = codeError('ERR_STREAM_WRITE_AFTER_END', 'write after end');
      process.nextTick(() => {
        cb?.(e);
        if (this.listenerCount('error')) this.emit('error', e);
      });
      return false;
    }
    if (this.head === undefined) this.implicitHead(undefined);
    const b = typeof chunk === 'string' ? Buffer.from(chunk, enc ?? 'utf8') : chunk;
    if (b.byteLength === 0) {
      if (cb) process.nextTick(cb);
      return !this.waitingDrain;
    }
    return this.out(b, cb);
  }

  end(chunk?: string | Uint8Array | (() => void), enc?: BufferEncoding | (() => void), cb?: () => void): this {
    if (typeof chunk === 'function') {
      cb = chunk;
      chunk = undefined;
    } else if (typeof enc === 'function') {
      cb = enc;
      enc = undefined;
    }
    if (this.ended) {
      if (cb) process.nextTick(cb);
      return this;
    }
    const b = chunk === undefined || chunk === null ? undefined : typeof chunk === 'string' ? Buffer.from(chunk, (enc as BufferEncoding | undefined) ?? 'utf8') : chunk;
    if (this.head === undefined) this.implicitHead(b === undefined ? 0 : b.byteLength);
    this.ended = true;
    if (cb) this.once('finish', cb);
    this.out(b, undefined, true);
    return this;
  }

  destroy(err?: Error): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.req.socket.destroy(err);
    return this;
  }

  // ---- inside ----

  /** whether the head has gone to the connection */
  private headOut = false;

  /** builds the head; `endLength` is the whole body's length when end() makes the head */
  private makeHead(endLength: number | undefined): void {
    const code = this.statusCode;
    const req = this.req;
    this.bodiless = req.method === 'HEAD' || code === 204 || code === 304 || (code >= 100 && code < 200);
    const v = this.values;
    const names = this.names;
    if (endLength !== undefined && !this.delimitByClose && !v.has('content-length') && !v.has('transfer-encoding') && !(code === 204 || code === 304 || (code >= 100 && code < 200))) {
      names.set('content-length', 'Content-Length');
      v.set('content-length', endLength);
    }
    const http10 = req.httpVersionMajor === 1 && req.httpVersionMinor === 0;
    // HTTP/1.0 has no chunked framing: a stream the handler meant to chunk runs to the connection's end (as Go's server does)
    if (http10 && v.has('transfer-encoding') && !v.has('content-length')) {
      v.delete('transfer-encoding');
      names.delete('transfer-encoding');
      if (!this.bodiless) {
        v.delete('connection');
        names.delete('connection');
      }
    }
    const te = v.get('transfer-encoding');
    if (te !== undefined) {
      this.chunked = !http10 && /(?:^|,)\s*chunked\s*$/i.test(String(te));
    } else if (!v.has('content-length') && !this.bodiless) {
      if (http10 || this.delimitByClose) this.closeDelimited = true;
      else {
        this.chunked = true;
        names.set('transfer-encoding', 'Transfer-Encoding');
        v.set('transfer-encoding', 'chunked');
      }
    }
    const conn = v.get('connection');
    if (conn !== undefined && /(?:^|,)\s*close\s*(?:,|$)/i.test(String(conn))) this.keepAlive = false;
    if (this.closeDelimited || this.conn.closing) this.keepAlive = false;
    let s = `HTTP/1.1 ${code} ${this.statusMessage ?? STATUS_CODES[code] ?? 'unknown'}\r\n`;
    for (const [k, val] of v) {
      const n = names.get(k)!;
      if (typeof val === 'object') for (const x of val) s += `${n}: ${x}\r\n`;
      else s += `${n}: ${val}\r\n`;
    }
    if (this.sendDate && !v.has('date')) s += dateHeader();
    if (conn === undefined) {
      if (!this.keepAlive) s += 'Connection: close\r\n';
      else if (http10) s += 'Connection: keep-alive\r\n';
    }
    this.head = s + '\r\n';
  }

  /** sends the head (first time) and a piece of the body; `last` ends the message */
  private out(b: Uint8Array | undefined, cb?: (e?: Error | null) => void, last = false): boolean {
    const parts: (string | Uint8Array)[] = [];
    if (!this.headOut) {
      this.headOut = true;
      parts.push(this.head!);
    }
    if (b !== undefined && b.byteLength > 0 && !this.bodiless) {
      if (this.chunked) {
        parts.push(`${b.byteLength.toString(16)}\r\n`, b, last ? '\r\n0\r\n\r\n' : '\r\n');
      } else parts.push(b);
    } else if (last && this.chunked && !this.bodiless) parts.push('0\r\n\r\n');
    const sock = this.req.socket;
    let ok = true;
    if (parts.length === 1) ok = writePart(sock, parts[0]!, last ? () => this.done() : cb);
    else if (parts.length > 1 && (b === undefined || b.byteLength <= JOIN_MAX)) {
      // one buffer, one write: a small copy costs less than the socket's corked writev (its
      // queue, the array of chunks, the string parts encoded one by one in C++)
      ok = sock.write(joined(parts), last ? () => this.done() : cb);
    } else if (parts.length > 1) {
      sock.cork();
      for (let i = 0; i < parts.length - 1; i++) writePart(sock, parts[i]!, undefined);
      ok = writePart(sock, parts[parts.length - 1]!, last ? () => this.done() : cb);
      sock.uncork();
    } else if (last) process.nextTick(() => this.done());
    else if (cb) process.nextTick(cb);
    if (last && cb) this.once('finish', cb);
    if (!ok && !last) this.awaitDrain();
    return ok;
  }

  /** 'drain' is emitted once the socket has drained (one listener on it for all waiting writes) */
  private awaitDrain(): void {
    if (this.waitingDrain) return;
    this.waitingDrain = true;
    this.req.socket.once('drain', () => {
      this.waitingDrain = false;
      if (!this.closed) this.emit('drain');
    });
  }

  /** whether writePreframed takes pieces: a chunked body whose head is out, not ended */
  get preframed(): boolean {
    return this.chunked && this.headOut && !this.ended && !this.bodiless;
  }

  /**
   * Writes a piece of the body already in chunk framing (chunkFramed), as it is: a watch event
   * goes to every watcher of it as the same bytes, framed once, where write would copy the
   * piece into a new buffer with its framing for each watcher. Only while `preframed`.
   */
  writePreframed(framed: Uint8Array): boolean {
    const ok = this.req.socket.write(framed);
    if (!ok) this.awaitDrain();
    return ok;
  }

  /** the last byte went to the connection */
  private done(): void {
    if (this.finished) return;
    this.finished = true;
    this.emit('finish');
    this.conn.responseDone(this);
    this._close();
  }

  /**
   * Go's Hijack: the connection's socket, taken out of this layer for a protocol of its own (an
   * upgrade's stream). The layer stops reading and answering on it and forgets it (a graceful end
   * does not wait for it, as Go's server does not for a hijacked connection); the response counts
   * as answered with 101 from here. Bytes the client sent after this request's head are not given
   * back (an upgrading client sends nothing before the answer). Undefined when the response is not
   * the one its connection is answering, or the connection is gone.
   */
  detach(): TLSSocket | undefined {
    if (this.headOut || this.closed) return undefined;
    const sock = this.conn.detach(this);
    if (!sock) return undefined;
    this.statusCode = 101;
    this.finished = true;
    this._close();
    return sock;
  }

  /** the response is over: finished, or its connection gone */
  _close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.finished) this.destroyed = true;
    this.emit('close');
    this.req.emit('close');
  }
}

/** a body piece in HTTP/1.1 chunk framing: its size in hex, CRLF, the bytes, CRLF */
export function chunkFramed(b: Uint8Array): Buffer {
  return joined([`${b.byteLength.toString(16)}\r\n`, b, '\r\n']);
}

/** the longest body joined with its head (or chunk framing) into one write; longer ones go as they are */
const JOIN_MAX = 64 * 1024;

/** the parts in one buffer: strings as latin1, as writePart writes them */
function joined(parts: (string | Uint8Array)[]): Buffer {
  let n = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    n += typeof p === 'string' ? p.length : p.byteLength;
  }
  const buf = Buffer.allocUnsafe(n);
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (typeof p === 'string') at += buf.write(p, at, 'latin1');
    else {
      buf.set(p, at);
      at += p.byteLength;
    }
  }
  return buf;
}

function writePart(sock: TLSSocket, p: string | Uint8Array, cb: ((e?: Error | null) => void) | undefined): boolean {
  return typeof p === 'string' ? sock.write(p, 'latin1', cb) : sock.write(p, cb);
}

// ---- the connection ----

const enum Phase {
  Idle,
  Headers,
  Busy,
}

/**
 * Pipelined requests read ahead of their answers, at most: past it the connection stops reading
 * (the client's further requests wait in its socket, as with Go's server, which reads the next
 * request only after answering the one before). Reading resumes once half of them are answered.
 * Answers are not written ahead of the client either: while the socket's buffer is over its
 * high-water mark, the next queued request waits for 'drain'. A client that pipelines without
 * reading the answers thus holds a bounded amount of the server's memory.
 */
const MAX_PIPELINED = 16;

class H1Connection {
  private readonly parser: NativeParser;
  /** responses in request order; the first is the one writing */
  private readonly queue: H1Response[] = [];
  private current: H1Request | undefined;
  /** the next request to be handled, whose headers have come (handled at the end of its body or of the read) */
  private waiting: H1Response | undefined = undefined;
  phase = Phase.Idle;
  /** the sweep tick when the phase began */
  since = 0;
  closing = false;
  private gone = false;
  /** the client ended its side */
  private clientEnded = false;
  /** reading is paused: too many pipelined requests wait (MAX_PIPELINED) */
  private readPaused = false;
  /** the next queued request waits for the socket's 'drain' */
  private drainWait = false;
  /** a request's header lines and URL that came in pieces (many headers, or split across reads) */
  private rawPart: string[] = [];
  private urlPart = '';
  // What the request-line recovery needs (lineRecovery: afterRead, readFailed, tryHeld): llhttp knows a fixed list of methods and
  // refuses bytes >= 0x80 in a target, where Go's server takes any token and any such byte.
  /** the parser is inside a message's request line or headers, or inside a message */
  private inHead = false;
  private inMessage = false;
  /** the reads since the last message boundary, kept while a read ends inside a request's head (rare: a split head) */
  private headReads: Buffer[] = EMPTY;
  /** whether headReads begins at a message boundary (false after a read that ended inside a body) */
  private headKnown = true;
  /** messages completed within headReads and the read after them */
  private completedInHead = 0;
  /** a request line llhttp refused, gathered until its end comes (the parser keeps its error meanwhile, so each read comes to afterRead as an error) */
  private held: Buffer | undefined = undefined;
  /** the method of the request whose line was rewritten for llhttp */
  private methodOverride: string | undefined = undefined;
  /** the connection's listeners on its socket (removed by detach) */
  private readonly listeners: [string, (...args: any[]) => void][];

  constructor(
    readonly socket: TLSSocket,
    private readonly server: H1Server,
  ) {
    const p = new HTTPParser();
    this.parser = p;
    p.initialize(HTTPParser.REQUEST, {}, server.opts.maxHeaderSize, HTTPParser.kLenientNone);
    p[kOnMessageBegin] = () => {
      this.phase = Phase.Headers;
      this.since = this.server.tick;
      this.inHead = true;
      this.inMessage = true;
    };
    // headers that came in pieces (many headers, or split across reads)
    p[kOnHeaders] = (headers: string[], u: string) => {
      for (let i = 0; i < headers.length; i++) this.rawPart.push(headers[i]!);
      this.urlPart += u;
    };
    p[kOnHeadersComplete] = (major: number, minor: number, headers: string[] | undefined, method: number, u: string | undefined, _status: unknown, _msg: unknown, upgrade: boolean, keepAlive: boolean) => {
      if (headers === undefined) {
        headers = this.rawPart;
        u = this.urlPart;
      }
      this.rawPart = [];
      this.urlPart = '';
      this.phase = Phase.Busy;
      this.inHead = false;
      const m = this.methodOverride ?? METHODS[method] ?? 'GET';
      this.methodOverride = undefined;
      return this.onRequest(m, u ?? '', headers, major, minor, keepAlive && !upgrade, upgrade);
    };
    p[kOnBody] = (b: Buffer) => {
      this.current?.push(b);
    };
    p[kOnMessageComplete] = () => {
      this.inMessage = false;
      this.completedInHead++;
      const req = this.current;
      this.current = undefined;
      req?._end();
      this.dispatchWaiting();
    };
    // the end of the bytes of one read
    p[kOnExecute] = (ret: number | Error) => this.afterRead(ret, undefined);
    const s = socket as unknown as { _handle: { _consumed?: boolean; isStreamBase?: boolean } | null };
    if (s._handle?.isStreamBase && !s._handle._consumed) {
      s._handle._consumed = true;
      p.consume(s._handle);
    }
    // bytes that reach JavaScript anyway (a handle that cannot be consumed, or read before consume)
    this.listeners = [
      ['data', (d: Buffer) => this.afterRead(this.parser.execute(d), d)],
      ['end', () => this.onEnd()],
      ['error', () => socket.destroy()],
      ['close', () => this.onClose()],
    ];
    for (const [event, fn] of this.listeners) socket.on(event, fn);
    this.since = server.tick;
  }

  /** the end of one read's bytes (`read`, or the parser's current buffer when it reads the socket itself) */
  private afterRead(ret: number | Error, read: Buffer | undefined): void {
    if (ret instanceof Error) {
      this.readFailed(ret, read ?? this.parser.getCurrentBuffer());
      return;
    }
    if (this.inHead) {
      // a head split across reads: its bytes are kept (bounded by the header limit) in case its request line needs recovery
      if (this.headKnown) {
        const b = read ?? this.parser.getCurrentBuffer();
        let n = b.length;
        for (const x of this.headReads) n += x.length;
        if (n > this.server.opts.maxHeaderSize + 4096) {
          this.headKnown = false;
          this.headReads = EMPTY;
        } else (this.headReads === EMPTY ? (this.headReads = []) : this.headReads).push(b);
      }
    } else {
      if (this.headReads !== EMPTY) this.headReads = EMPTY;
      this.completedInHead = 0;
      this.headKnown = !this.inMessage;
    }
    this.dispatchWaiting();
  }

  private readFailed(e: Error, read: Buffer): void {
    if (this.gone) return;
    if (this.held !== undefined) {
      // (the parser is still in the error that began the held line)
      this.held = Buffer.concat([this.held, read]);
      this.tryHeld();
      return;
    }
    const code = (e as { code?: string }).code ?? '';
    if (this.headKnown && RECOVERABLE.has(code)) {
      const all = this.headReads.length ? Buffer.concat([...this.headReads, read]) : read;
      this.headReads = EMPTY;
      const start = messageStart(all, this.completedInHead, this.server.opts.maxHeaderSize);
      if (start >= 0) {
        this.held = all.subarray(start);
        this.tryHeld();
        return;
      }
    }
    this.parseError(e);
  }

  /**
   * A request line llhttp refused, read as Go's server reads it: refused (400) when Go refuses
   * it too; otherwise given to a fresh parser with the method replaced by one llhttp knows (the
   * request keeps its own) and the target's bytes >= 0x80 percent-encoded (which the path and
   * query decode to the same bytes, as Go's URL does). Waits for more bytes while the line is
   * incomplete.
   */
  private tryHeld(): void {
    const h = this.held!;
    let from = 0;
    while (from < h.length && (h[from] === 13 || h[from] === 10)) from++;
    const nl = h.indexOf(10, from);
    if (nl < 0) {
      if (h.length > this.server.opts.maxHeaderSize) this.parseError(codeError('HPE_HEADER_OVERFLOW', 'Header overflow'));
      return;
    }
    const line = goRequestLine(h.subarray(from, nl > from && h[nl - 1] === 13 ? nl - 1 : nl).toString('latin1'));
    if (line === undefined) {
      this.parseError(codeError('HPE_INVALID_METHOD', 'Invalid request line'));
      return;
    }
    this.held = undefined;
    this.methodOverride = line.method;
    this.parser.initialize(HTTPParser.REQUEST, {}, this.server.opts.maxHeaderSize, HTTPParser.kLenientNone);
    this.rawPart = [];
    this.urlPart = '';
    this.inHead = this.inMessage = false;
    this.headKnown = true;
    this.completedInHead = 0;
    const fed = Buffer.concat([Buffer.from(`${METHOD_SET.has(line.method) ? line.method : 'GET'} ${line.target} ${line.proto}\r\n`, 'latin1'), h.subarray(nl + 1)]);
    this.afterRead(this.parser.execute(fed), fed);
  }

  private onRequest(method: string, url: string, headers: string[], major: number, minor: number, keepAlive: boolean, upgrade: boolean): number {
    const req = new H1Request(this.socket, method, url, headers, major, minor);
    // no upgrades are served: the request is answered as a plain one, and the connection closes
    const res = new H1Response(req, this, keepAlive && !this.closing && !upgrade);
    this.current = req;
    this.queue.push(res);
    // one request at a time, as Go's server reads them: a pipelined request is handled when the
    // answer before it is complete (its body waits in the request meanwhile). The first is
    // handled once its body is complete or the bytes of this read are parsed, whichever is first:
    // a small body that came with its headers is then whole when the handler reads it (takeBody),
    // without the events of a body read in pieces.
    if (this.queue.length === 1) this.waiting = res;
    if (this.queue.length >= MAX_PIPELINED) this.pauseReading();
    return 0;
  }

  /** the socket's handle when the parser consumes it (its reading is then stopped and started as node:http does), else undefined */
  private consumedHandle(): { readStop(): number; readStart(): number } | undefined {
    const h = (this.socket as unknown as { _handle: { _consumed?: boolean; readStop?(): number; readStart?(): number } | null })._handle;
    return h?._consumed && h.readStop && h.readStart ? (h as { readStop(): number; readStart(): number }) : undefined;
  }

  private pauseReading(): void {
    if (this.readPaused) return;
    this.readPaused = true;
    const h = this.consumedHandle();
    if (h) h.readStop();
    else this.socket.pause();
  }

  private resumeReading(): void {
    if (!this.readPaused || this.gone) return;
    this.readPaused = false;
    const h = this.consumedHandle();
    if (h) h.readStart();
    else this.socket.resume();
  }

  private dispatchWaiting(): void {
    const res = this.waiting;
    if (res === undefined) return;
    this.waiting = undefined;
    this.dispatch(res);
  }

  private dispatch(res: H1Response): void {
    const req = res.req;
    if (req.url.includes('%') && !goValidPathEscapes(req.url)) {
      // Go's server does not parse the URL (url.ParseRequestURI fails): its plain 400 (no length, no
      // date), and the connection closes
      res.keepAlive = false;
      res.delimitByClose = true;
      res.sendDate = false;
      res.statusCode = 400;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.setHeader('Connection', 'close');
      res.end('400 Bad Request');
      return;
    }
    if (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      const expect = this.headerOf(req.rawHeaders, 'expect');
      if (expect !== undefined) {
        if (/^100-continue$/i.test(expect.trim())) {
          if (!req.complete) this.socket.write('HTTP/1.1 100 Continue\r\n\r\n', 'latin1');
        } else {
          res.statusCode = 417;
          res.end();
          return;
        }
      }
    }
    try {
      this.server.handler(req, res);
    } catch (e) {
      this.server.onHandlerError(e);
      res.destroy();
    }
  }

  private headerOf(headers: string[], name: string): string | undefined {
    for (let i = 0; i + 1 < headers.length; i += 2) if (headers[i]!.length === name.length && headers[i]!.toLowerCase() === name) return headers[i + 1];
    return undefined;
  }

  /** the active response's last byte is out: the next one's turn, or the connection's end */
  responseDone(res: H1Response): void {
    const q = this.queue;
    if (q[0] === res) q.shift();
    if (!res.keepAlive) {
      this.closing = true;
      this.socket.end();
      return;
    }
    const next = q[0];
    if (next) {
      if (this.socket.writableNeedDrain) {
        // the client is behind with reading the answers: the next one waits
        if (!this.drainWait) {
          this.drainWait = true;
          this.socket.once('drain', () => {
            this.drainWait = false;
            if (this.gone || this.queue[0] !== next) return;
            this.dispatchNext(next);
          });
        }
        return;
      }
      this.dispatchNext(next);
      return;
    }
    if (this.readPaused) this.resumeReading();
    if (this.current === undefined) {
      this.phase = Phase.Idle;
      this.since = this.server.tick;
      if (this.clientEnded || this.closing) this.socket.end();
    }
  }

  private dispatchNext(next: H1Response): void {
    if (this.readPaused && this.queue.length <= MAX_PIPELINED / 2) this.resumeReading();
    this.dispatch(next);
  }

  private parseError(e: Error): void {
    if (this.gone) return;
    this.held = undefined;
    this.methodOverride = undefined;
    const code = (e as { code?: string }).code ?? '';
    if (this.queue.length === 0 && this.socket.writable) {
      // Go's net/http answers: 431 for too many header bytes, 400 otherwise
      const big = code === 'HPE_HEADER_OVERFLOW';
      const status = big ? '431 Request Header Fields Too Large' : '400 Bad Request';
      this.socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${status}`, 'latin1');
      this.socket.destroySoon();
    } else this.socket.destroy();
    this.gone = true;
  }

  private onEnd(): void {
    this.clientEnded = true;
    const r = this.parser.finish();
    if (r instanceof Error) {
      this.parseError(r);
      return;
    }
    // (a request cut short is handled as before, and sees its body aborted)
    this.dispatchWaiting();
    this.current?._abort();
    if (this.queue.length === 0) this.socket.end();
  }

  /** the socket taken out of the layer (H1Response.detach): only for the response being answered, with no other after it */
  detach(res: H1Response): TLSSocket | undefined {
    if (this.gone || this.queue[0] !== res || this.queue.length !== 1) return undefined;
    const s = this.socket as unknown as { _handle?: { _consumed?: boolean } | null };
    if (s._handle?._consumed) {
      // (the native parser reads the socket in C++; its bytes come to JavaScript again, as node:http does on an upgrade)
      this.parser.unconsume();
      s._handle._consumed = false;
    }
    this.gone = true;
    this.queue.length = 0;
    this.current = undefined;
    this.waiting = undefined;
    for (const [event, fn] of this.listeners) this.socket.removeListener(event, fn);
    this.server.forget(this);
    try {
      this.parser.close();
    } catch {
      // (already closed)
    }
    return this.socket;
  }

  private onClose(): void {
    this.gone = true;
    this.waiting = undefined;
    this.server.forget(this);
    this.current?._abort();
    for (const res of this.queue.splice(0)) res._close();
    try {
      this.parser.close();
    } catch {
      // (already closed)
    }
  }

  /** the server is ending: an idle connection closes now, a busy one after its answer */
  shutdown(): void {
    this.closing = true;
    if (this.queue.length === 0 && this.phase !== Phase.Busy) this.socket.end();
  }
}

// ---- request lines llhttp refuses and Go's server takes ----

const METHOD_SET = new Set(METHODS);

/** llhttp's errors in a request line that Go's server may not have (a method it does not know, a byte >= 0x80 in the target) */
const RECOVERABLE = new Set(['HPE_INVALID_METHOD', 'HPE_INVALID_URL']);

/** how many messages a fresh parser completes in `b` */
function completes(b: Buffer, maxHeaderSize: number): number {
  const p = new HTTPParser();
  p.initialize(HTTPParser.REQUEST, {}, maxHeaderSize, HTTPParser.kLenientNone);
  let n = 0;
  p[kOnHeadersComplete] = () => 0;
  p[kOnMessageComplete] = () => {
    n++;
  };
  p.execute(b);
  p.close();
  return n;
}

/**
 * Where the message after the first `done` complete ones begins in `b` (bytes that begin at a
 * message boundary), found by parsing prefixes; -1 when they do not hold that many.
 */
function messageStart(b: Buffer, done: number, maxHeaderSize: number): number {
  if (done === 0) return 0;
  let lo = 0;
  let hi = b.length;
  if (completes(b, maxHeaderSize) < done) return -1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (completes(b.subarray(0, mid), maxHeaderSize) >= done) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * A request line as Go's net/http reads it (readRequest, then url.ParseRequestURI): method and
 * target and version split at the first two spaces, the method any token, the version HTTP/d.d,
 * the target without control bytes, '*' or a path or an absolute URL, with valid escapes in its
 * path. Undefined where Go answers 400. The target comes back with bytes >= 0x80 escaped.
 */
export function goRequestLine(line: string): { method: string; target: string; proto: string } | undefined {
  const sp1 = line.indexOf(' ');
  const sp2 = sp1 < 0 ? -1 : line.indexOf(' ', sp1 + 1);
  if (sp2 < 0) return undefined;
  const method = line.slice(0, sp1);
  const target = line.slice(sp1 + 1, sp2);
  const proto = line.slice(sp2 + 1);
  if (!TOKEN.test(method) || !/^HTTP\/\d\.\d$/.test(proto)) return undefined;
  // eslint-disable-next-line no-control-regex
  if (target === '' || /[\x00-\x1f\x7f]/.test(target)) return undefined;
  if (target !== '*' && target[0] !== '/' && !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(target)) return undefined;
  if (!goValidPathEscapes(target)) return undefined;
  return { method, target: target.replace(/[\x80-\xff]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`), proto };
}

/** whether a target's path (before any '?') has only whole %XX escapes, as Go's url.ParseRequestURI requires */
export function goValidPathEscapes(target: string): boolean {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  return !/%(?![0-9A-Fa-f]{2})/.test(path);
}

// ---- the server side ----

/** How often the timeouts are checked; a timeout fires within one sweep of its time. */
const SWEEP_MS = 5_000;

export class H1Server {
  private readonly conns = new Set<H1Connection>();
  private sweeper: NodeJS.Timeout | undefined;
  /** counts sweeps: connections note it when their phase changes, which costs nothing per request */
  tick = 0;

  constructor(
    readonly handler: H1Handler,
    readonly opts: H1Options,
    /** a handler that threw before it could answer (its connection is closed) */
    readonly onHandlerError: (e: unknown) => void = (e) => process.stderr.write(`E http1: request handler failed: ${(e as Error)?.stack ?? String(e)}\n`),
  ) {}

  /** takes an HTTP/1.1 connection (its TLS handshake done) */
  attach(socket: TLSSocket): void {
    const c = new H1Connection(socket, this);
    this.conns.add(c);
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
      this.sweeper.unref();
    }
  }

  forget(c: H1Connection): void {
    this.conns.delete(c);
    if (this.conns.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** graceful end: idle connections close now, busy ones after their current answer */
  shutdown(): void {
    for (const c of this.conns) c.shutdown();
  }

  get connections(): number {
    return this.conns.size;
  }

  private sweep(): void {
    this.tick++;
    const idleTicks = Math.ceil(this.opts.keepAliveTimeoutMs / SWEEP_MS);
    const headerTicks = Math.ceil(this.opts.headersTimeoutMs / SWEEP_MS);
    for (const c of this.conns) {
      const age = this.tick - c.since;
      if ((c.phase === Phase.Idle && idleTicks > 0 && age > idleTicks) || (c.phase === Phase.Headers && headerTicks > 0 && age > headerTicks)) c.socket.destroy();
    }
  }
}
