// http/early-body.ts against a fake uWS response: chunks that arrive before the body is read are kept
// (copied), replayed in order, and the stream paused meanwhile; answering without the body drops them
// and resumes the stream.
import t from 'tap';
import { EarlyBody, type PausableBody } from '../../src/http/early-body.js';
import { readBody } from '../../src/http/body.js';

class FakeRes implements PausableBody {
  handler: ((chunk: ArrayBuffer, isLast: boolean) => void) | null = null;
  paused = 0;
  resumed = 0;
  onData(h: (chunk: ArrayBuffer, isLast: boolean) => void) {
    this.handler = h;
  }
  pause() {
    this.paused++;
  }
  resume() {
    this.resumed++;
  }
  push(text: string, isLast = false) {
    const ab = new ArrayBuffer(text.length);
    new Uint8Array(ab).set(Buffer.from(text));
    this.handler!(ab, isLast);
    structuredClone(ab, { transfer: [ab] }); // neuter, as uWS does
  }
}

t.test('chunks before the read are kept and replayed; the stream resumes for the rest', async (t) => {
  const res = new FakeRes();
  const early = new EarlyBody(res);
  t.equal(res.paused, 1, 'paused at once');
  res.push('hello ');
  res.push('wo');
  const body = readBody(early, { declaredLength: 11, limit: 100, signal: new AbortController().signal });
  t.equal(res.resumed, 1, 'resumed once the reader took over');
  res.push('rld', true);
  t.equal((await body).toString(), 'hello world');
});

t.test('a whole body that arrived early is read; the socket resumes for the next request', async (t) => {
  const res = new FakeRes();
  const early = new EarlyBody(res);
  res.push('all of it', true);
  const body = await readBody(early, { declaredLength: 9, limit: 100, signal: new AbortController().signal });
  t.equal(body.toString(), 'all of it');
  t.equal(res.resumed, 1, 'unpaused: keep-alive reads the next request');
});

t.test('answered without the body: held chunks dropped, later ones ignored, stream resumed once', async (t) => {
  const res = new FakeRes();
  const early = new EarlyBody(res);
  res.push('x'.repeat(1000));
  early.discard();
  early.discard();
  t.equal(res.resumed, 1);
  res.push('more', true); // uWS goes on delivering the rest: swallowed
  t.pass('no throw after discard');
});
