// A failed decode's detail is one line: libvips' warnings, each once, in order (image/decoder-message.ts).
import sharp from 'sharp';
import t from 'tap';
import { decoderMessage } from '../../src/image/decoder-message.js';

t.test("libvips' repeated warnings become one line, each once", async (t) => {
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#a37' } }).jpeg().toBuffer();
  const err = await sharp(jpeg.subarray(0, 200)).raw().toBuffer().then(() => null, (e: unknown) => e);
  t.ok(err instanceof Error && err.message.includes('\n'), 'libvips gave several lines');
  const line = decoderMessage(err);
  t.notMatch(line, /\n/);
  const parts = line.split('; ');
  t.equal(parts[0], 'Input buffer has corrupt header: VipsJpeg: premature end of JPEG image', 'the first line first');
  t.equal(new Set(parts).size, parts.length, `each warning once (${line})`);
  for (const l of (err as Error).message.split('\n')) t.ok(line.includes(l.trim()), `"${l}" kept`);
  t.equal(line.split('VipsJpeg: premature end of JPEG image').length, 2, 'the first warning, repeated on its own line, once');
});

t.test('edge cases: a trailing colon, nothing said, a very long text', async (t) => {
  t.equal(decoderMessage(new Error('Input buffer has corrupt header:')), 'Input buffer has corrupt header');
  t.equal(decoderMessage(new Error('a: b\nb\nc\na: b')), 'a: b; c');
  t.equal(decoderMessage(new Error('')), 'the decoder gave no reason');
  t.equal(decoderMessage('vipspng: libpng read error'), 'vipspng: libpng read error');
  const long = decoderMessage(new Error(Array.from({ length: 50 }, (_, i) => `warning number ${i}`).join('\n')));
  t.equal(long.length, 300);
  t.ok(long.endsWith('…') && long.startsWith('warning number 0; warning number 1; '));
});
