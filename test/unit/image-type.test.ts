// api/image-type.ts: magic-byte sniffing and the "received <x>" names.
import t from 'tap';
import { describeFileType, sniffImageType } from '../../src/image/image-type.js';

const b = (...xs: Array<number | string>) => Uint8Array.from(xs.flatMap((x) => (typeof x === 'string' ? [...Buffer.from(x, 'latin1')] : [x])));

t.test('accepted types', async (t) => {
  t.equal(sniffImageType(b(0xff, 0xd8, 0xff, 0xe0)), 'jpg');
  t.equal(sniffImageType(b(0x89, 'PNG\r\n', 0x1a, '\n')), 'png');
  t.equal(sniffImageType(b('RIFF', 0, 0, 0, 0, 'WEBPVP8 ')), 'webp');
  t.equal(sniffImageType(b('RIFF', 0, 0, 0, 0, 'WAVEfmt ')), null);
  t.equal(sniffImageType(b(0xff, 0xd8)), null, 'too short');
  t.equal(sniffImageType(new Uint8Array(0)), null);
});

t.test('names for refused types', async (t) => {
  t.equal(describeFileType(b('GIF89a')), 'gif');
  t.equal(describeFileType(b('BM', 0, 0)), 'bmp');
  t.equal(describeFileType(b('II*', 0)), 'tiff');
  t.equal(describeFileType(b('%PDF-1.7')), 'pdf');
  t.equal(describeFileType(b(0, 0, 0, 0x18, 'ftypmp42')), 'mp4');
  t.equal(describeFileType(b(0, 0, 0, 0x18, 'ftypheic')), 'heic');
  t.equal(describeFileType(b(0, 0, 0, 0x18, 'ftypavif')), 'avif');
  t.equal(describeFileType(b('RIFF', 0, 0, 0, 0, 'AVI LIST')), 'avi');
  t.equal(describeFileType(b('<svg xmlns="x">')), 'svg');
  t.equal(describeFileType(b('<!doctype html>')), 'html');
  t.equal(describeFileType(new Uint8Array(0)), 'an empty file');
  t.equal(describeFileType(b('hello'), 'text/plain'), 'a text file (text/plain)');
  t.equal(describeFileType(b('hello\n'), 'text/plain; charset=utf-8'), 'a text file (text/plain)');
  t.equal(describeFileType(b('{"a": 1}'), 'application/json'), 'a text file (application/json)');
  t.equal(describeFileType(b('hello'), 'application/octet-stream', 'notes.txt'), 'a text file (.txt)');
  t.equal(describeFileType(b('hello'), undefined, 'image_file'), 'a text file', 'a dummy filename is not an extension');
  t.equal(describeFileType(b('hello'), 'text/<script>'), 'a text file', 'never echoes odd text');
  t.equal(describeFileType(b(0, 1, 2, 3), 'application/x-thing'), 'a file declared as application/x-thing');
  t.equal(describeFileType(b(0, 1, 2, 3), 'application/octet-stream', 'data.bin'), 'a .bin file');
  t.equal(describeFileType(b(0, 1, 2, 3), undefined, 'image_file'), 'an unknown file type');
  t.equal(describeFileType(b(0xc3, 0x28, 'abc')), 'an unknown file type', 'bytes that are not UTF-8 are not text');
});

t.test('bytes declared as an accepted type that are not one (cut short, mislabelled)', async (t) => {
  t.equal(describeFileType(b(0x89, 'PN'), 'image/png'), 'an unknown file type (declared png)', 'a PNG cut inside its signature');
  t.equal(describeFileType(b('hello'), 'image/jpeg; charset=x'), 'an unknown file type (declared jpeg)');
  t.equal(describeFileType(b('hello'), undefined, 'photo.webp'), 'an unknown file type (declared webp)');
  t.equal(describeFileType(b('RIFF', 0, 0, 0, 0, 'WE')), 'riff', 'a WebP cut inside its fourcc is not "we"');
});
