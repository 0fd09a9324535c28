// The benchmark's ceiling: a bare uWebSockets.js server answering "Hello" on one thread, as our
// server's front end does, so "repeated" can be stated as a fraction of what uWS alone manages here.
// With a BODY_FILE it also answers /body with that file's bytes, as JSON: the ceiling for an answer
// of that size (our cached search's body), synchronously, with nothing else done per request.
// Usage: node --import tsx bench/lib/hello.ts PORT [BODY_FILE]   (prints "listening PORT" once ready)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as UWS from '@trufflesuite/uws-js-unofficial';

const uws = createRequire(import.meta.url)('@trufflesuite/uws-js-unofficial') as typeof UWS;
// The package silently falls back to a pure-JS server without its addon; that would be no ceiling.
if (!String(uws.App).includes('[native code]')) throw new Error('uWebSockets.js native addon did not load');

const port = Number(process.argv[2] ?? '0');
const body = process.argv[3] ? readFileSync(process.argv[3]) : null;
uws
  .App()
  .any('/*', (res, req) => {
    if (body !== null && req.getUrl() === '/body') {
      res.writeHeader('Content-Type', 'application/json');
      res.end(body);
    } else res.end('Hello');
  })
  .listen('127.0.0.1', port, (socket) => {
    if (!socket) {
      process.stderr.write(`hello: cannot listen on 127.0.0.1:${port}\n`);
      process.exit(1);
    }
    process.stdout.write(`listening ${uws.us_socket_local_port(socket)}\n`);
  });
