// The one uWebSockets.js adapter: the only module that touches uWS `res`/`req`. Per request it
// registers onAborted first, copies everything it needs out of the stack-allocated request before
// any await, hands a plain Request to the application, and writes the Reply inside res.cork(),
// streaming large bodies with tryEnd/onWritable so a slow reader never makes the server buffer
// more than the socket accepts.
import { createRequire } from 'node:module';
import type * as UWS from '@trufflesuite/uws-js-unofficial';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';

// The package is CommonJS with a native addon; it falls back to a slow pure-JS server when the
// addon does not load. We want the real thing or nothing.
const uws = createRequire(import.meta.url)('@trufflesuite/uws-js-unofficial') as typeof UWS;
if (!String(uws.App).includes('[native code]')) throw new Error('uWebSockets.js native addon did not load (fell back to the JS implementation)');

/** What the application sees of a request: copied values only. */
export interface Request {
  /** Upper-case, as sent. */
  readonly method: string;
  /** The path, without the query string (percent-encoding left as sent). */
  readonly path: string;
  /** The raw query string after '?', or ''. */
  readonly rawQuery: string;
  /** Length of the request target (path + '?' + query) in bytes as sent. */
  readonly targetLength: number;
  /** Total size of the header fields as received (names, values, separators). */
  readonly headerBytes: number;
  /** Lower-case names; only the headers the API reads. */
  readonly headers: Readonly<Record<string, string>>;
  readonly remoteAddress: string;
  /** Aborted when the client goes away before the reply is written. */
  readonly signal: AbortSignal;
  /** The client went away; asking costs nothing, where `signal` makes an AbortSignal. */
  readonly aborted: boolean;
  readonly receivedAt: number;
  /**
   * A request's body, read whole before the handler runs (the website's forms; the API takes none):
   * null when the request has none. Beyond MAX_BODY_BYTES the rest is not kept: `bodyTooLarge`.
   */
  readonly body: Uint8Array | null;
  readonly bodyTooLarge: boolean;
}

/** The largest request body kept (a sign-in or key form is a few hundred bytes). */
export const MAX_BODY_BYTES = 16 * 1024;

/**
 * Where a streamed body writes. `write` returns false once the socket is full: the bytes are kept,
 * but nothing more should be written until the callback given to `onDrain` runs.
 */
export interface BodySink {
  write(chunk: Uint8Array): boolean;
  /** write() is done with the chunk's memory when it returns (sent, or copied into the socket's buffer): the producer may reuse it. */
  readonly copies: boolean;
  end(): void;
  /** The body cannot be finished: the connection is closed, so the client sees it incomplete. */
  abort(): void;
  onDrain(cb: () => void): void;
}

/** A body produced while it is sent (CSV exports): chunked, at the pace the client reads. */
export interface BodyStream {
  /** Called once, after the head is written. */
  pipe(sink: BodySink): void;
  /** Stop producing: the client went away, or the body is not wanted (HEAD). Idempotent. */
  cancel(): void;
}

export interface Reply {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Uint8Array | string | BodyStream;
  /** Close the connection after this reply (used while draining). */
  readonly close?: boolean;
  /** For the access log and metrics: the route template and whether the cache answered. */
  readonly route?: string;
  readonly cache?: 'hit' | 'miss';
}

/** Whatever the application made of a request, for the access log and metrics. */
export interface Finished {
  readonly request: Request;
  /** Null when the client went away first. */
  readonly reply: Reply | null;
  readonly status: number;
  readonly bytes: number;
  readonly aborted: boolean;
}

export type Handler = (req: Request) => Reply | Promise<Reply>;

/** Request headers copied out of uWS; nothing else is read, so nothing else can leak. */
const READ_HEADERS = [
  'authorization',
  'if-none-match',
  'accept-encoding',
  'accept',
  'x-forwarded-for',
  // The website's forms: its session cookie, and where a POST comes from (CSRF checks).
  'cookie',
  'origin',
  'sec-fetch-site',
  'content-type',
  'content-length',
  'transfer-encoding',
] as const;

