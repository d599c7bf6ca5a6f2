// planRemoval refuses a photo or a background image whose decode would hold more than MAX_DECODE_BYTES (or the
// decode ceiling a memory limit leaves, pool/memory-fit.ts), from the header alone, before any pixel is decoded.
import t from 'tap';
import sharp from 'sharp';
import { fromRemoveFailure } from '../../src/api/errors.js';
import { DEFAULT_OPTIONS } from '../../src/domain/removal.js';
import { prepareRemoval, type PipelineContext } from '../../src/worker/pipeline.js';
import { pngHeaderClaiming } from '../helpers/images.js';

// The plan stage needs no model or session: a bare context is enough.
// No addon: the plan refuses before any decode. A source held whole first makes room (pipeline.ts's
// holdDecodeMemory hands the kept blocks back): counted here.
const madeRoom = { blocks: 0, trims: 0 };
const binding = { releaseScratch: () => (madeRoom.blocks++, 0), trimMemory: () => (madeRoom.trims++, false) };
const ctx = { binding, model: { width: 1024, height: 1024 }, threads: 1 } as unknown as PipelineContext;
const sixteenBitInterlaced = (w: number, h: number) => new Uint8Array(pngHeaderClaiming(w, h, { bitDepth: 16, colourType: 6, interlace: 1 }));

t.test('a 7000x7000 interlaced 16-bit RGBA PNG is refused at every size: 400 resolution_too_high', async (t) => {
  for (const size of ['preview', 'full'] as const) {
    const res = await prepareRemoval(ctx, { input: sixteenBitInterlaced(7000, 7000), options: { ...DEFAULT_OPTIONS, size } });
    t.same(res.ok ? res : { ok: false, code: res.code }, { ok: false, code: 'resolution_too_high' }, size);
    if (res.ok) continue;
    t.match(res.message, /^Input image needs (\d+) MB to decode \(7000x7000 interlaced 16-bit PNG\), maximum supported is 320 MB$/);
    t.ok(Number(/needs (\d+) MB/.exec(res.message)![1]) >= 374, 'at least its 374 MB frame');
    const api = fromRemoveFailure(res.code, res.message);
    t.same([api.status, api.code], [400, 'resolution_too_high']);
  }
});

t.test('the same pixels streamed (not interlaced, or 8-bit) pass the budget', async (t) => {
  for (const input of [pngHeaderClaiming(7000, 7000, { bitDepth: 16 }), pngHeaderClaiming(7000, 7000, { interlace: 1, colourType: 2 })]) {
    const res = await prepareRemoval(ctx, { input: new Uint8Array(input), options: { ...DEFAULT_OPTIONS, size: 'preview' } });
    // The header-only file then fails to decode: what matters is that the plan let it through.
    t.not(res.ok ? 'ok' : res.code, 'resolution_too_high');
  }
  t.equal(madeRoom.blocks, 2, 'each held its source whole (over 128 MB): the kept blocks went back before its decode');
  t.equal(madeRoom.trims, 2, "and malloc's free pages");
});

t.test('a background image over the budget is refused before the photo is worked on: failed_bg_image', async (t) => {
  const input = new Uint8Array(
    await sharp({ create: { width: 64, height: 48, channels: 3, background: '#888' } })
      .png()
      .toBuffer(),
  );
  const res = await prepareRemoval(ctx, { input, options: { ...DEFAULT_OPTIONS, size: 'preview', bgImage: sixteenBitInterlaced(7000, 7000) } });
  t.same(res.ok ? res : { ok: false, code: res.code }, { ok: false, code: 'failed_bg_image' });
  if (!res.ok) t.match(res.message, /^Background image needs \d+ MB to decode \(7000x7000 interlaced 16-bit PNG\), maximum supported is 320 MB$/);
  const huge = await prepareRemoval(ctx, {
    input,
    options: { ...DEFAULT_OPTIONS, size: 'preview', bgImage: new Uint8Array(pngHeaderClaiming(10_000, 10_000)) },
  });
  t.same(huge.ok ? huge : { ok: false, code: huge.code, message: huge.message }, {
    ok: false,
    code: 'failed_bg_image',
    message: 'Background image has 100 megapixels, maximum supported is 50 megapixels',
  });
});

t.test("the plan carries each decode's estimate", async (t) => {
  const input = new Uint8Array(
    await sharp({ create: { width: 3000, height: 2000, channels: 3, background: '#888' } })
      .jpeg()
      .toBuffer(),
  );
  const res = await prepareRemoval(ctx, { input, options: { ...DEFAULT_OPTIONS, size: 'preview' } });
  t.equal(res.ok, true);
  if (!res.ok) return;
  const { model, output, background } = res.plan.decodeBytes;
  t.ok(model >= 1024 * 1024 * 3 && output >= res.plan.width * res.plan.height * 4, `model ${model} B, output ${output} B`);
  t.equal(background, 0);
  t.same(res.plan.working && [res.plan.working.width, res.plan.working.height], [1536, 1024], 'working size: covers 1024² and the preview, aspect kept');
});

t.test('under a memory limit the decode ceiling is the most one photo may need: a photo over it is refused, one under passes', async (t) => {
  const { DecodeMemory } = await import('../../src/process/decode-memory.js');
  const limited = { ...ctx, decodeMemory: DecodeMemory.create(1, 150 * 1024 * 1024) } as PipelineContext;
  // Interlaced 16-bit RGBA, decoded whole: 4000x4000 needs ~241 MB (under 320), 2000x2000 under 150.
  const over = await prepareRemoval(limited, { input: sixteenBitInterlaced(4000, 4000), options: { ...DEFAULT_OPTIONS, size: 'preview' } });
  t.same(over.ok ? over : { ok: false, code: over.code }, { ok: false, code: 'resolution_too_high' });
  if (!over.ok) t.match(over.message, /^Input image needs \d+ MB to decode \(4000x4000 interlaced 16-bit PNG\), maximum supported is 150 MB$/);
  const under = await prepareRemoval(limited, { input: sixteenBitInterlaced(2000, 2000), options: { ...DEFAULT_OPTIONS, size: 'preview' } });
  t.not(under.ok ? 'ok' : under.code, 'resolution_too_high', 'within the ceiling');
  const unlimited = await prepareRemoval(ctx, { input: sixteenBitInterlaced(4000, 4000), options: { ...DEFAULT_OPTIONS, size: 'preview' } });
  t.not(unlimited.ok ? 'ok' : unlimited.code, 'resolution_too_high', 'the same photo without a limit: under 320 MB, let through');
});
