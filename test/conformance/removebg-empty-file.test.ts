// A file upload of 0 bytes (`curl -F image_file=@empty.jpg`) was sent: 400 invalid_file_type saying
// the file is empty, nothing charged. An empty part without a file name (a text field's "", a browser
// form's file input left empty) stays "not given" (api/params/sources.ts readFile).
import t from 'tap';
import { firstError, postMultipart } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

const EMPTY = Buffer.alloc(0);

t.test("curl's shape: image_file=@empty.jpg", async (t) => {
  const { url, ledger, pool } = await startTestServer(t);
  const res = await postMultipart(url, [{ name: 'image_file', value: EMPTY, filename: 'empty.jpg', type: 'image/jpeg' }]);
  t.equal(res.status, 400);
  t.same(firstError(res), {
    title: 'Invalid file type',
    code: 'invalid_file_type',
    detail: "Expected jpg/png/webp, received an empty file ('empty.jpg' has 0 bytes; was it saved or copied completely?)",
  });
  t.equal(ledger.counts.reserve, 0, 'nothing reserved');
  t.equal(pool.tasks.length, 0, 'nothing sent to the pool');
});

t.test('an empty bg_image_file with a name: refused for that field', async (t) => {
  const { url } = await startTestServer(t);
  const res = await postMultipart(url, [
    { name: 'image_file', value: await makeImage('png'), filename: 'photo.png' },
    { name: 'bg_image_file', value: EMPTY, filename: 'bg.png' },
  ]);
  t.equal(res.status, 400);
  t.equal(firstError(res).code, 'invalid_file_type');
  t.equal(firstError(res).detail, "Expected jpg/png/webp for bg_image_file, received an empty file ('bg.png' has 0 bytes; was it saved or copied completely?)");
});

t.test('an empty part without a file name is not given', async (t) => {
  const { url, pool } = await startTestServer(t);
  // A browser's form with its file input left empty sends filename="" and no bytes.
  const blankInput = await postMultipart(url, [{ name: 'image_file', value: EMPTY, filename: '', type: 'application/octet-stream' }]);
  t.equal(blankInput.status, 400);
  t.equal(firstError(blankInput).code, 'missing_source');
  // …and beside another source it is ignored: the photo is removed.
  const withB64 = await postMultipart(url, [
    { name: 'image_file', value: EMPTY, filename: '' },
    { name: 'image_file_b64', value: Buffer.from(await makeImage('png')).toString('base64') },
  ]);
  t.equal(withB64.status, 200, withB64.status === 200 ? 'the file given in base64 is used' : withB64.text()); // the body only when it is an error (a PNG would put binary bytes in the log)
  t.equal(pool.tasks.length, 1);
  // A text field "" (the official CLI sends image_file_b64 as ""): not given, as documented.
  const emptyText = await postMultipart(url, [{ name: 'image_file_b64', value: '' }]);
  t.equal(firstError(emptyText).code, 'missing_source');
});
