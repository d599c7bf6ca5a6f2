// http/multipart-framing.ts: only exactly well-framed multipart bodies pass, with each part's data range;
// each malformation names itself.
import t from 'tap';
import uWS from 'uWebSockets.js';
import { checkMultipartFraming } from '../../src/http/multipart-framing.js';

const B = 'bnd';
const cd = (name: string, extra = '') => `Content-Disposition: form-data; name="${name}"${extra}`;
const part = (headers: string[], data: string) => `--${B}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${data}\r\n`;
const close = `--${B}--\r\n`;
const check = (s: string) => checkMultipartFraming(Buffer.from(s, 'latin1'), B);

// Each part's head and its data as the ranges give it (the data must be exactly the part's bytes).
function read(s: string, encoding: BufferEncoding = 'latin1') {
  const body = Buffer.from(s, encoding);
  return checkMultipartFraming(body, B).map(({ dataStart, dataEnd, ...head }) => ({ ...head, data: body.toString(encoding, dataStart, dataEnd) }));
}

t.test('well framed bodies pass and give their parts` names, filenames, types and data', async (t) => {
  t.same(read(part([cd('a')], 'hello') + close), [{ name: 'a', data: 'hello' }]);
  t.same(
    read(part([cd('image_file', '; filename="image_file"'), 'Content-Type:  image/png '], '\x89PNG\r\n--bn\r\n') + part([cd('size')], 'full') + close),
    [
      { name: 'image_file', filename: 'image_file', type: 'image/png', data: '\x89PNG\r\n--bn\r\n' },
      { name: 'size', data: 'full' },
    ],
    'data holding CRLF and a boundary prefix; type without its spaces',
  );
  t.same(read('preamble\r\n' + part([cd('a')], '') + close + 'epilogue'), [{ name: 'a', data: '' }], 'preamble, empty data, epilogue');
  t.same(
    read(`--${B} \t\r\n${cd('a')}\r\nContent-Type: image/png\r\n\r\nx\r\n--${B}--`),
    [{ name: 'a', type: 'image/png', data: 'x' }],
    'transport padding, no final CRLF',
  );
  t.same(
    read(part(['content-disposition: FORM-DATA; NAME=a; filename="ü.png"'], 'x') + close, 'utf8'),
    [{ name: 'a', filename: 'ü.png', data: 'x' }],
    'any case, unquoted name, UTF-8 filename',
  );
  t.same(
    read(part([cd('a')], `\r\n--${B}x`.slice(0, 5)) + part([cd('b')], '\r\n') + close),
    [
      { name: 'a', data: `\r\n--${B}`.slice(0, 5) },
      { name: 'b', data: '\r\n' },
    ],
    'data that is CRLF or begins like a delimiter',
  );
});

t.test('the ranges give what uWS.getParts gives for the same well framed bodies', async (t) => {
  const bodies = [
    part([cd('image_file', '; filename="a.png"'), 'Content-Type: image/png'], '\x89PNG\r\n\x1a\n' + '\x00\xff'.repeat(300)) +
      part([cd('size')], 'full') +
      close,
    'preamble\r\n' + part([cd('a')], '') + part([cd('b')], '--') + close,
    part([cd('x')], `\r\n--${B.slice(0, 2)}\r\n`) + close,
  ];
  for (const [i, s] of bodies.entries()) {
    const body = Buffer.from(s, 'latin1');
    const ours = checkMultipartFraming(body, B).map((p) => body.toString('latin1', p.dataStart, p.dataEnd));
    const theirs = (uWS.getParts(body, `multipart/form-data; boundary=${B}`) ?? []).map((p) => Buffer.from(p.data).toString('latin1'));
    t.same(ours, theirs, `body ${i + 1}`);
  }
});

t.test('malformed bodies are refused', async (t) => {
  const cases: Record<string, [string, RegExp]> = {
    'no closing boundary': [part([cd('a')], 'hello'), /closing boundary is missing/],
    'last part cut short': [part([cd('image_file')], 'png') + `--${B}\r\n${cd('size')}\r\n\r\nful`, /closing boundary is missing/],
    'ends after the boundary': [`--${B}`, /closing boundary is missing/],
    'no boundary at all': ['hello', /no boundary line/],
    'only the close': [close, /no parts/],
    'bare LF line endings': [`--${B}\n${cd('a')}\n\nhello\n--${B}--\n`, /not followed by CRLF/],
    'header without a colon': [part([cd('a'), 'X-Bad'], 'x') + close, /malformed header line/],
    'not a header at all': [part(['this is not a header'], 'x') + close, /malformed header line/],
    'control byte in a header': [part([`${cd('a')}\x01`], 'x') + close, /malformed header line/],
    'folded header line': [part([cd('a'), ' folded'], 'x') + close, /malformed header line/],
    'no Content-Disposition': [part(['Content-Type: text/plain'], 'x') + close, /no Content-Disposition/],
    'no headers': [part([], 'x') + close, /no Content-Disposition/],
    'two Content-Dispositions': [part([cd('a'), cd('b')], 'x') + close, /more than one Content-Disposition/],
    'two Content-Types': [part([cd('a'), 'Content-Type: a/b', 'Content-Type: c/d'], 'x') + close, /more than one Content-Type/],
    'attachment, not form-data': [part(['Content-Disposition: attachment; name="a"'], 'x') + close, /not Content-Disposition: form-data/],
    'no name': [part(['Content-Disposition: form-data'], 'x') + close, /no field name/],
    'empty name': [part([cd('')], 'x') + close, /no field name/],
    'name given twice': [part([cd('a', '; name="b"')], 'x') + close, /gives name more than once/],
    'filename given twice, in two cases': [part([cd('a', '; filename="a.png"; FileName="b.png"')], 'x') + close, /gives filename more than once/],
    'headers never end': [`--${B}\r\n${cd('a')}\r\nhello\r\n--${B}--\r\n`, /no blank line/],
  };
  for (const [label, [body, re]] of Object.entries(cases)) {
    t.throws(() => check(body), { name: 'MultipartFramingError', message: re }, label);
  }
});
