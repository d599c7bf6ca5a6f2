// planRemoval refuses a side over MAX_INPUT_SIDE (the addon's 65536 px) as resolution_too_high, before any decode.
import t from 'tap';
import sharp from 'sharp';
import { MAX_INPUT_SIDE } from '../../src/domain/removal.js';
import { prepareRemoval, type PipelineContext } from '../../src/worker/pipeline.js';

// The plan stage needs no model or session: a bare context is enough.
const ctx = { binding: undefined, model: { width: 1024, height: 1024 }, threads: 1 } as unknown as PipelineContext;
const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#808080' } })
    .png()
    .toBuffer();

t.test('a 70000x1 and a 1x70000 image are resolution_too_high', async (t) => {
  for (const [w, h] of [
    [70_000, 1],
    [1, 70_000],
    [MAX_INPUT_SIDE + 1, 2],
  ] as const) {
    const input = new Uint8Array(await png(w, h));
    const res = await prepareRemoval(ctx, { input, options: { size: 'preview' } as never });
    t.same(res.ok ? res : { ok: res.ok, code: res.code }, { ok: false, code: 'resolution_too_high' }, `${w}x${h}`);
    if (!res.ok) t.equal(res.message, `Input image is ${w}x${h} pixels, maximum supported side is ${MAX_INPUT_SIDE} pixels`);
  }
});

t.test('a side of exactly MAX_INPUT_SIDE passes the plan', async (t) => {
  const input = new Uint8Array(await png(MAX_INPUT_SIDE, 1));
  const res = await prepareRemoval(ctx, { input, options: { size: 'preview' } as never });
  t.equal(res.ok, true);
  t.same(res.ok && [res.plan.inputWidth, res.plan.inputHeight], [MAX_INPUT_SIDE, 1]);
});
