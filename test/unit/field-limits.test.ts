// http/field-limits.ts, then http/forms.ts, as RequestContext.readFields reads a body: a body at the
// field limit parses as it always did, one field more is 400 too_many_fields; JSON nesting past its
// limit is 400 invalid_request_body; what is inside JSON strings and multipart data never counts.
// Every body is counted whole and as it would arrive in chunks of 1, 3 and 1000 bytes: same verdict.
import t from 'tap';
import type { RawFields } from '../../src/http/fields.js';
import { isFilePart } from '../../src/http/fields.js';
import { fieldCounter, MAX_FIELDS, MAX_JSON_DEPTH } from '../../src/http/field-limits.js';
import { parseForm } from '../../src/http/forms.js';

/** Counted as it arrives, `step` bytes at a time, then parsed. */
function readInSteps(type: string, body: Buffer, step: number): RawFields {
  const counter = fieldCounter(type);
  for (let end = Math.min(step, body.length); end > 0; end = end === body.length ? 0 : Math.min(end + step, body.length)) counter?.scan(body.subarray(0, end));
  return parseForm(type, body);
}

/** The fields, or the error, of `body` read whole; throws if any chunking gives another verdict. */
function form(type: string, body: Buffer): RawFields {
  const outcomes = [body.length, 1, 3, 1000].map((step) => {
    try {
      return { fields: readInSteps(type, body, step) };
    } catch (err) {
      return { err: err as Error };
    }
  });
  const [whole, ...chunked] = outcomes;
  for (const o of chunked) {
    if (JSON.stringify(o.err) !== JSON.stringify(whole!.err) || (o.fields === undefined) !== (whole!.fields === undefined)) {
      throw new Error(`counted in chunks: ${o.err?.message ?? 'parsed'}; whole: ${whole!.err?.message ?? 'parsed'}`);
    }
  }
  if (whole!.err) throw whole!.err;
  return whole!.fields!;
}

const JSON_TYPE = 'application/json';
const FORM_TYPE = 'application/x-www-form-urlencoded';
const tooMany = (what: string) => ({
  status: 400,
  code: 'too_many_fields',
  title: 'Too many fields',
  detail: `The request body has more than ${MAX_FIELDS} ${what}.`,
});
const json = (text: string) => form(JSON_TYPE, Buffer.from(text, 'utf8'));
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

t.test('limits well above what remove.bg clients send', async (t) => {
  t.equal(MAX_FIELDS, 1000);
  t.equal(MAX_JSON_DEPTH, 32);
});

t.test('a counter for each body type forms.ts parses, none for those it refuses unread', async (t) => {
  const many = (type: string, text: string) => t.throws(() => fieldCounter(type)!.scan(Buffer.from(text)), { code: 'too_many_fields' }, type);
  many('application/vnd.api+json', `[${'0,'.repeat(MAX_FIELDS)}0]`);
  many('Application/JSON; charset=utf-8', `[${'0,'.repeat(MAX_FIELDS)}0]`);
  many('application/x-www-form-urlencoded; charset=utf-8', 'a&'.repeat(MAX_FIELDS));
  many('multipart/form-data; boundary="b"', '--b\r\n'.repeat(MAX_FIELDS + 1));
  for (const type of [undefined, '', 'text/plain', 'multipart/form-data', `multipart/form-data; boundary=${'b'.repeat(71)}`]) {
    t.equal(fieldCounter(type), undefined, String(type));
  }
});

