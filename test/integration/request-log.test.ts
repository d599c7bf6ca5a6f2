// The request log: exactly one line per request, success or error, with its X-Request-Id, the account
// (never the key), route, status, output size, ms per stage, bytes in and out and total ms; no key
// in any line, whatever the request carried. Lines come from the real pino logger.
import t from 'tap';
import { createRequestLog } from '../../src/observe/request-log.js';
import { KEY, postImage, postJson } from '../helpers/api.js';
import { request, type TestResponse } from '../helpers/http-client.js';
import { makeImage } from '../helpers/images.js';
import { sandboxImage } from '../helpers/sandbox.js';
import { startTestServer, type ServerEvents } from '../helpers/server.js';

function capture() {
  const lines: string[] = [];
  return { lines, destination: { write: (s: string) => void lines.push(...s.split('\n').filter((l) => l !== '')) } };
}

async function endsReached(events: ServerEvents, n: number): Promise<void> {
  while (events.ended.length < n) await events.nextEnd();
}

t.test('one JSON line per request with its fields; no key anywhere', async (t) => {
  const { lines, destination } = capture();
  const log = createRequestLog({ destination, pretty: false });
  const wrongKey = 'wrong-key-that-must-not-be-logged-7f3a';
  const { url, ledger, events, pool } = await startTestServer(t, { observers: [log] });
  const account = ledger.accountOf(KEY)!;
  pool.respond = (task) => ({
    ok: true,
    data: task.input,
    contentType: 'image/png',
    width: 30,
    height: 20,
    inputWidth: 60,
    inputHeight: 40,
    foreground: { top: 0, left: 0, width: 30, height: 20 },
    timings: { queue: 0.5, probe: 1, decode: 4, infer: 90, composite: 6, encode: 7, total: 108 },
  });
  const img = await makeImage('png', 60, 40);

  const sent: Array<[string, Promise<TestResponse>]> = [
    ['ok', postImage(url, img, { size: 'preview' }, { 'X-Request-Id': 'client-id-1' })],
    ['bearer', postImage(url, img, {}, { 'X-Api-Key': '', Authorization: `Bearer ${KEY}` })],
    ['wrong key', postImage(url, img, {}, { 'X-Api-Key': wrongKey, 'X-Request-Id': 'bad id with spaces' })],
    ['bad json', postJson(url, '{', { 'X-Request-Id': 'x'.repeat(500) })],
    ['sandbox', sandboxImage(url, img, {}, { 'X-Api-Key': KEY })],
    ['404', request(`${url}/v1.0/${KEY}`)],
    ['account', request(`${url}/v1.0/account`, { headers: { 'X-Api-Key': KEY } })],
  ];
  const answers: TestResponse[] = [];
  for (const [, p] of sent) answers.push(await p);
  await endsReached(events, sent.length);

  t.equal(lines.length, sent.length, 'one line per request');
  const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const [i, r] of records.entries()) {
    t.equal(r.msg, 'request');
    t.match(
      r,
      {
        level: String,
        time: /^\d{4}-\d\d-\d\dT/,
        pid: process.pid,
        method: String,
        status: Number,
        bytes_in: Number,
        bytes_out: Number,
        total_ms: Number,
        client: '127.0.0.1',
      },
      `fields of line ${i}`,
    );
  }
  // Lines are written as requests end; match them to the answers by request id.
  const byId = new Map(records.map((r) => [r.req_id as string, r]));
  t.equal(byId.size, sent.length, 'every request id is different');
  for (const [i, res] of answers.entries()) {
    const id = res.headers['x-request-id'] as string;
    t.ok(byId.has(id), `${sent[i]![0]}: the line carries the X-Request-Id sent back`);
    t.equal(byId.get(id)!.status, res.status);
    t.equal(byId.get(id)!.bytes_out, res.body.length, `${sent[i]![0]}: bytes out`);
  }
  const ok = byId.get('client-id-1')!;
  t.match(ok, {
    method: 'POST',
    route: '/v1.0/removebg',
    status: 200,
    account: account.id,
    output: '30x20',
    ms: { queue: 0.5, decode: 5, inference: 90, composite: 6, encode: 7 },
    credits: 1,
  });
  t.ok((ok.bytes_in as number) > img.length, 'bytes in: the whole body');
  t.equal(answers[1]!.status, 200, 'a bearer key works');
  t.equal(byId.get(answers[1]!.headers['x-request-id'] as string)!.account, account.id);
  const wrong = byId.get(answers[2]!.headers['x-request-id'] as string)!;
  t.match(wrong, { status: 403, code: 'auth_failed', account: null });
  t.not(answers[2]!.headers['x-request-id'], 'bad id with spaces', 'an insane incoming id is replaced');
  t.match(byId.get(answers[3]!.headers['x-request-id'] as string)!, { status: 400, code: 'invalid_request_body' });
  t.equal((answers[3]!.headers['x-request-id'] as string).length, 36, 'an oversized incoming id is replaced');
  t.match(byId.get(answers[4]!.headers['x-request-id'] as string)!, { route: '/sandbox/v1.0/removebg', status: 200, account: null, credits: 0 });
  t.match(byId.get(answers[5]!.headers['x-request-id'] as string)!, { route: null, status: 404, code: 'not_found' });

  // The key in a header, a bearer token, even in a path (only routes are logged): never in a line.
  t.notOk(
    lines.some((l) => l.includes(KEY)),
    'no line holds the key',
  );
  t.notOk(
    lines.some((l) => l.includes(wrongKey)),
    'nor a wrong key',
  );
});

t.test('a terminal gets one readable line per request', async (t) => {
  const { lines, destination } = capture();
  const log = createRequestLog({ destination, pretty: true });
  const { url, events } = await startTestServer(t, { observers: [log] });
  await postImage(url, await makeImage('png', 16, 12), {}, { 'X-Request-Id': 'tty-1' });
  await request(`${url}/nope`, { headers: { 'X-Request-Id': 'tty-2' } });
  await endsReached(events, 2);
  t.equal(lines.length, 2);
  t.match(lines[0], /^\d\d:\d\d:\d\d\.\d{3} POST \/v1\.0\/removebg 200 16x12 [\d.]+ ms in [\d.]+ (B|kB) out [\d.]+ (B|kB) acct_1 tty-1$/);
  t.match(lines[1], /^\d\d:\d\d:\d\d\.\d{3} GET unmatched 404 not_found [\d.]+ ms in 0 B out \d+ B 127\.0\.0\.1 tty-2$/);
});
