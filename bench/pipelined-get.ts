// A small load generator in its own process (so the server keeps its core): C keep-alive
// connections, each with D pipelined GET requests in flight, for a fixed number of requests.
// Prints one JSON line: { requests, ok, errors, seconds, requestsPerSecond }.
//   node dist/bench/pipelined-get.js <port> <path> <api-key> <total> [connections=8] [depth=16]
import net from 'node:net';

const [portArg, path, key, totalArg, connArg, depthArg] = process.argv.slice(2);
const port = Number(portArg);
const total = Number(totalArg);
const connections = Number(connArg ?? 8);
const depth = Number(depthArg ?? 16);
const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${key}\r\n\r\n`);
const STATUS = 'HTTP/1.1 ';

let sent = 0;
let ok = 0;
let errors = 0;
const started = performance.now();

function lane(): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let inFlight = 0;
    let tail = '';
    const pump = () => {
      const n = Math.min(depth - inFlight, total - sent);
      if (n <= 0) return;
      sent += n;
      inFlight += n;
      sock.write(n === 1 ? request : Buffer.concat(Array.from({ length: n }, () => request)));
    };
    sock.on('connect', pump);
    sock.on('data', (chunk: Buffer) => {
      // Count status lines; keep a short tail so one split across chunks is still seen.
      const text = tail + chunk.toString('latin1');
      let i = text.indexOf(STATUS);
      let last = 0;
      while (i >= 0 && i + STATUS.length + 3 <= text.length) {
        if (text.startsWith('200', i + STATUS.length)) ok++;
        else errors++;
        inFlight--;
        last = i + STATUS.length + 3;
        i = text.indexOf(STATUS, last);
      }
      tail = text.slice(Math.max(last, text.length - (STATUS.length + 2)));
      if (inFlight === 0 && sent >= total) sock.end();
      else pump();
    });
    sock.on('end', () => resolve());
    sock.on('close', () => resolve());
    sock.on('error', reject);
  });
}

await Promise.all(Array.from({ length: connections }, lane));
const seconds = (performance.now() - started) / 1000;
console.log(JSON.stringify({ requests: ok + errors, ok, errors, seconds, requestsPerSecond: (ok + errors) / seconds }));
