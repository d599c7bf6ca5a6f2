// A ledger that answers over the network (PostgreSQL) makes the handler wait before it reads the body.
// With a fake ledger that waits a real timer on every call: uploads (framed and chunked) still arrive
// whole, and a request refused before its body was read leaves the keep-alive connection usable.
import t, { type Test } from 'tap';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeLedger } from '../helpers/fake-ledger.js';
import { startTestServer, KEY } from '../helpers/server.js';
import { makeImage } from '../helpers/images.js';
import { multipart, request } from '../helpers/http-client.js';
import type { AccountView, RateDecision, Slot } from '../../src/ledger/ledger.js';

class SlowLedger extends FakeLedger {
  override async authenticate(apiKey: string): Promise<AccountView | null> {
    await sleep(30);
    return super.authenticate(apiKey);
  }
  override async acquireSlot(account: AccountView): Promise<Slot | null> {
    await sleep(30);
    return super.acquireSlot(account);
  }
  override async takeRate(account: AccountView, units: number): Promise<RateDecision> {
    await sleep(30);
    return super.takeRate(account, units);
  }
}

async function server(t: Test) {
  const ledger = new SlowLedger();
  ledger.addAccount(KEY, { credits: 10 });
  return startTestServer<never, SlowLedger>(t, { ledger });
}

t.test('uploads arrive whole while the ledger is awaited (framed and chunked)', async (t) => {
  const srv = await server(t);
  const image = await makeImage('png', 300, 200);
  const { body, contentType } = multipart([
    { name: 'image_file', value: image, filename: 'a.png' },
    { name: 'size', value: 'full' },
  ]);
  for (const chunked of [false, true]) {
    const res = await request(`${srv.url}/v1.0/removebg`, { method: 'POST', body, chunked, headers: { 'X-Api-Key': KEY, 'Content-Type': contentType } });
    t.equal(res.status, 200, `${chunked ? 'chunked' : 'Content-Length'}: 200`);
  }
  t.equal(srv.ledger.balancesNow(srv.ledger.accountOf(KEY)!.id).total, 8, 'two credits charged');
});

t.test('refused before the body was read: the same keep-alive connection serves the next request', async (t) => {
  const srv = await server(t);
  const image = await makeImage('png', 64, 64);
  const { body, contentType } = multipart([{ name: 'image_file', value: image, filename: 'a.png' }]);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const post = (key: string) =>
    new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
      const req = http.request(
        `${srv.url}/v1.0/removebg`,
        { method: 'POST', agent, headers: { 'X-Api-Key': key, 'Content-Type': contentType, 'Content-Length': body.length } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  t.match(await post('wrong-key'), { status: 403 });
  t.same(await post(KEY), { status: 200, reused: true }, 'answered on the reused connection');
});
