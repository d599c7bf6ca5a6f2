// Non-JPG/PNG/WebP bytes → 400 invalid_file_type "Expected jpg/png/webp, received <type>", whatever the part claims.
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
  t.equal(firstError(junk).code, 'invalid_file_type');
  t.match(firstError(junk).detail, /^Expected jpg\/png\/webp, received /);
  t.equal(ledger.counts.reserve, 0, 'nothing reserved for a bad upload');
});
