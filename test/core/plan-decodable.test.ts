// The worker does not sniff (the edges do: api/image-input.ts, lib/remove.ts): its plan takes what libvips reads as JPEG, PNG or WebP and refuses any other format by the decoder's name.
import t from 'tap';
import sharp from 'sharp';
import { prepareRemoval, type PipelineContext } from '../../src/worker/pipeline.js';

// The plan stage needs no model or session: a bare context is enough.
const ctx = { binding: undefined, model: { width: 8, height: 8 }, threads: 1 } as unknown as PipelineContext;
const base = () => sharp({ create: { width: 16, height: 12, channels: 3, background: '#808080' } });
const plan = (input: Uint8Array) => prepareRemoval(ctx, { input, options: { size: 'preview' } as never });

t.test('JPEG, PNG and WebP pass the plan', async (t) => {
  for (const [name, bytes] of [
    ['jpeg', await base().jpeg().toBuffer()],
    ['png', await base().png().toBuffer()],
    ['webp', await base().webp().toBuffer()],
  ] as const) {
    const res = await plan(new Uint8Array(bytes));
    t.equal(res.ok, true, name);
  }
});

t.test('another format libvips reads is invalid_file_type, named by the decoder', async (t) => {
  for (const [name, bytes] of [
    ['gif', await base().gif().toBuffer()],
    ['tiff', await base().tiff().toBuffer()],
  ] as const) {
    const res = await plan(new Uint8Array(bytes));
    t.same(res.ok ? res : { code: res.code, message: res.message }, { code: 'invalid_file_type', message: `Expected jpg/png/webp, received ${name}` }, name);
  }
});

t.test('bytes libvips cannot read are failed_to_read_image', async (t) => {
  for (const bytes of [Buffer.from('definitely not an image'), Buffer.alloc(0)]) {
    const res = await plan(new Uint8Array(bytes));
    t.equal(res.ok ? 'ok' : res.code, 'failed_to_read_image', JSON.stringify(bytes.toString().slice(0, 20)));
  }
});
