// Multipart parts must own their bytes: uWS.getParts returns external ArrayBuffers pointing into the
// body without keeping it alive, so a part read after the body is collected reads freed memory
// (a crash, a 400 for a valid photo, or another client's upload). Run in a child with --expose-gc.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { isFilePart } from '../../src/http/fields.js';
import { parseForm } from '../../src/http/forms.js';
import { multipart } from '../helpers/http-client.js';

const CHILD = fileURLToPath(new URL('../helpers/forms-gc-child.js', import.meta.url));

t.test('parts survive the collection of their body', async (t) => {
  const r = spawnSync(process.execPath, ['--expose-gc', CHILD], { encoding: 'utf8', timeout: 120_000 });
  t.equal(r.signal, null, `child not killed by a signal (got ${r.signal}; stderr: ${r.stderr.slice(0, 400)})`);
  t.equal(r.status, 0, r.stderr.slice(0, 400));
  const line = r.stdout.trim().split('\n').pop() ?? '';
  t.same(JSON.parse(line || '{}'), { ok: true, parts: 8, mismatches: 0, filler: 64 });
});

t.test('each file part owns its whole, transferable ArrayBuffer', async (t) => {
  const img = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4, 5]);
  const { body, contentType } = multipart([
    { name: 'image_file', value: img, filename: 'a.png' },
    { name: 'bg_image_file', value: img, filename: 'b.png' },
  ]);
  const f = parseForm(contentType, body);
  for (const name of ['image_file', 'bg_image_file']) {
    const p = f.get(name);
    t.ok(isFilePart(p), name);
    if (!isFilePart(p)) continue;
    t.equal(p.data.byteOffset, 0, `${name}: starts its buffer`);
    t.equal(p.data.buffer.byteLength, img.length, `${name}: owns exactly its bytes`);
    t.not(p.data.buffer, body.buffer, `${name}: not a view on the body`);
    // Transfer detaches it without touching the body.
    const moved = structuredClone(p.data, { transfer: [p.data.buffer as ArrayBuffer] });
    t.same([...moved], [...img]);
    t.equal(p.data.byteLength, 0, `${name}: detached after transfer`);
  }
  t.same([...body.subarray(0, 2)], [...Buffer.from('--')], 'body intact');
});
