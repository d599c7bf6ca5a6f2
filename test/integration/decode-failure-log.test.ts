// A photo that does not decode: the client reads the worker's plain words in the error's detail; the
// request log keeps the decoder's own (RemoveFailure.cause) for the operator.
import t from 'tap';
import { createRequestLog } from '../../src/observe/request-log.js';
import { firstError, postImage } from '../helpers/api.js';
import { makeImage } from '../helpers/images.js';
import { startTestServer } from '../helpers/server.js';

t.test("the detail in the client's words, the cause in the log line", async (t) => {
  const lines: string[] = [];
  const log = createRequestLog({ destination: { write: (s: string) => void lines.push(...s.split('\n').filter(Boolean)) }, pretty: false });
  const { url, pool, events } = await startTestServer(t, { observers: [log] });
  const words = 'The image file is truncated or corrupt (JPEG data ends early).';
  const cause = 'VipsJpeg: premature end of JPEG image';
  pool.respond = () => ({ ok: false, code: 'failed_to_read_image', message: words, cause });
  const ended = events.nextEnd();
  const res = await postImage(url, await makeImage('jpeg'));
  await ended;
  t.equal(res.status, 400);
  t.same(firstError(res), { title: 'Failed to read image', code: 'failed_to_read_image', detail: words });
  t.notMatch(res.text(), /Vips/, 'no decoder internals on the wire');
  const record = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
  t.match(record, { status: 400, code: 'failed_to_read_image', cause });
});