t.test('multipart: the limit in parts passes, one more is refused', async (t) => {
  const B = 'XyZ';
  const body = (n: number, data: (i: number) => string, extra = '') =>
    Buffer.from(
      `${range(n)
        .map((i) => `--${B}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\n${data(i)}\r\n`)
        .join('')}--${B}--\r\n${extra}`,
      'latin1',
    );
  const read = (b: Buffer) => form(`multipart/form-data; boundary=${B}`, b);
  const atLimit = read(body(MAX_FIELDS, (i) => `v${i}`));
  t.equal(atLimit.size, MAX_FIELDS);
  t.equal(atLimit.get('f0'), 'v0');
  t.equal(atLimit.get(`f${MAX_FIELDS - 1}`), `v${MAX_FIELDS - 1}`);
  t.throws(() => read(body(MAX_FIELDS + 1, (i) => `v${i}`)), tooMany('multipart parts'));

  // Data that looks like boundary lines but is not one (mid-line, after a bare LF, a prefix of the
  // boundary after CRLF) is data: the framing reads it so, and it counts for nothing.
  const lookalike = (i: number) => `a--${B}\r\n\n--${B}--\r\nx--${B}\r\n--${B.slice(0, 2)}\r\n-${i}`;
  const tricky = read(body(MAX_FIELDS, lookalike));
  t.equal(tricky.size, MAX_FIELDS);
  t.equal(tricky.get('f7'), lookalike(7), 'the data as sent');
  t.throws(() => read(body(MAX_FIELDS + 1, lookalike)), tooMany('multipart parts'));

  // After the closing boundary is an epilogue, ignored: boundary lines there are not parts.
  const epilogue = range(2 * MAX_FIELDS)
    .map(() => `--${B}\r\nContent-Disposition: form-data; name="x"\r\n\r\n\r\n`)
    .join('');
  t.equal(read(body(MAX_FIELDS, () => 'v', epilogue)).size, MAX_FIELDS);
  // A preamble before the first boundary line is not looked into either.
  const preambled = Buffer.concat([Buffer.from(`preamble --${B} and --${B}x\r\n`), body(MAX_FIELDS, () => 'v')]);
  t.equal(read(preambled).size, MAX_FIELDS);
});

t.test('multipart: a file part with boundary-like bytes is kept whole', async (t) => {
  const B = 'b0';
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from(`\n--${B}\r\n-${B}--\r\nx--${B}--`.repeat(2000), 'latin1')]);
  const fields = range(MAX_FIELDS - 1)
    .map((i) => `--${B}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nx\r\n`)
    .join('');
  const body = Buffer.concat([
    Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="image_file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    png,
    Buffer.from(`\r\n${fields}--${B}--\r\n`),
  ]);
  const f = form(`multipart/form-data; boundary=${B}`, body);
  t.equal(f.size, MAX_FIELDS);
  const img = f.get('image_file');
  t.ok(isFilePart(img) && Buffer.compare(Buffer.from(img.data), png) === 0, 'the image bytes as sent');
});

t.test('urlencoded: the limit in pairs passes, one more is refused; every & counts', async (t) => {
  const body = (n: number) =>
    Buffer.from(
      range(n)
        .map((i) => `k${i}=v%20${i}`)
        .join('&'),
    );
  const atLimit = form(FORM_TYPE, body(MAX_FIELDS));
  t.equal(atLimit.size, MAX_FIELDS);
  t.equal(atLimit.get(`k${MAX_FIELDS - 1}`), `v ${MAX_FIELDS - 1}`);
  t.throws(() => form(FORM_TYPE, body(MAX_FIELDS + 1)), tooMany('form fields'));
  t.same(
    [...form(FORM_TYPE, Buffer.from('a=1&&b=2&')).entries()],
    [
      ['a', '1'],
      ['b', '2'],
    ],
    'empty pairs skipped, as before',
  );
  t.throws(() => form(FORM_TYPE, Buffer.from('&'.repeat(MAX_FIELDS))), tooMany('form fields'), 'empty pairs count');
  t.equal(form(FORM_TYPE, Buffer.from(`a=${'%26'.repeat(5000)}`)).get('a'), '&'.repeat(5000), 'an escaped & is not a separator');
});

t.test('JSON: the limit in keys passes, one more is refused; keys at every level count', async (t) => {
  const flat = (n: number) =>
    `{${range(n)
      .map((i) => `"k${i}":${i}`)
      .join(',')}}`;
  const text = flat(MAX_FIELDS);
  t.same(Object.fromEntries(json(text)), JSON.parse(text), 'parsed as JSON.parse reads it');
  t.throws(() => json(flat(MAX_FIELDS + 1)), tooMany('JSON keys and array elements'));
  // One top-level key holding the rest: as many keys in all.
  const nested = (n: number) =>
    `{"shadow_type":{${range(n - 1)
      .map((i) => `"c${i}":"car"`)
      .join(', ')}}}`;
  t.equal(json(nested(MAX_FIELDS)).size, 1);
  t.throws(() => json(nested(MAX_FIELDS + 1)), tooMany('JSON keys and array elements'));
  const spaced = `{ \n\t${range(MAX_FIELDS)
    .map((i) => `"k${i}" :\r\n ${i}`)
    .join(' , ')} }`;
  t.equal(json(spaced).size, MAX_FIELDS, 'whitespace anywhere');
});

