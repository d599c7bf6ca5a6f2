// Image containers are recognised by their bytes, whatever name or type the client sent.
import t from 'tap';
import { describeBytes, sniffImage } from '../../src/image/sniff.js';

t.test('magic bytes', async (t) => {
  t.equal(sniffImage(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0])), 'jpeg');
  t.equal(sniffImage(Buffer.from('89504e470d0a1a0a0000', 'hex')), 'png');
  t.equal(sniffImage(Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 ', 'latin1')), 'webp');
  t.equal(sniffImage(Buffer.from('RIFF\x10\x00\x00\x00WAVEfmt ', 'latin1')), null, 'a RIFF that is not WebP');
  t.equal(sniffImage(Buffer.from('89504e47', 'hex')), null, 'truncated PNG signature');
  t.equal(sniffImage(new Uint8Array(0)), null);
  t.equal(describeBytes(Buffer.from('\x00\x00\x00\x18ftypmp42', 'latin1')), 'mp4/heic');
  t.equal(describeBytes(Buffer.from('GIF89a')), 'gif');
  t.equal(describeBytes(new Uint8Array(0)), 'an empty file');
  t.equal(describeBytes(Buffer.from('hello world')), 'unknown data');
});
