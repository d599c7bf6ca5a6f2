// One multipart/form-data body as remove.bg clients send it (python-requests shape): the image as
// `image_file` with filename "image_file", then text fields. Shared by the HTTP benchmarks.
export function multipartBody(image: Buffer, fields: Record<string, string>): { body: Buffer; type: string } {
  const b = `----bench${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [
    Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="image_file"; filename="image_file"\r\n\r\n`),
    image,
    Buffer.from('\r\n'),
  ];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(Buffer.from(`--${b}--\r\n`));
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${b}` };
}
