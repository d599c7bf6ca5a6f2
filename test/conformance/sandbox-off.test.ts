// --sandbox off (or CUTOUT_SANDBOX=off): POST /sandbox/v1.0/removebg is not routed, 404 like any unknown path.
import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { makeImage } from '../helpers/images.js';
import { SANDBOX, sandboxImage } from '../helpers/sandbox.js';
import { startTestServer } from '../helpers/server.js';

t.test('the flag and the variable turn it off; on is the default', async (t) => {
  t.equal(loadConfig([], {}).sandbox, true);
  t.equal(loadConfig(['--sandbox', 'off'], {}).sandbox, false);
  t.equal(loadConfig(['--sandbox=off'], {}).sandbox, false);
  t.equal(loadConfig([], { CUTOUT_SANDBOX: 'off' }).sandbox, false);
  t.equal(loadConfig(['--sandbox', 'on'], { CUTOUT_SANDBOX: 'off' }).sandbox, true, 'the flag wins over the variable');
  t.throws(() => loadConfig(['--sandbox', 'maybe'], {}), /Expected on or off for --sandbox but received 'maybe'/);
});

t.test('off: 404 not_found in the JSON envelope, and the pool never sees the task', async (t) => {
  const { url, pool } = await startTestServer(t, { config: { sandbox: false } });
  const res = await sandboxImage(url, await makeImage('png'));
  t.equal(res.status, 404);
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  t.same(res.json(), { errors: [{ title: 'Not found', code: 'not_found', detail: `No route for ${SANDBOX}` }] });
  t.ok(res.headers['x-request-id']);
  t.equal(pool.tasks.length, 0);
});
