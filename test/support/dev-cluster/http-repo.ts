/**
 * TEST FIXTURE (dev cluster): a folder served over HTTP on loopback, as a
 * Helm HTTP chart repository (index.yaml plus chart archives) is served.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize, sep } from 'node:path';

export interface HttpRepo {
  /** The folder served. */
  readonly dir: string;
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  readonly url: string;
}

export async function serveFolder(dir: string): Promise<HttpRepo & { close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
    const file = normalize(join(dir, path));
    if (!file.startsWith(dir + sep) && file !== dir) {
      res.writeHead(403).end();
      return;
    }
    let size: number;
    try {
      const stat = statSync(file);
      if (!stat.isFile()) throw new Error('not a file');
      size = stat.size;
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
      return;
    }
    const type = file.endsWith('.yaml') ? 'application/x-yaml' : file.endsWith('.tgz') ? 'application/gzip' : 'application/octet-stream';
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': size });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    dir,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