const REASONS: Record<number, string> = {
  200: 'OK',
  204: 'No Content',
  303: 'See Other',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  410: 'Gone',
  413: 'Content Too Large',
  414: 'URI Too Long',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
const statusLine = (status: number): string => `${status} ${REASONS[status] ?? ''}`.trimEnd();

const decoder = new TextDecoder();
const LAST_RESORT = JSON.stringify({
  type: 'about:blank',
  title: 'Internal error',
  status: 500,
  detail: 'The server failed to answer; retry later.',
  code: 'internal',
});

const WANTED: ReadonlySet<string> = new Set(READ_HEADERS);

/**
 * A request as the application sees it. Each call into uWS costs about a microsecond, a large share
 * of a cached answer: one pass over the headers gives both the ones we read and the total size,
 * and the peer address is only fetched when a route asks (the demo's rate limit), while the
 * response is still ours. A class, not an object literal with getters: the body is filled in
 * later without copying the request (a spread would freeze `aborted` at false).
 */
class CopiedRequest implements Request {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly targetLength: number;
  readonly headerBytes: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly receivedAt = performance.now();
  body: Uint8Array | null = null;
  bodyTooLarge = false;
  private address: string | null = null;
  private readonly res: HttpResponse;
  private readonly aborts: Aborts;
  private readonly state: State;
  private readonly trustProxy: boolean;

  constructor(res: HttpResponse, req: HttpRequest, aborts: Aborts, state: State, trustProxy: boolean) {
    this.res = res;
    this.aborts = aborts;
    this.state = state;
    this.trustProxy = trustProxy;
    const headers: Record<string, string> = {};
    let headerBytes = 0;
    req.forEach((k, v) => {
      headerBytes += k.length + v.length + 4;
      if (WANTED.has(k)) headers[k] = v;
    });
    this.headers = headers;
    this.headerBytes = headerBytes;
    this.path = req.getUrl();
    this.rawQuery = req.getQuery() ?? '';
    this.method = req.getCaseSensitiveMethod();
    this.targetLength = Buffer.byteLength(this.path) + (this.rawQuery ? 1 + Buffer.byteLength(this.rawQuery) : 0);
  }

  get remoteAddress(): string {
    if (this.address === null) {
      const forwarded = this.headers['x-forwarded-for'];
      const hop = this.trustProxy && forwarded ? forwarded.split(',').at(-1)?.trim() : undefined;
      this.address = hop || (this.state.done ? '' : decoder.decode(this.res.getRemoteAddressAsText()));
    }
    return this.address;
  }

  get signal(): AbortSignal {
    return this.aborts.signal();
  }

  get aborted(): boolean {
    return this.aborts.aborted;
  }
}

/** Does the request announce a body (RFC 9112 §6.3: a Content-Length above 0, or chunked)? */
const hasBody = (headers: Readonly<Record<string, string>>): boolean =>
  (headers['content-length'] !== undefined && headers['content-length'].trim() !== '0') || headers['transfer-encoding'] !== undefined;

/**
 * The request's AbortSignal, made only when something asks for it: most answers come from the
 * cache synchronously and never need one, and an AbortController per request is measurable.
 */
class Aborts {
  private controller: AbortController | null = null;
  aborted = false;

  signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  abort(): void {
    this.aborted = true;
    this.controller?.abort();
  }
}

/** Bodies up to this size are handed to uWS whole (end); larger ones stream as the socket drains. */
const STREAM_ABOVE_BYTES = 256 * 1024;

const NOSNIFF = 'X-Content-Type-Options';

/**
 * The status line and every header. uWS writes a header as `name: value\r\n`, one native call each,
 * and each call (its string conversions and its write into the corked buffer) cost about a
 * microsecond, as much as the rest of a 304: the headers after the first ride as one value, CRLF
 * joined, so a reply's head is one call however many headers it has. Header values are ours
 * (a client's query string reaches one only percent-encoded, in Link), so none holds a CR or LF.
 */
function writeHead(res: HttpResponse, reply: Reply): void {
  // uWS writes "200 OK" itself when no status was written.
  if (reply.status !== 200) res.writeStatus(statusLine(reply.status));
  let name = NOSNIFF;
  let value = 'nosniff';
  let nosniff = false;
  const headers = reply.headers;
  for (let i = 0; i < headers.length; i++) {
    const [k, v] = headers[i] as readonly [string, string];
    if (i === 0) {
      name = k;
      value = v;
    } else value += `\r\n${k}: ${v}`;
    if (k.length === NOSNIFF.length && k.toLowerCase() === 'x-content-type-options') nosniff = true;
  }
  // Every answer, written here so no route can forget it (304s, HEADs, exports, feeds, errors and
  // the last-resort 500 included): a problem body echoes the parameter names it was sent, and a
  // browser must never read a body of ours as anything but its Content-Type. The website's pages
  // name it among their security headers; it is not written twice.
  if (!nosniff && headers.length > 0) value += `\r\n${NOSNIFF}: nosniff`;
  res.writeHeader(name, value);
}

export const isStream = (body: Reply['body']): body is BodyStream => typeof body === 'object' && !(body instanceof Uint8Array);

interface State {
  done: boolean;
  reported: boolean;
}

/**
 * Writes a streamed body as its producer hands it over, chunked; `finished` runs with the byte
 * count when the body ends (an abandoned body closes the connection and is reported by onAborted).
 */
function sendStream(res: HttpResponse, reply: Reply, stream: BodyStream, isHead: boolean, state: State, finished: (bytes: number) => void): void {
  writeHead(res, reply);
  if (isHead) {
    // The length of a body never made is unknown: no Content-Length (see send() on 304).
    stream.cancel();
    res.endWithoutBody();
    state.done = true;
    finished(0);
    return;
  }
  let bytes = 0;
  let drain: (() => void) | null = null;
  res.onWritable(() => {
    drain?.();
    return true;
  });
  stream.pipe({
    // uWS sends what the socket takes and copies the rest into its own buffer before write() returns.
    copies: true,
    write(chunk) {
      if (state.done) return true;
      let ok = true;
      res.cork(() => {
        ok = res.write(chunk);
      });
      bytes += chunk.length;
      return ok;
    },
    end() {
      if (state.done) return;
      res.cork(() => res.end());
      state.done = true;
      finished(bytes);
    },
    abort() {
      if (!state.done) res.close();
    },
    onDrain(cb) {
      drain = cb;
    },
  });
}

/** Writes a whole reply; large bodies go out as the socket drains. Returns the body bytes. */
function send(res: HttpResponse, reply: Reply, body: Uint8Array | string, isHead: boolean, state: State): number {
  body = typeof body === 'string' ? Buffer.from(body) : body;
  writeHead(res, reply);
  if (reply.status === 304) {
    // No arguments: uWS then writes no Content-Length (an undefined length is written as 2^63).
    // A 304 skips the draining close; the process exits once in-flight requests are done anyway.
    res.endWithoutBody();
    state.done = true;
    return 0;
  }
  if (isHead) {
    // The GET's Content-Length, written as a header: uWS 20.30's endWithoutBody(length) leaves the
    // response waiting for a body that never comes, and the connection dies on its next request.
    // Like a 304, a HEAD skips the draining close.
    res.writeHeader('Content-Length', String(body.length));
    res.endWithoutBody();
    state.done = true;
    return 0;
  }
  const total = body.length;
  if (total <= STREAM_ABOVE_BYTES) {
    res.end(body, reply.close ?? false);
    state.done = true;
    return total;
  }
  const start = res.getWriteOffset();
  const [, responded] = res.tryEnd(body, total);
  // A streamed body is not followed by a forced close (that could cut what uWS still buffers);
  // while draining, the process exits once in-flight requests are done, which closes it anyway.
  if (responded) {
    state.done = true;
    return total;
  }
  res.onWritable((offset) => {
    if (state.done) return true;
    const [ok, finished] = res.tryEnd(body.subarray(offset - start), total);
    if (finished) state.done = true;
    return ok;
  });
  return total;
}

export interface HttpServer {
  readonly port: number;
  /** Stops accepting new connections; established ones keep being served until the process exits. */
  stopListening(): void;
}

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  readonly trustProxy: boolean;
  readonly handler: Handler;
  readonly onFinished?: (f: Finished) => void;
}

