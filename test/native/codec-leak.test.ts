// Encoding through worker/codec.ts keeps native memory flat and returns bytes that transfer without a copy.
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import t from 'tap';
import { encodeJpeg, encodePng, encodeWebp, encodeZip, type Encoded, type Raw } from '../../src/worker/codec.js';
import type { LeakReport } from '../helpers/sharp-leak-child.js';

const CHILD = fileURLToPath(new URL('../helpers/sharp-leak-child.js', import.meta.url));
const MIB = 1024 * 1024;

// sharp 0.35.5's toUint8Array() never freed libvips' output: every result leaked its full size
// (docs/memory.md, "sharp's toUint8Array leak"). A child process keeps other tests' memory out of the
// reading.
t.test('300 encodes of a ~1.5 MB PNG keep RSS flat', async (t) => {
  const r = spawnSync(process.execPath, ['--expose-gc', CHILD], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  const m = JSON.parse(r.stdout) as LeakReport;
  t.ok(m.bytes > 1.25 * MIB, `each PNG is ${(m.bytes / MIB).toFixed(2)} MiB, enough for a leak to show`);
  const growth = m.after - m.before;
  const perCall = (growth / m.calls / MIB).toFixed(3);
  t.ok(growth < 100 * MIB, `RSS grew ${(growth / MIB).toFixed(0)} MiB over ${m.calls} encodes (${perCall} MiB each)`);
});

// worker.ts move()s `data.buffer` to the main thread: it must be a whole, unshared ArrayBuffer that
// postMessage detaches (a Buffer from sharp's toBuffer() is marked untransferable and silently cloned).
t.test('every encoder returns bytes that own a whole, transferable ArrayBuffer', async (t) => {
  const raw: Raw = { data: Buffer.alloc(32 * 24 * 4, 0x80), width: 32, height: 24, channels: 4 };
  const encoders: Array<[string, (r: Raw) => Promise<Encoded>]> = [
    ['png', encodePng],
    ['jpeg', encodeJpeg],
    ['webp', encodeWebp],
    ['zip', encodeZip],
  ];
  for (const [name, encode] of encoders) {
    const { data } = await encode(raw);
    const buffer = data.buffer;
    if (!(buffer instanceof ArrayBuffer)) {
      t.fail(`${name}: bytes sit in a SharedArrayBuffer`);
      continue;
    }
    t.equal(data.byteOffset, 0, `${name}: view starts at the buffer's start`);
    t.equal(data.byteLength, buffer.byteLength, `${name}: view spans the whole buffer`);
    const expected = Buffer.from(data);
    const { port1, port2 } = new MessageChannel();
    const received = once(port2, 'message');
    port1.postMessage(data, [buffer]);
    const [got] = (await received) as [Uint8Array];
    t.equal(buffer.byteLength, 0, `${name}: transferred (source detached), not cloned`);
    t.same(Buffer.from(got), expected, `${name}: bytes arrive intact`);
    port1.close();
    port2.close();
  }
});
