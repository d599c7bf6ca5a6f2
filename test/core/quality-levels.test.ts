// Quality levels through the library: `fast` is the pipeline without edge stages, `balanced` the
// default, `best` the composite of the photo's matte fused with its mirror image's, byte for byte;
// a level that names none is refused.
import t from 'tap';
import { createRemover } from '../../src/lib/remove.js';
import { loadBinding, sessionOptionsFor } from '../../src/native/binding.js';
import { modelEntry } from '../../src/model/manifest.js';
import * as codec from '../../src/worker/codec.js';
import { fuseMirrored, mirrorRgb } from '../../src/worker/quality-level.js';
import { rgbaOf, syntheticFigure } from '../helpers/core-fixtures.js';

const remover = await createRemover({ workers: 1 });
t.teardown(() => remover.close());
// A subject off the centre line: its mirror image's matte differs, so fusing the two changes something.
const photo = await syntheticFigure(800, 563, 'png');
const png = async (options: Record<string, unknown>) => rgbaOf((await remover.remove(photo, { size: 'full', format: 'png', ...options })).data);

t.test('fast = no edge stages; balanced = the default', async (t) => {
  const fast = await png({ quality: 'fast' });
  const bare = await png({ refine: false, matting: false, decontaminate: false });
  t.ok(fast.data.equals(bare.data), 'fast: the same bytes as refine, matting and decontaminate off');
  const balanced = await png({ quality: 'balanced' });
  const plain = await png({});
  t.ok(balanced.data.equals(plain.data), 'balanced: the default');
  t.notOk(balanced.data.equals(fast.data), 'and not the same as fast');
});

t.test("best composites the matte fused with the mirrored photo's matte", async (t) => {
  const best = await png({ quality: 'best' });
  // The same steps by hand: the model input, its mirror image, the two mattes fused, composited.
  const binding = loadBinding();
  const model = modelEntry();
  const opts = sessionOptionsFor(model.entry, 2);
  const session = new binding.Session(model.path, opts);
  t.teardown(() => session.close());
  const input = await codec.decodeForModel(photo, 50_000_000, opts.width, opts.height, await codec.probe(photo));
  const first = Float32Array.from(session.infer(input.data, 3));
  mirrorRgb(input.data, opts.width, opts.height);
  fuseMirrored(first, session.infer(input.data, 3), opts.width, opts.height);
  const raw = await codec.decodeRgba(photo, 50_000_000, best.width, best.height, true);
  const rgba = new Uint8Array(raw.data);
  binding.compositeMask(rgba, best.width, best.height, first, opts.width, opts.height, { refine: true, matting: true, decontaminate: true, threads: 2 });
  t.ok(Buffer.from(rgba).equals(best.data), 'best: the fused matte, composited as by default');
  const balanced = await png({});
  let changed = 0;
  for (let i = 3; i < best.data.length; i += 4) if (best.data[i] !== balanced.data[i]) changed++;
  t.ok(changed > 1000, `best changes the matte (${changed} alpha values)`);
});

t.test('quality must name a level', async (t) => {
  for (const bad of ['ultra', 2, null]) {
    await t.rejects(
      remover.remove(photo, { quality: bad as never }),
      { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /^Expected one of fast, balanced, best for quality but received/ },
      String(bad),
    );
  }
  await t.rejects(createRemover({ quality: 'max' as never }), { code: 'ERR_INVALID_ARG_TYPE' });
});