/**
 * One request and its answer. A class rather than closures made per request: one object a request
 * where closures make a context and five functions. Written for tsx's keepNames; re-measured on
 * tsc's output (issue 27), the closures were still slower: 6-42% more time per answer with uWS
 * stubbed out (8 of 9 comparisons), 304 polls 11.4k vs 13.2k req/s (medians of 3 bench runs).
 */
class Exchange {
  // done: the response may no longer be touched; reported: onFinished has run (exactly once).
  readonly state: State = { done: false, reported: false };
  readonly aborts = new Aborts();
  readonly request: CopiedRequest;
  readonly isHead: boolean;

  private readonly res: HttpResponse;
  private readonly opts: ListenOptions;
  constructor(res: HttpResponse, req: HttpRequest, opts: ListenOptions) {
    this.res = res;
    this.opts = opts;
    res.onAborted(() => this.aborted());
    this.request = new CopiedRequest(res, req, this.aborts, this.state, opts.trustProxy);
    this.isHead = this.request.method === 'HEAD';
  }

  private aborted(): void {
    const wasDone = this.state.done;
    this.state.done = true;
    // A stream still being written is stopped whether or not its head went out.
    this.aborts.abort();
    if (wasDone || this.state.reported) return;
    this.state.reported = true;
    this.opts.onFinished?.({ request: this.request, reply: null, status: 499, bytes: 0, aborted: true });
  }

