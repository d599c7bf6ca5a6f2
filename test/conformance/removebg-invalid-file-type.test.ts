// Non-JPG/PNG/WebP bytes → 400 invalid_file_type "Expected jpg/png/webp, received <type>", whatever the part claims
// (a text file is named so, with the type its part declared: 'a text file (text/plain)').
import t from 'tap';
import { firstError, postMultipart } from '../helpers/api.js';
import { startTestServer } from '../helpers/server.js';

t.test('gif, mp4, text and random bytes', async (t) => {
  const { url, ledger } = await startTestServer(t);
  const cases: Array<[Buffer, string]> = [
    [Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), 'gif'],
    [Buffer.from('\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00', 'latin1'), 'mp4'],
    [Buffer.from('%PDF-1.4 hello'), 'pdf'],
  ];
  for (const [bytes, name] of cases) {
    const res = await postMultipart(url, [{ name: 'image_file', value: bytes, filename: 'image_file', type: 'image/png' }]);
    t.equal(res.status, 400, name);
    const e = firstError(res);
    t.equal(e.code, 'invalid_file_type');
    t.equal(e.detail, `Expected jpg/png/webp, received ${name}`);
  }
  const junk = await postMultipart(url, [{ name: 'image_file', value: Buffer.from('just some text'), filename: 'notes.txt' }]);
  t.equal(junk.status, 400);
  t.equal(firstError(junk).code, 'invalid_file_type');
  t.equal(firstError(junk).detail, 'Expected jpg/png/webp, received a text file (.txt)');
  // curl -F image_file=@notes.txt declares it text/plain.
  const plain = await postMultipart(url, [{ name: 'image_file', value: Buffer.from('just some text\n'), filename: 'notes.txt', type: 'text/plain' }]);
  t.equal(plain.status, 400);
  t.equal(firstError(plain).detail, 'Expected jpg/png/webp, received a text file (text/plain)');
  t.equal(ledger.counts.reserve, 0, 'nothing reserved for a bad upload');
});
