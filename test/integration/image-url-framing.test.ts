// How the image_url fetcher reads what a host sends, byte for byte (found by bench:faults --faults fuzz-fetch): a
// body without Content-Length ends where the connection does, so when our own timeout or the
// client's leaving destroys the connection, the bytes so far must not pass for the image; node's
// parser refusals get a reason a user can read.
import net from 'node:net';
import t, { type Test } from 'tap';
import { fetchImage, ImageFetchError } from '../../src/fetch/image-url.js';

/** A raw TCP host that answers any request with `response`, then closes (FIN) or keeps the connection open. */
async function rawHost(t: Test, response: string | Buffer, close: boolean): Promise<{ url: string; open: () => number }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.once('data', () => {
      s.write(response);
      if (close) s.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/x.png`, open: () => sockets.size };
}

const options = { allowLoopback: true, totalTimeoutMs: 600, connectTimeoutMs: 500 };

t.test('a body without Content-Length that stalls times out; the bytes so far are not the image', async (t) => {
  const host = await rawHost(t, 'HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n', false);
  await t.rejects(fetchImage(new URL(host.url), options), { name: 'ImageFetchError', reason: 'Timed out after 600 ms' });
  await new Promise((r) => setTimeout(r, 100));
  t.equal(host.open(), 0, 'the connection is closed');
});

t.test('the same body when the client leaves: its reason, not the bytes so far', async (t) => {
  const host = await rawHost(t, 'HTTP/1.1 200 OK\r\n\r\nabc', false);
  const client = new AbortController();
  const gone = new Error('client gone');
  setTimeout(() => client.abort(gone), 150);
  await t.rejects(fetchImage(new URL(host.url), { ...options, totalTimeoutMs: 5000, signal: client.signal }), gone);
});

t.test('a body without Content-Length that the host closes is whole', async (t) => {
  const host = await rawHost(t, 'HTTP/1.1 200 OK\r\n\r\nabc', true);
  t.equal((await fetchImage(new URL(host.url), options)).data.toString(), 'abc');
});

t.test("node's parser refusals read as an invalid response, in the head or in the body", async (t) => {
  const cases: Array<[string, string]> = [
    ['HTTP/1.1 200 OK\r\nX-A: a\0b\r\nContent-Length: 3\r\n\r\nabc', 'The remote server sent an invalid HTTP response (HPE_INVALID_HEADER_TOKEN)'],
    [
      'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd',
      'The remote server sent an invalid HTTP response (HPE_UNEXPECTED_CONTENT_LENGTH)',
    ],
    [`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(17_000)}\r\nContent-Length: 3\r\n\r\nabc`, "The remote server's response headers exceed 16 kB"],
    ['ICY 200 OK\r\n\r\nabc', 'The remote server sent an invalid HTTP response'],
    // Refused in the body, after the response began: the parser's reason, not "closed before the body was complete".
    [
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\nabc\r\n0\r\n\r\n',
      'The remote server sent an invalid HTTP response (HPE_INVALID_CHUNK_SIZE)',
    ],
  ];
  for (const [response, reason] of cases) {
    const host = await rawHost(t, response, true);
    const err = await fetchImage(new URL(host.url), options).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(err instanceof ImageFetchError, `${JSON.stringify(response.slice(0, 40))}: an ImageFetchError`);
    t.equal((err as ImageFetchError).reason, reason);
  }
});