t.test('JSON: array elements count, at any depth; empty arrays do not', async (t) => {
  const arr = (n: number) => `{"a":[${range(n).join(',')}],"b":[],"c":[[]]}`;
  // Three keys, the inner empty array of "c" one element: MAX_FIELDS - 4 numbers fill the limit.
  t.same(json(arr(MAX_FIELDS - 4)).get('a'), range(MAX_FIELDS - 4));
  t.throws(() => json(arr(MAX_FIELDS - 3)), tooMany('JSON keys and array elements'));
  t.throws(() => json(`{"a":[${'[],'.repeat(MAX_FIELDS)}[]]}`), tooMany('JSON keys and array elements'), 'arrays of arrays');
  t.throws(() => json(`{"a":[${'"x",'.repeat(MAX_FIELDS)}"x"]}`), tooMany('JSON keys and array elements'), 'arrays of strings');
  t.throws(() => json(`{"a":[${'{},'.repeat(MAX_FIELDS)}{}]}`), tooMany('JSON keys and array elements'), 'arrays of objects');
});

t.test('JSON: nesting to the depth limit passes, one level more is invalid_request_body', async (t) => {
  const deep = (levels: number) => `{"a":${'['.repeat(levels - 1)}1${']'.repeat(levels - 1)}}`;
  let inner: unknown = 1;
  for (let i = 0; i < MAX_JSON_DEPTH - 1; i++) inner = [inner];
  t.same(json(deep(MAX_JSON_DEPTH)).get('a'), inner);
  const refused = { status: 400, code: 'invalid_request_body', detail: `The JSON body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep.` };
  t.throws(() => json(deep(MAX_JSON_DEPTH + 1)), refused);
  const objects = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
  t.ok(json(objects(MAX_JSON_DEPTH)).has('a'));
  t.throws(() => json(objects(MAX_JSON_DEPTH + 1)), refused, 'objects in objects');
  // Closing brackets give levels back: many shallow siblings are not deep.
  t.equal(json(`{"a":[${'[[[]]],'.repeat(200)}1]}`).size, 1);
  t.throws(() => json(`{"a":${'['.repeat(1_000_000)}`), refused, 'unclosed: refused at the limit, not parsed');
});

t.test('JSON: what is inside strings does not count, escaped quotes included', async (t) => {
  const lookalike = '{\\"k\\":[1,2],\\"[\\":{'.repeat(5000); // a string full of JSON punctuation and escaped quotes
  const text = `{"image_file_b64":"${lookalike}",${range(MAX_FIELDS - 1)
    .map((i) => `"k${i}":"\\\\${i}"`)
    .join(',')}}`;
  const f = json(text);
  t.equal(f.size, MAX_FIELDS);
  t.equal(f.get('image_file_b64'), JSON.parse(`"${lookalike}"`));
  t.equal(f.get('k3'), '\\3', 'a string ending in an escaped backslash ends at the next quote');
  // A string that ends in an escaped backslash, then keys: the scan must see the string close there.
  const after = `{"a":"x\\\\",${range(MAX_FIELDS)
    .map((i) => `"k${i}":1`)
    .join(',')}}`;
  t.throws(() => json(after), tooMany('JSON keys and array elements'));
  // Escaped quotes, then keys: a chunk may end right after the backslash of the second one.
  t.throws(
    () =>
      json(
        `{"a":"\\"x\\"y",${range(MAX_FIELDS)
          .map((i) => `"k${i}":1`)
          .join(',')}}`,
      ),
    tooMany('JSON keys and array elements'),
  );
  // Non-ASCII keys and values (UTF-8 bytes never look like JSON punctuation).
  const utf8 = `{${range(MAX_FIELDS)
    .map((i) => `"ключ${i}":"値:,[${i}"`)
    .join(',')}}`;
  t.same(Object.fromEntries(json(utf8)), JSON.parse(utf8));
  t.throws(() => json(`{"ü":1,${utf8.slice(1)}`), tooMany('JSON keys and array elements'));
});

t.test('JSON that is not JSON is left to JSON.parse, which says why', async (t) => {
  const malformed = { status: 400, code: 'invalid_request_body', detail: /^Malformed JSON body: / };
  t.throws(() => json(`{"a""b"${'""'.repeat(100_000)}}`), malformed, 'strings where none may be');
  t.throws(() => json('{"a":"never closed'), malformed);
  t.throws(() => json(`]${'{"a":1,'.repeat(2000)}`), malformed, 'a close before any open');
  t.throws(() => json('[1,2]'), { status: 400, code: 'invalid_request_body', detail: 'The JSON body must be an object.' });
});
