// A failed decode: one line of libvips' words for the operator (decoderMessage), one sentence of the
// client's for the error's detail (describeDecodeFailure); image/decoder-message.ts.
import sharp from 'sharp';
import t from 'tap';
import { decoderMessage, describeDecodeFailure } from '../../src/image/decoder-message.js';

t.test("libvips' repeated warnings become one line, each once", async (t) => {
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#a37' } })
    .jpeg()
    .toBuffer();
  const err = await sharp(jpeg.subarray(0, 200))
    .raw()
    .toBuffer()
    .then(
      () => null,
      (e: unknown) => e,
    );
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

/** libvips' error for these bytes: the metadata read, then the pixels (failOn 'warning', as a checksum error needs). */
async function vipsError(bytes: Uint8Array): Promise<Error> {
  const err = await sharp(bytes, { failOn: 'warning' })
    .raw()
    .toBuffer()
    .then(
      () => null,
      (e: unknown) => e,
    );
  if (!(err instanceof Error)) throw new Error('libvips read the bytes');
  return err;
}

t.test("libvips' words for common damage → the client's words, no decoder internals", async (t) => {
  const noise = Buffer.alloc(256 * 192 * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  const src = () => sharp(noise, { raw: { width: 256, height: 192, channels: 3 } });
  const jpeg = await src().jpeg().toBuffer();
  const png = await src().png().toBuffer();
  const webp = await src().webp().toBuffer();
  const badCrc = Buffer.from(png);
  badCrc[29]! ^= 0xff; // the IHDR chunk's checksum
  const badDqt = Buffer.concat([jpeg.subarray(0, 4), Buffer.alloc(100, 0x55), jpeg.subarray(104)]);
  const cases: Array<[string, Uint8Array, string, RegExp]> = [
    [
      'a JPEG cut in half',
      jpeg.subarray(0, jpeg.length >> 1),
      'The image file is truncated or corrupt (JPEG data ends early).',
      /VipsJpeg: premature end of JPEG image/,
    ],
    ['a JPEG cut inside its header', jpeg.subarray(0, 200), 'The image file is truncated or corrupt (JPEG data ends early).', /corrupt header/],
    ['a JPEG with damaged tables', badDqt, 'The JPEG file is corrupt (its header or image data is damaged).', /Bogus DQT/],
    [
      'a PNG cut in half',
      png.subarray(0, png.length >> 1),
      'The image file is truncated or corrupt (PNG data ends early or is damaged).',
      /vipspng: libpng read error/,
    ],
    ['a PNG cut inside its header', png.subarray(0, 40), "The PNG file's header is corrupt or incomplete.", /^Input buffer has corrupt header/],
    ['a PNG with a bad checksum', badCrc, 'The PNG file is corrupt (a checksum does not match its data).', /IHDR: CRC error/],
    [
      'a WebP cut in half',
      webp.subarray(0, webp.length >> 1),
      'The image file is truncated or corrupt (the WebP data could not be read).',
      /webp: unable to parse image/,
    ],
  ];
  for (const [name, bytes, words, internal] of cases) {
    const err = await vipsError(bytes);
    t.match(err.message, internal, `${name}: libvips says ${JSON.stringify(err.message.split('\n')[0])}`);
    const said = describeDecodeFailure(err, bytes);
    t.equal(said, words, name);
    t.notMatch(said, /vips|Vips|libpng|corrupt header:|Bogus|Huffman|DQT/, `${name}: no internals`);
    t.match(decoderMessage(err), internal, `${name}: the operator's line keeps libvips' words`);
  }
});

t.test('unsupported JPEG kinds, dimensionless images and unknown words', async (t) => {
  t.equal(
    describeDecodeFailure(new Error('VipsJpeg: Unsupported JPEG process: SOF type 0xc3')),
    'The JPEG file uses a kind of compression this service cannot read (e.g. arithmetic coding, lossless or 12-bit JPEG); save it again as an ordinary JPEG.',
  );
  t.equal(
    describeDecodeFailure(new Error('image has no dimensions'), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
    'The PNG file gives no width or height.',
  );
  t.equal(
    describeDecodeFailure(new Error('something new went wrong'), new Uint8Array([0xff, 0xd8, 0xff])),
    'The JPEG file could not be decoded: it may be corrupt, or use a feature this service cannot read.',
  );
  t.equal(
    describeDecodeFailure('libvips could not decode the image'),
    'The image file could not be decoded: it may be corrupt, or use a feature this service cannot read.',
  );
});
