// Request shapes real remove.bg clients send, against a test server.

import { firstError, multipart, request, type Part, type TestResponse } from './http-client.js';
import { KEY } from './server.js';

export { firstError, KEY };

const REMOVEBG = '/v1.0/removebg';

export function postMultipart(base: string, parts: Part[], headers: Record<string, string> = {}, path = REMOVEBG): Promise<TestResponse> {
  const { body, contentType } = multipart(parts);
  return request(base + path, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': contentType, ...headers }, body });
}

/** The python `requests` shape: files={'image_file': bytes} → filename="image_file", no part Content-Type. */
export function postImage(base: string, image: Uint8Array, fields: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<TestResponse> {
  return postMultipart(
    base,
    [{ name: 'image_file', value: image, filename: 'image_file' }, ...Object.entries(fields).map(([name, value]) => ({ name, value }))],
    headers,
  );
}

export function postJson(base: string, body: unknown, headers: Record<string, string> = {}, path = REMOVEBG): Promise<TestResponse> {
  return request(base + path, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

export function postUrlencoded(base: string, fields: Record<string, string>, headers: Record<string, string> = {}, path = REMOVEBG): Promise<TestResponse> {
  return request(base + path, {
    method: 'POST',
    headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}
