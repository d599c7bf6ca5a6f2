// A request body's fields as the transport hands them to api/: http's own types (forms.ts makes them,
// api/params/ reads them). Pure.

/** A binary form part (multipart only), in memory of its own (forms.ts copies each one out of the body). */
export interface FilePart {
  readonly kind: 'file';
  readonly data: Uint8Array;
  readonly filename?: string;
  readonly type?: string;
}

/** One raw value as a body parser produced it: strings (forms), JSON scalars/objects, or a file part. */
export type RawValue = string | number | boolean | null | FilePart | readonly unknown[] | { readonly [k: string]: unknown };

/** A body's fields by name, in the order they came. */
export type RawFields = ReadonlyMap<string, RawValue>;

export const isFilePart = (v: unknown): v is FilePart =>
  typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'file' && (v as FilePart).data instanceof Uint8Array;
