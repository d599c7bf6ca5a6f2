// Multipart parts must keep their bytes alive: uWS.getParts (no longer used) returned external
// ArrayBuffers pointing into the body without keeping it alive, so a part read after the body was
// collected read freed memory (a crash, a 400 for a valid photo, or another client's upload). Run in
// a child with --expose-gc. And the photo goes to its worker without a copy where its body allows.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { isFilePart } from '../../src/http/fields.js';
import { parseForm } from '../../src/http/forms.js';
import sharp from 'sharp';
import { loadImage } from '../../src/api/image-input.js';
import { exclusiveBuffer, transferListOf } from '../../src/image/owned-bytes.js';
import { multipart } from '../helpers/http-client.js';

const CHILD = fileURLToPath(new URL('../helpers/forms-gc-child.js', import.meta.url));

t.test('parts survive the collection of their body', async (t) => {
  const r = spawnSync(process.execPath, ['--expose-gc', CHILD], { encoding: 'utf8', timeout: 120_000 });
  t.equal(r.signal, null, `child not killed by a signal (got ${r.signal}; stderr: ${r.stderr.slice(0, 400)})`);
  t.equal(r.status, 0, r.stderr.slice(0, 400));
  const line = r.stdout.trim().split('\n').pop() ?? '';
  t.same(JSON.parse(line || '{}'), { ok: true, parts: 8, mismatches: 0, filler: 64 });
});

t.test('a file part is a view on its body; the photo goes to a worker with an exclusive body whole, the background as a copy', async (t) => {
  const png = Buffer.from(
    await sharp({ create: { width: 4, height: 3, channels: 3, background: '#123456' } })
      .png()
      .toBuffer(),
  );
  const bg = Buffer.from(
    await sharp({ create: { width: 2, height: 2, channels: 3, background: '#abcdef' } })
      .png()
      .toBuffer(),
  );
  const { body: built, contentType } = multipart([
    { name: 'size', value: Buffer.from('full') },
    { name: 'image_file', value: png, filename: 'a.png' },
    { name: 'bg_image_file', value: bg, filename: 'b.png' },
  ]);
  const deps = { maxImageBytes: 1 << 20, fetchOptions: {} };
  const request = { signal: new AbortController().signal, holdInput: () => undefined };
  for (const exclusive of [true, false]) {
    // readBody's kind of body (exclusive), or any other (a Buffer.concat from the pool's slab).
    const body = exclusive ? exclusiveBuffer(built.length) : built;
    if (exclusive) built.copy(body);
    const f = parseForm(contentType, body);
    const image = f.get('image_file');
    const back = f.get('bg_image_file');
    if (!isFilePart(image) || !isFilePart(back)) throw new Error('no file parts');
    t.equal(image.data.buffer, body.buffer, 'the part is a view on the body');
    t.same(Buffer.from(image.data), png, 'holding exactly its bytes');
    const photo = await loadImage({ kind: 'bytes', field: 'image_file', data: image.data }, deps, request);
    const background = await loadImage({ kind: 'bytes', field: 'bg_image_file', data: back.data }, deps, request);
    t.equal(photo.bytes.buffer === body.buffer, exclusive, exclusive ? 'exclusive body: the photo is not copied' : 'other body: the photo is copied');
    t.not(background.bytes.buffer, body.buffer, 'the background always has a buffer of its own');
    t.same(Buffer.from(background.bytes), bg);
    // What the pool sends: the photo's list is the body's buffer (or the copy's); the worker gets the same bytes.
    const list = transferListOf(photo.bytes);
    t.same(list, [photo.bytes.buffer], 'the photo is listed for transfer');
    const moved = structuredClone({ input: photo.bytes, bg: background.bytes }, { transfer: list });
    t.same(Buffer.from(moved.input), png, 'the worker reads the photo');
    t.same(Buffer.from(moved.bg), bg, 'and the background');
    t.equal(photo.bytes.byteLength, 0, 'the photo is detached here after its transfer');
    t.equal(background.bytes.byteLength, bg.length, 'the background is not');
  }
  t.same(transferListOf(Buffer.from('pooled')), [], 'a view on the Buffer pool is never listed');
});
