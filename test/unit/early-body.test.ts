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
  // uWS's resume() arms a 10 s idle timer that only the body's last chunk clears: resuming after it
  // would close the connection, unanswered, while the request is still worked on.
  t.equal(res.resumed, 0, 'still paused while the request is worked on');
  early.beforeAnswer();
  t.equal(res.resumed, 1, 'unpaused at the answer: keep-alive reads the next request');
  early.beforeAnswer();
  t.equal(res.resumed, 1, 'once');
});

t.test('keepAlive restarts the idle timer of a body still arriving, and never after its end', async (t) => {
  const res = new FakeRes();
  const early = new EarlyBody(res);
  early.keepAlive();
  t.same([res.paused, res.resumed], [1, 0], 'nothing while paused (no timer then)');
  const body = readBody(early, { declaredLength: 6, limit: 100, signal: new AbortController().signal });
  res.push('abc');
  t.equal(early.received, 3);
  early.keepAlive();
  t.same([res.paused, res.resumed], [2, 2], 'pause + resume restarts it');
  res.push('def', true);
  await body;
  early.keepAlive();
  t.same([res.paused, res.resumed], [2, 2], 'nothing once the body is in');
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

t.test('drainThen: the answer waits for the last chunk, the byte bound or the time bound, once', async (t) => {
  const calls: string[] = [];
  const last = new FakeRes();
  const early = new EarlyBody(last);
  last.push('held');
  early.drainThen(() => calls.push('last'), 100, 5_000);
  t.equal(last.resumed, 1, 'the stream resumes to read the rest');
  last.push('more');
  t.same(calls, [], 'not before the body ends');
  last.push('end', true);
  last.push('late', true);
  t.same(calls, ['last'], 'at the last chunk, once');
  t.ok(early.complete);

  const bytes = new FakeRes();
  new EarlyBody(bytes).drainThen(() => calls.push('bytes'), 5, 5_000);
  bytes.push('1234');
  t.same(calls, ['last'], 'within the byte bound');
  bytes.push('56');
  t.same(calls, ['last', 'bytes'], 'past it');

  const ended = new FakeRes();
  const whole = new EarlyBody(ended);
  ended.push('all', true);
  whole.drainThen(() => calls.push('ended'), 100, 5_000);
  t.same(calls, ['last', 'bytes', 'ended'], 'at once when the body is in already');

  const stalled = new FakeRes();
  new EarlyBody(stalled).drainThen(() => calls.push('time'), 100, 30);
  stalled.push('x');
  await new Promise((r) => setTimeout(r, 60));
  t.same(calls, ['last', 'bytes', 'ended', 'time'], 'after the time bound');

  // A reader that gave up mid-body (an error) hands the rest to the drain.
  const reading = new FakeRes();
  const read = new EarlyBody(reading);
  const got: string[] = [];
  read.onData((c) => got.push(Buffer.from(c).toString()));
  reading.push('a');
  read.drainThen(() => calls.push('taken'), 100, 5_000);
  reading.push('b', true);
  t.same(got, ['a'], 'the reader sees nothing after the drain took over');
  t.same(calls.at(-1), 'taken');
});
