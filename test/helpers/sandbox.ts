// Requests to the sandbox (POST /sandbox/v1.0/removebg): the remove.bg shapes without a key.

import { multipart, request, type Part, type TestResponse } from './http-client.js';

export const SANDBOX = '/sandbox/v1.0/removebg';

export function sandboxMultipart(base: string, parts: Part[], headers: Record<string, string> = {}): Promise<TestResponse> {
  const { body, contentType } = multipart(parts);
  return request(base + SANDBOX, { method: 'POST', headers: { 'Content-Type': contentType, ...headers }, body });
}

/** An image upload (the python `requests` shape) with optional fields. */
export function sandboxImage(
  base: string,
  image: Uint8Array,
  fields: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  return sandboxMultipart(
    base,
    [{ name: 'image_file', value: image, filename: 'image_file' }, ...Object.entries(fields).map(([name, value]) => ({ name, value }))],
    headers,
  );
}

export function sandboxJson(base: string, body: unknown, headers: Record<string, string> = {}): Promise<TestResponse> {
  return request(base + SANDBOX, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

export function sandboxUrlencoded(base: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<TestResponse> {
  return request(base + SANDBOX, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}
