// SpareMasks (src/pool/spare-masks.ts): the staged pool's handed-back mask buffers, kept up to a
// limit and only at the model's mask size, taken in order for a batch, all given up at the idle release.
import t from 'tap';
import { SpareMasks } from '../../src/pool/spare-masks.js';

t.test('keeps nothing until it knows the mask size, then only buffers of that size, up to the limit', async (t) => {
  const spare = new SpareMasks(2);
  spare.put(new ArrayBuffer(16));
  t.same(spare.take(4), [], 'no size known yet: nothing kept');
  spare.sizeFrom(new Float32Array(4));
  spare.sizeFrom(new Float32Array(8)); // the first size stays
  const a = new ArrayBuffer(16),
    b = new ArrayBuffer(16),
    c = new ArrayBuffer(16);
  spare.put(new ArrayBuffer(32));
  spare.put(a);
  spare.put(b);
  spare.put(c);
  const taken = spare.take(3);
  t.equal(taken.length, 2, 'the other size refused, the third over the limit');
  t.equal(taken[0]!.buffer, a, 'in the order handed back');
  t.equal(taken[1]!.buffer, b);
  t.ok(
    taken.every((m) => m instanceof Float32Array && m.length === 4),
    'as Float32Arrays over the whole buffer',
  );
  t.same(spare.take(1), [], 'taken ones are gone');
});

t.test('take(n) leaves the rest; drain() gives up every one', async (t) => {
  const spare = new SpareMasks(4);
  spare.sizeFrom(new Float32Array(2));
  const bufs = [new ArrayBuffer(8), new ArrayBuffer(8), new ArrayBuffer(8)];
  for (const b of bufs) spare.put(b);
  t.equal(spare.take(1)[0]!.buffer, bufs[0]);
  t.same(spare.drain(), [bufs[1], bufs[2]], 'the two left, for the idle release');
  t.same(spare.drain(), [], 'none kept after');
  t.same(spare.take(2), []);
});
