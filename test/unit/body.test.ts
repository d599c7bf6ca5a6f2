// http/body.ts against a fake uWS response: preallocation, chunk copies, limits, aborts.
import t from 'tap';
import { HttpError } from '../../src/http/http-error.js';
import { declaredLengthError, parseContentLength, readBody, type BodySource } from '../../src/http/body.js';

/** Mimics uWS: hands out ArrayBuffers and neuters (detaches) them when the handler returns. */
class FakeRes implements BodySource {
  handler: ((chunk: ArrayBuffer, isLast: boolean) => void) | null = null;
  onData(h: (chunk: ArrayBuffer, isLast: boolean) => void) {
    this.handler = h;
    return this;
  }
  push(bytes: Uint8Array | string, isLast = false) {
    const src = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
    const ab = new ArrayBuffer(src.byteLength);
    new Uint8Array(ab).set(src);
    this.handler!(ab, isLast);
    structuredClone(ab, { transfer: [ab] }); // neuter, as uWS does
  }
}

t.test('Content-Length: one preallocated, owned, transferable buffer', async (t) => {
  const res = new FakeRes();
  const p = readBody(res, { declaredLength: 11, limit: 100, signal: new AbortController().signal });
  res.push('hello ');
  res.push('world', true);
  const body = await p;
  t.equal(body.toString(), 'hello world');
  t.equal(body.byteOffset, 0);
  t.equal(body.buffer.byteLength, 11, 'exactly the declared size');
});

t.test('no Content-Length (chunked): grows, still correct', async (t) => {
  const res = new FakeRes();
  const p = readBody(res, { declaredLength: null, limit: 1 << 20, signal: new AbortController().signal, initialCapacity: 4 });
  const expected: number[] = [];
  for (let i = 0; i < 50; i++) {
    const chunk = Uint8Array.from({ length: 37 }, (_, j) => (i * 37 + j) & 255);
    expected.push(...chunk);
    res.push(chunk, i === 49);
  }
  const body = await p;
  t.same([...body], expected);
});

t.test('empty body', async (t) => {
  const res = new FakeRes();
  const p = readBody(res, { declaredLength: 0, limit: 10, signal: new AbortController().signal });
  res.push(new Uint8Array(0), true);
  t.equal((await p).byteLength, 0);
});

t.test('declared length over the limit is refused before reading', async (t) => {
  const res = new FakeRes();
  await t.rejects(readBody(res, { declaredLength: 101, limit: 100, signal: new AbortController().signal }), {
    status: 413,
    code: 'file_too_large',
  });
  t.equal(res.handler, null, 'never registered onData');
});

t.test('running total over the limit without Content-Length', async (t) => {
  const res = new FakeRes();
  const p = readBody(res, { declaredLength: null, limit: 10, signal: new AbortController().signal });
  res.push('123456');
  res.push('7890ab'); // 12 > 10
  const err = await p.catch((e: unknown) => e);
  t.ok(err instanceof HttpError);
  t.equal((err as HttpError).status, 413);
  // later chunks are ignored, not thrown back into uWS
  t.doesNotThrow(() => res.push('more', true));
});

t.test('more bytes than declared are refused', async (t) => {
  const res = new FakeRes();
  const p = readBody(res, { declaredLength: 3, limit: 100, signal: new AbortController().signal });
  res.push('abcd', true);
  await t.rejects(p, { code: 'file_too_large' });
});

t.test('abort mid-upload rejects with an AbortError', async (t) => {
  const res = new FakeRes();
  const ac = new AbortController();
  const p = readBody(res, { declaredLength: 100, limit: 100, signal: ac.signal });
  res.push('partial');
  ac.abort();
  await t.rejects(p, { name: 'AbortError' });
  t.doesNotThrow(() => res.push('late', true));
});

t.test('garbage Content-Length is a 400, not a crash', async (t) => {
  await t.rejects(readBody(new FakeRes(), { declaredLength: NaN, limit: 10, signal: new AbortController().signal }), {
    status: 400,
    code: 'invalid_request_body',
  });
});

t.test('already aborted', async (t) => {
  const ac = new AbortController();
  ac.abort();
  await t.rejects(readBody(new FakeRes(), { declaredLength: 5, limit: 10, signal: ac.signal }), { name: 'AbortError' });
});

t.test('parseContentLength', async (t) => {
  t.equal(parseContentLength(undefined), null);
  t.equal(parseContentLength(''), null);
  t.equal(parseContentLength('42'), 42);
  t.ok(Number.isNaN(parseContentLength('4x2')));
  t.ok(Number.isNaN(parseContentLength('-1')));
});

t.test('declaredLengthError: the one rule for the declared length', async (t) => {
  t.equal(declaredLengthError(null, 10), null, 'no Content-Length: the bytes are counted as they come');
  t.equal(declaredLengthError(10, 10), null, 'exactly the limit fits');
  t.match(declaredLengthError(11, 10), { status: 413, code: 'file_too_large', detail: /Request body exceeds limit of/ });
  t.match(declaredLengthError(NaN, 10), { status: 400, code: 'invalid_request_body' });
});

t.test('inspect sees the body so far after each chunk; what it throws rejects the read at once', async (t) => {
  const res = new FakeRes();
  const seen: string[] = [];
  const refused = new HttpError(400, 'too_many_fields', 'Too many fields');
  const p = readBody(res, {
    declaredLength: 20,
    limit: 100,
    signal: new AbortController().signal,
    inspect: (received) => {
      seen.push(received.toString());
      if (received.includes('!')) throw refused;
    },
  });
  res.push('abc');
  res.push('de!');
  await t.rejects(p, refused);
  res.push('fgh', true); // the rest of the body is dropped, not inspected
  t.same(seen, ['abc', 'abcde!']);
});
