// api/errors.ts and http/http-error.ts: the remove.bg envelope, titles, codes and statuses of every factory.
import t from 'tap';
import * as E from '../../src/api/errors.js';
import * as H from '../../src/http/http-error.js';

t.test('envelope shape', async (t) => {
  const err = E.invalidParameter('size', 'one of preview', 'huge');
  t.same(JSON.parse(JSON.stringify(err)), {
    errors: [{ title: "Invalid value for parameter 'size'", code: 'invalid_size', detail: "Expected one of preview for size but received 'huge'" }],
  });
  const noDetail = new E.ApiError(400, 'x', 'X');
  t.same(JSON.parse(JSON.stringify(noDetail)), { errors: [{ title: 'X', code: 'x' }] });
  t.ok(noDetail instanceof H.HttpError, 'an ApiError is an HttpError: the server sends either the same way');
  t.same(JSON.parse(JSON.stringify(H.invalidBody('bad'))), { errors: [{ title: 'Invalid request body', code: 'invalid_request_body', detail: 'bad' }] });
});

t.test('remove.bg titles and codes', async (t) => {
  const cases: Array<[H.HttpError, number, string, string]> = [
    [E.missingSource(), 400, 'missing_source', 'No image given'],
    [E.authFailed(), 403, 'auth_failed', 'API Key invalid'],
    [E.missingApiKey(), 403, 'auth_failed', 'Missing API Key'],
    [E.insufficientCredits(), 402, 'insufficient_credits', 'Insufficient credits'],
    [E.fileTooLarge(22 * 1024 * 1024), 413, 'file_too_large', 'File too large'],
    [E.rateLimitExceeded(3), 429, 'rate_limit_exceeded', 'Rate limit exceeded'],
    [E.invalidFileType('gif'), 400, 'invalid_file_type', 'Invalid file type'],
    [E.multipleSources(['image_url', 'image_file']), 400, 'multiple_sources', 'Multiple image sources given'],
    [E.multipleBgSources(['bg_color', 'bg_image_url']), 400, 'multiple_bg_sources', 'Multiple background sources given'],
    [H.notFound('/x'), 404, 'not_found', 'Not found'],
    [H.methodNotAllowed('PUT', '/x', ['GET']), 405, 'method_not_allowed', 'Method not allowed'],
    [H.internalError(), 500, 'internal_error', 'Internal server error'],
    [H.bodyTooLarge(30 * 1024 * 1024), 413, 'file_too_large', 'File too large'],
    [H.tooManyFields(1000, 'form fields'), 400, 'too_many_fields', 'Too many fields'],
    [H.bodiesBusy(1024, 2048), 503, 'service_busy', 'Service busy'],
    [H.requestTimeout(1500), 408, 'request_timeout', 'Request timeout'],
    [H.shuttingDown(), 503, 'service_unavailable', 'Service unavailable'],
  ];
  for (const [err, status, code, title] of cases) {
    t.equal(err.status, status, code);
    t.equal(err.code, code);
    t.equal(err.title, title);
  }
  t.equal(E.missingSource().detail, 'Please provide the source image in the image_url, image_file or image_file_b64 parameter.');
  t.equal(E.fileTooLarge(22 * 1024 * 1024).detail, 'File exceeds limit of 22MB');
  t.equal(E.invalidFileType('mp4').detail, 'Expected jpg/png/webp, received mp4');
  t.equal(E.rateLimitExceeded(2.2).headers['Retry-After'], '3');
  t.equal(H.methodNotAllowed('PUT', '/x', ['GET', 'OPTIONS']).headers.Allow, 'GET, OPTIONS');
  t.equal(H.bodyTooLarge(30 * 1024 * 1024).detail, 'Request body exceeds limit of 30MB');
  t.equal(H.bodiesBusy(1024, 2048).headers['Retry-After'], '1');
});

t.test('download failures carry the reason in the title (as recorded)', async (t) => {
  const err = E.failedImageDownload('HTTP Status 404');
  t.equal(err.code, 'failed_image_download');
  t.equal(err.title, 'Failed to download image from given image_url: HTTP Status 404');
  t.equal(err.detail, 'Failed to download image from given image_url: HTTP Status 404');
  t.equal(E.failedBgDownload('HTTP Status 500').code, 'failed_bg_download');
});

t.test('worker failure codes map to 400s; unknown codes to a generic 500', async (t) => {
  for (const code of ['failed_to_read_image', 'invalid_file_type', 'resolution_too_high', 'roi_exceeds_bounds', 'roi_region_empty']) {
    const err = E.fromRemoveFailure(code, 'msg');
    t.equal(err.status, 400, code);
    t.equal(err.code, code);
    t.equal(err.detail, 'msg');
  }
  const internal = E.fromRemoveFailure('internal_error', 'secret stack at /x/y.js:1');
  t.equal(internal.status, 500);
  t.notMatch(JSON.stringify(internal), /secret|y\.js/);
});

t.test('withHeaders keeps the error and adds headers', async (t) => {
  const err = E.withHeaders(E.rateLimitExceeded(5), { 'X-RateLimit-Limit': '500' });
  t.equal(err.headers['Retry-After'], '5');
  t.equal(err.headers['X-RateLimit-Limit'], '500');
  t.equal(err.status, 429);
});

t.test('formatMegabytes', async (t) => {
  t.equal(H.formatMegabytes(22 * 1024 * 1024), '22MB');
  t.equal(H.formatMegabytes(1.5 * 1024 * 1024), '1.5MB');
});
