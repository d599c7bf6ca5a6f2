// http/forms.ts: multipart (uWS.getParts), JSON, urlencoded, as remove.bg clients send them, into http's own field types.
import t from 'tap';
import { isFilePart } from '../../src/http/fields.js';
import { parseContentType } from '../../src/http/content-type.js';
import { parseForm } from '../../src/http/forms.js';
import { multipart } from '../helpers/http-client.js';

const bytes = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 1, 2, 3]);

t.test('multipart: files and text fields; python-requests dummy filename, no part type', async (t) => {
  const { body, contentType } = multipart([
    { name: 'image_file', value: bytes, filename: 'image_file' },
    { name: 'size', value: 'auto' },
    { name: 'bg_image_file', value: bytes, filename: 'bg.jpg', type: 'image/jpeg' },
  ]);
  const f = parseForm(contentType, body);
  const img = f.get('image_file');
  t.ok(isFilePart(img));
  t.same(isFilePart(img) && [...img.data], [...bytes]);
  t.equal(isFilePart(img) && img.type, undefined);
  t.equal(f.get('size'), 'auto');
  const bg = f.get('bg_image_file');
  t.equal(isFilePart(bg) && bg.type, 'image/jpeg');
});

t.test('multipart: image_file part without filename is still binary', async (t) => {
  const { body, contentType } = multipart([{ name: 'image_file', value: bytes }]);
  t.ok(isFilePart(parseForm(contentType, body).get('image_file')));
});

t.test('multipart: quoted boundary and odd header case', async (t) => {
  const { body } = multipart([{ name: 'size', value: 'full' }], 'XyZ123');
  t.equal(parseForm('Multipart/Form-Data; boundary="XyZ123"', body).get('size'), 'full');
});

t.test('multipart: malformed → 400 invalid_request_body', async (t) => {
  const { body } = multipart([{ name: 'size', value: 'full' }], 'right');
  t.throws(() => parseForm('multipart/form-data; boundary=wrong', body), { status: 400, code: 'invalid_request_body' });
  t.throws(() => parseForm('multipart/form-data', body), { status: 400, code: 'invalid_request_body' });
  t.throws(() => parseForm('multipart/form-data; boundary=right', body.subarray(0, 30)), { status: 400, code: 'invalid_request_body' });
});

t.test('multipart: field names and filenames are read by one parser, whatever getParts makes of the disposition', async (t) => {
  const form = (disposition: string, value = 'v') => Buffer.from(`--x\r\nContent-Disposition: ${disposition}\r\n\r\n${value}\r\n--x--\r\n`, 'utf8');
  const read = (disposition: string) => parseForm('multipart/form-data; boundary=x', form(disposition));
  // getParts gives these parts no name (undefined): a field keyed `undefined` reached the params and a 500 (fuzz-http seed 101).
  t.same([...read('Form-Data; NAME="type_level"').keys()], ['type_level'], 'parameter names in any case (RFC 7578)');
  t.same([...read('form-data;sition: form-data; name="type_level"').keys()], ['type_level'], 'what is not name=value is passed over');
  t.same([...read('form-data; name = "size"').keys()], ['size']);
  // Browsers and curl send `"` as %22 and backslashes as they are (WHATWG form encoding).
  const win = read('form-data; name="image_file"; filename="C:\\photos\\cat.jpg"').get('image_file');
  t.equal(isFilePart(win) && win.filename, 'C:\\photos\\cat.jpg', 'a Windows path keeps its backslashes');
  t.same([...read('form-data; name="a\\"; filename="x"').keys()], ['a\\']);
  t.same([...read('form-data; name="a;b"').keys()], ['a;b'], 'a semicolon inside quotes');
  t.ok(isFilePart(read('form-data; name="notes"; filename*=UTF-8\'\'n.txt; filename="n.txt"').get('notes')), 'a filename makes a file part');
  for (const repeated of [
    'form-data; name="size"; name="image_file"',
    'form-data; NAME="a"; name="b"',
    'form-data; name="image_file"; filename="a.jpg"; FILENAME="b.png"',
  ]) {
    t.throws(() => read(repeated), { status: 400, code: 'invalid_request_body', detail: /Content-Disposition gives (name|filename) more than once/ }, repeated);
  }
  t.throws(() => read('form-data; filename="x.png"'), { status: 400, code: 'invalid_request_body', detail: /has no field name/ });
});

t.test('JSON: scalars and booleans kept', async (t) => {
  const f = parseForm('application/json; charset=utf-8', Buffer.from('{"image_file_b64":"AAA","crop":true,"size":""}'));
  t.equal(f.get('crop'), true);
  t.equal(f.get('size'), '');
  t.throws(() => parseForm('application/json', Buffer.from('{"a":')), { code: 'invalid_request_body' });
  t.throws(() => parseForm('application/json', Buffer.from('[1,2]')), { code: 'invalid_request_body' });
  t.throws(() => parseForm('application/json', Buffer.from('"str"')), { code: 'invalid_request_body' });
});

t.test('urlencoded, including base64 with + and /', async (t) => {
  const b64 = 'ab+c/d==';
  const f = parseForm('application/x-www-form-urlencoded', Buffer.from(`image_file_b64=${encodeURIComponent(b64)}&size=preview&crop=`));
  t.equal(f.get('image_file_b64'), b64);
  t.equal(f.get('crop'), '');
});

t.test('empty body is no fields, whatever the type', async (t) => {
  t.equal(parseForm('application/json', new Uint8Array(0)).size, 0);
  t.equal(parseForm(undefined, new Uint8Array(0)).size, 0);
});

t.test('unsupported type', async (t) => {
  t.throws(() => parseForm('text/plain', Buffer.from('hi')), { status: 400, code: 'invalid_request_body' });
  t.throws(() => parseForm(undefined, Buffer.from('hi')), { status: 400, code: 'invalid_request_body' });
});

t.test('parseContentType', async (t) => {
  const ct = parseContentType('multipart/form-data; charset=UTF-8; boundary="a b\\"c"');
  t.equal(ct.essence, 'multipart/form-data');
  t.equal(ct.params.get('boundary'), 'a b"c');
  t.equal(ct.params.get('charset'), 'UTF-8');
  t.equal(parseContentType(undefined).essence, '');
});