  report(reply: Reply, bytes: number): void {
    if (this.state.reported) return;
    this.state.reported = true;
    this.opts.onFinished?.({ request: this.request, reply, status: reply.status, bytes, aborted: false });
  }

  finish(reply: Reply, corked: boolean): void {
    const body = reply.body;
    if (this.state.done) {
      if (isStream(body)) body.cancel();
      return;
    }
    const res = this.res;
    if (isStream(body)) {
      // The client may leave mid-body: the producer stops with it.
      this.aborts.signal().addEventListener('abort', () => body.cancel(), { once: true });
      const write = (): void => sendStream(res, reply, body, this.isHead, this.state, (bytes) => this.report(reply, bytes));
      if (corked) write();
      else res.cork(write);
      return;
    }
    let bytes = 0;
    if (corked) bytes = send(res, reply, body, this.isHead, this.state);
    else res.cork(() => (bytes = send(res, reply, body, this.isHead, this.state)));
    this.report(reply, bytes);
  }

  run(): void {
    let out: Reply | Promise<Reply>;
    try {
      out = this.opts.handler(this.request);
    } catch (err) {
      out = Promise.reject(err);
    }
    const corked = this.request.body === null && !this.request.bodyTooLarge;
    if (out instanceof Promise) {
      out.then(
        (reply) => this.finish(reply, false),
        // The application answers its own errors; this is the last line of defence, still a problem.
        () => this.finish({ status: 500, headers: [['Content-Type', 'application/problem+json']], body: LAST_RESORT }, false),
      );
    } else {
      // Answered synchronously (a cache hit): uWS has us corked already, unless a body was awaited.
      this.finish(out, corked);
    }
  }

  /** The body arrives in chunks after uWS's callback returns; the handler runs once it is whole (or known to be too large: the rest is drained). */
  readBody(): void {
    const chunks: Buffer[] = [];
    let size = 0;
    this.res.onData((chunk, isLast) => {
      if (size <= MAX_BODY_BYTES) {
        size += chunk.byteLength;
        // uWS reuses the chunk's memory after this call returns: copy it.
        if (size <= MAX_BODY_BYTES) chunks.push(Buffer.from(new Uint8Array(chunk)));
      }
      if (!isLast || this.state.done) return;
      if (size > MAX_BODY_BYTES) this.request.bodyTooLarge = true;
      else this.request.body = Buffer.concat(chunks);
      this.run();
    });
  }
}

export function listen(opts: ListenOptions): Promise<HttpServer> {
  const app: TemplatedApp = uws.App();
  app.any('/*', (res, req) => {
    const exchange = new Exchange(res, req, opts);
    // uWS wants onData registered in this callback, before it returns.
    if (hasBody(exchange.request.headers)) exchange.readBody();
    else exchange.run();
  });
  return listening(app, opts);
}

function listening(app: TemplatedApp, opts: ListenOptions): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    app.listen(opts.host, opts.port, (socket: us_listen_socket | false) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${opts.host}:${opts.port} (in use, or not an address of this machine)`));
        return;
      }
      resolve({
        port: uws.us_socket_local_port(socket),
        stopListening: () => uws.us_listen_socket_close(socket),
      });
    });
  });
}
