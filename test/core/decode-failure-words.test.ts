// A photo that does not decode, through the worker's own decoders (the addon's and sharp's): the
// failure's message is the client's words, its cause libvips' own for the request log (pipeline.ts).
import t from 'tap';
import sharp from 'sharp';
import { DEFAULT_OPTIONS, DEFAULT_QUALITY, type RemoveOptions } from '../../src/domain/removal.js';
import { loadBinding } from '../../src/native/binding.js';
import { prepareRemoval, type PipelineContext } from '../../src/worker/pipeline.js';

const ctx: PipelineContext = { binding: loadBinding(), model: { width: 1024, height: 1024 }, threads: 1, quality: DEFAULT_QUALITY };
const options: RemoveOptions = { ...DEFAULT_OPTIONS, size: 'full' };

t.test('truncated JPEG, PNG and WebP: user words in the message, the decoder in the cause', async (t) => {
  const noise = Buffer.alloc(640 * 480 * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  const src = () => sharp(noise, { raw: { width: 640, height: 480, channels: 3 } });
  const cut = (b: Buffer) => new Uint8Array(b.subarray(0, Math.floor(b.length * 0.6)));
  const cases: Array<[string, Uint8Array, string]> = [
    ['jpeg', cut(await src().jpeg().toBuffer()), 'The image file is truncated or corrupt (JPEG data ends early).'],
    ['progressive jpeg', cut(await src().jpeg({ progressive: true }).toBuffer()), 'The image file is truncated or corrupt (JPEG data ends early).'],
    ['png', cut(await src().png().toBuffer()), 'The image file is truncated or corrupt (PNG data ends early or is damaged).'],
    ['webp', cut(await src().webp().toBuffer()), 'The image file is truncated or corrupt (the WebP data could not be read).'],
  ];
  for (const [name, input, words] of cases) {
    const r = await prepareRemoval(ctx, { input, options });
    if (r.ok) {
      t.fail(`${name}: decoded`);
      continue;
    }
    t.equal(r.code, 'failed_to_read_image', name);
    t.equal(r.message, words, name);
    t.notMatch(r.message, /vips|Vips|libpng|corrupt header:/, `${name}: no decoder internals`);
    t.ok(r.cause && r.cause !== r.message, `${name}: the operator's cause: ${r.cause}`);
  }
});
