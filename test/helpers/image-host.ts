// A loopback HTTP server that plays the remote side of image_url / bg_image_url in tests.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

export interface ImageHost {
  url: string;
  /** Requests seen, by path. */
  hits: string[];
  /** Register a path → bytes (served as image/*) or a handler. */
  set(path: string, body: Buffer | http.RequestListener): void;
}

export async function startImageHost(t: Test, host = '127.0.0.1'): Promise<ImageHost> {
  const routes = new Map<string, Buffer | http.RequestListener>();
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.push(path);
    const route = routes.get(path);
    if (route === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not here');
    } else if (Buffer.isBuffer(route)) {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': route.length }).end(route);
    } else {
      route(req, res);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    hits,
    set: (path, body) => void routes.set(path, body),
  };
}
