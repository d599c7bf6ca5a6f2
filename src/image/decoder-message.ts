// libvips reports a failed decode as every warning it met, one per line and often repeated
// ("…: VipsJpeg: premature end of JPEG image\nVipsJpeg: Bogus Huffman table definition\nVipsJpeg:
// premature end of JPEG image\n…"). An API error's detail is one line a client can print.

const MAX_CHARS = 300;

/** A decoder error's text as one line: its distinct lines in order, joined by "; ", at most 300 characters. */
export function decoderMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/:$/, '');
    if (!line || seen.has(line)) continue;
    lines.push(line);
    seen.add(line);
    // "Input buffer has corrupt header: VipsJpeg: premature end…" is followed by "VipsJpeg: premature end…".
    const colon = line.indexOf(': ');
    if (colon >= 0) seen.add(line.slice(colon + 2));
  }
  const one = lines.join('; ') || 'the decoder gave no reason';
  return one.length > MAX_CHARS ? `${one.slice(0, MAX_CHARS - 1)}…` : one;
}
