// PhotoBuffer (src/worker/photo-buffer.ts): a CPU worker's photo memory, kept from one removal to the
// next, grown to fit, never over its bound, forgotten at the idle release.
import t from 'tap';
import { PhotoBuffer } from '../../src/worker/photo-buffer.js';

t.test('grows to fit, then hands the same memory to smaller photos', async (t) => {
  const kept = new PhotoBuffer(1000);
  t.equal(kept.bytes, 0, 'nothing kept at first');
  const a = kept.take(400)!;
  t.equal(a.length, 400);
  t.equal(kept.bytes, 400);
  a.fill(7);
  const b = kept.take(300)!;
  t.equal(b.length, 300, 'exactly the bytes asked for');
  t.equal(b.buffer, a.buffer, 'a smaller photo: the same memory');
  t.equal(b.byteOffset, 0);
  t.equal(b[0], 7, 'not cleared: the decode writes every byte');
  const c = kept.take(600)!;
  t.not(c.buffer, a.buffer, 'a larger photo: new memory');
  t.equal(kept.bytes, 600, 'the old memory let go');
  t.equal(kept.take(600)!.buffer, c.buffer, 'then kept');
});

t.test('over its bound: nothing, and what is kept stays', async (t) => {
  const kept = new PhotoBuffer(1000);
  const a = kept.take(1000)!;
  t.equal(kept.take(1001), undefined, 'a photo over the bound gets memory of its own elsewhere');
  t.equal(kept.bytes, 1000);
  t.equal(kept.take(10)!.buffer, a.buffer);
});

t.test('drop() forgets the memory; the next photo starts afresh', async (t) => {
  const kept = new PhotoBuffer(1000);
  const a = kept.take(500)!;
  kept.drop();
  t.equal(kept.bytes, 0);
  const b = kept.take(100)!;
  t.not(b.buffer, a.buffer);
  t.equal(kept.bytes, 100, 'sized to the photo that came');
});
