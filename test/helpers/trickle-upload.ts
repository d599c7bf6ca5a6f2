// An upload that declares a large body and sends it a little at a time, on a raw socket: what a slow
// or hostile client does to hold the server's memory. It stops by itself: once answered, once the
// server closes, or after `maxChunks` chunks (then the socket is destroyed).
import net from 'node:net';

export interface TrickleOptions {
  path: string;
  /** Content-Length to declare. */
  declaredBytes: number;
  headers?: Record<string, string>;
  /** Bytes per chunk and the pause between chunks. */
  chunkBytes?: number;
  intervalMs?: number;
  /** The most chunks to send before giving up (bounds the test). */
  maxChunks?: number;
}

export interface TrickleResult {
  /** The answer's status, or 0 when the connection ended without one. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Body bytes sent before the answer came (or the socket ended). */
  sentBytes: number;
}

export interface Trickle {
  /** Resolves once the headers are written. */
  started: Promise<void>;
  done: Promise<TrickleResult>;
  /** Body bytes sent so far. */
  sent(): number;
  /** Stop sending and close the socket. */
  stop(): void;
}

export function trickleUpload(baseUrl: string, opts: TrickleOptions): Trickle {
  const { port, hostname } = new URL(baseUrl);
  const chunk = Buffer.alloc(opts.chunkBytes ?? 2048, 0x61);
  const maxChunks = opts.maxChunks ?? 600;
  const sock = net.connect(Number(port), hostname);
  let sentBytes = 0;
  let chunks = 0;
  let raw = Buffer.alloc(0);
  let timer: ReturnType<typeof setInterval> | undefined;
  let resolveStarted!: () => void;
  const started = new Promise<void>((r) => (resolveStarted = r));
  const done = new Promise<TrickleResult>((resolve) => {
    let finished = false;
    const finish = (status: number, headers: Record<string, string>, body: string) => {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      sock.destroy();
      resolve({ status, headers, body, sentBytes });
    };
    sock.on('connect', () => {
      const extra = Object.entries(opts.headers ?? {})
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      sock.write(
        `POST ${opts.path} HTTP/1.1\r\nHost: x\r\n${extra}Content-Type: multipart/form-data; boundary=b\r\nContent-Length: ${opts.declaredBytes}\r\n\r\n`,
      );
      resolveStarted();
      timer = setInterval(() => {
        if (chunks >= maxChunks || sentBytes + chunk.length > opts.declaredBytes) return finish(0, {}, '');
        chunks++;
        sentBytes += chunk.length;
        sock.write(chunk);
      }, opts.intervalMs ?? 100);
    });
    sock.on('data', (d: Buffer) => {
      raw = Buffer.concat([raw, d]);
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (raw.length - end - 4 < length) return;
      finish(Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0), headers, raw.subarray(end + 4, end + 4 + length).toString());
    });
    sock.on('close', () => finish(0, {}, ''));
    sock.on('error', () => finish(0, {}, ''));
  });
  return { started, done, sent: () => sentBytes, stop: () => sock.destroy() };
}
