// HEAD is GET without the body (RFC 9110 §9.3.2), and a 204 preflight carries no Content-Length
// (§8.6). Read on one raw keep-alive connection: body bytes after a HEAD answer would be parsed as
// the next response, so each answer must end exactly where its headers say.
import net from 'node:net';
import t from 'tap';
import { request } from '../helpers/http-client.js';
import { KEY, startTestServer } from '../helpers/server.js';

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: Buffer;
}

/**
 * Sends `requests` one after another on one connection and splits what comes back by the rules a
 * client uses: no body for HEAD, 204 and 304; else Content-Length bytes.
 */
async function onOneConnection(port: number, requests: Array<{ method: string; path: string; headers?: Record<string, string> }>): Promise<RawAnswer[]> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let pending = Buffer.alloc(0);
  let wake: (() => void) | undefined;
  socket.on('data', (d: Buffer) => {
    pending = Buffer.concat([pending, d]);
    wake?.();
  });
  const more = () =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no more bytes within 5 s after ${answers.length} answers; pending: ${pending.toString('latin1').slice(0, 300)}`)),
        5000,
      );
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const answers: RawAnswer[] = [];
  try {
    for (const r of requests) {
      const extra = Object.entries(r.headers ?? {})
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(`${r.method} ${r.path} HTTP/1.1\r\nHost: localhost\r\n${extra}\r\n`);
      while (pending.indexOf('\r\n\r\n') < 0) await more();
      const end = pending.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = pending.subarray(0, end).toString('latin1').split('\r\n');
      const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const status = Number(statusLine!.split(' ')[1]);
      const bodyless = r.method === 'HEAD' || status === 204 || status === 304;
      const length = bodyless ? 0 : Number(headers.get('content-length') ?? 0);
      while (pending.length < end + 4 + length) await more();
      answers.push({ status, headers, body: pending.subarray(end + 4, end + 4 + length) });
      pending = pending.subarray(end + 4 + length);
    }
    // Nothing may follow the last answer (a HEAD body would be left over here).
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (pending.length > 0) throw new Error(`${pending.length} stray bytes after the answers: ${pending.subarray(0, 60).toString('latin1')}`);
  } finally {
    socket.destroy();
  }
  return answers;
}

t.test("HEAD on GET paths: GET's status and headers, Content-Length included, and no body", async (t) => {
  const { url, server } = await startTestServer(t);
  const port = server.port;
  const key = { 'X-Api-Key': KEY };
  const [head, get, headHealth, getHealth, headPage, getPage] = await onOneConnection(port, [
    { method: 'HEAD', path: '/v1.0/account', headers: key },
    { method: 'GET', path: '/v1.0/account', headers: key },
    { method: 'HEAD', path: '/healthz' },
    { method: 'GET', path: '/healthz' },
    { method: 'HEAD', path: '/' },
    { method: 'GET', path: '/' },
  ]);
  for (const [h, g, what] of [
    [head, get, 'account'],
    [headHealth, getHealth, 'healthz'],
    [headPage, getPage, 'demo page'],
  ] as const) {
    t.equal(h!.status, g!.status, `${what}: the same status`);
    t.equal(h!.status, 200);
    t.equal(h!.headers.get('content-length'), String(g!.body.length), `${what}: HEAD's Content-Length is GET's body length`);
    t.equal(h!.headers.get('content-type'), g!.headers.get('content-type'), `${what}: the same Content-Type`);
    t.ok(g!.body.length > 0, `${what}: GET has a body`);
  }
  t.same(JSON.parse(get!.body.toString('utf8')).data.attributes.credits.total, 100, 'the GET after the HEAD parsed whole');

  // Errors too: a HEAD that GET would refuse gets GET's error status and no body.
  const [noKey, unknown, postOnly] = await onOneConnection(port, [
    { method: 'HEAD', path: '/v1.0/account' },
    { method: 'HEAD', path: '/v2/nothing' },
    { method: 'HEAD', path: '/v1.0/removebg' },
  ]);
  t.equal(noKey!.status, 403, 'no key: 403');
  t.ok(Number(noKey!.headers.get('content-length')) > 0, 'with the length of the JSON error a GET would get');
  t.equal(unknown!.status, 404);
  t.equal(postOnly!.status, 405, 'a POST-only path does not answer HEAD');
  t.equal(postOnly!.headers.get('allow'), 'POST, OPTIONS');

  // Node's client (checked against /openapi.json by the helper).
  const viaNode = await request(`${url}/openapi.json`, { method: 'HEAD' });
  t.equal(viaNode.status, 200);
  t.equal(viaNode.body.length, 0);
  t.match(viaNode.headers['content-type'], /^application\/json/);
});

t.test('Allow names HEAD wherever GET is; a preflight is a 204 without Content-Length', async (t) => {
  const { url, server } = await startTestServer(t);
  const port = server.port;
  const put = await request(`${url}/v1.0/account`, { method: 'PUT', headers: { 'X-Api-Key': KEY } });
  t.equal(put.status, 405);
  t.equal(put.headers.allow, 'GET, HEAD, OPTIONS');
  const [preflight, after] = await onOneConnection(port, [
    { method: 'OPTIONS', path: '/v1.0/removebg', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' } },
    { method: 'GET', path: '/healthz' },
  ]);
  t.equal(preflight!.status, 204);
  t.equal(preflight!.headers.get('content-length'), undefined, 'no Content-Length on a 204');
  t.equal(preflight!.headers.get('allow'), 'POST, OPTIONS');
  t.equal(after!.status, 200, 'the next answer on the connection parses');
});

t.test('a HEAD refused for its framing: 400, no body, the connection closed', async (t) => {
  const { server } = await startTestServer(t);
  const socket = net.connect(server.port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write('HEAD /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx');
  let gaveUp = false;
  const timer = setTimeout(() => {
    gaveUp = true;
    socket.destroy();
  }, 5000);
  await closed;
  clearTimeout(timer);
  t.equal(gaveUp, false, 'the server closed the connection');
  const text = Buffer.concat(chunks).toString('latin1');
  t.match(text, /^HTTP\/1\.1 400 /, 'refused');
  const [head, rest] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
  t.match(head, /\r\nContent-Length: 0(\r\n|$)/i, 'Content-Length: 0 on the closing answer');
  t.equal(rest, '', 'no body after the headers');
});
