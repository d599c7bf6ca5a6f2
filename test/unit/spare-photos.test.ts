// SparePhotos (src/pool/spare-photos.ts): the staged pool's handed-back photo memory, kept up to a
// count and a size each, the last one handed back going first, all given up at the idle release.
import t from 'tap';
import { OVERLAP_DECODE_MAX_BYTES } from '../../src/domain/removal.js';
import { SPARE_PHOTO_MAX_BYTES, SparePhotos } from '../../src/pool/spare-photos.js';

t.test('keeps up to its count, nothing over its size, nothing empty', async (t) => {
  const spare = new SparePhotos(2, 100);
  spare.put(new ArrayBuffer(101));
  spare.put(new ArrayBuffer(0));
  t.equal(spare.count, 0, 'too big and empty refused');
  const a = new ArrayBuffer(100),
    b = new ArrayBuffer(50),
    c = new ArrayBuffer(10);
  spare.put(a);
  spare.put(b);
  spare.put(c);
  t.equal(spare.count, 2, 'the third over the count');
  t.equal(spare.take(), b, 'the last handed back goes first');
  t.equal(spare.take(), a);
  t.equal(spare.take(), undefined, 'then none');
});

t.test('drain() gives up every one', async (t) => {
  const spare = new SparePhotos(4, 100);
  const bufs = [new ArrayBuffer(8), new ArrayBuffer(16)];
  for (const b of bufs) spare.put(b);
  const drained = spare.drain();
  t.equal(drained.length, 2);
  t.equal(drained[0], bufs[0]);
  t.equal(drained[1], bufs[1]);
  t.equal(spare.count, 0);
  t.equal(spare.take(), undefined);
});

t.test('by default keeps the memory of every photo stage 1 decodes once, up to 16 MP, and none bigger', async (t) => {
  t.equal(SPARE_PHOTO_MAX_BYTES, OVERLAP_DECODE_MAX_BYTES, 'the single decode bound');
  const spare = new SparePhotos(2);
  const twelveMp = new ArrayBuffer(4620 * 2598 * 4); // 48 MB: faulted in again per photo when not kept
  spare.put(twelveMp);
  spare.put(new ArrayBuffer(OVERLAP_DECODE_MAX_BYTES + 1));
  t.equal(spare.count, 1, 'the 12 MP photo kept, the one over 64 MiB not');
  t.equal(spare.take(), twelveMp);
});
