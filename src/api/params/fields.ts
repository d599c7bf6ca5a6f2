// Reading one raw field (http's RawFields) as text, a boolean or one of a table's values. Pure.
// `""`, JSON null and an absent field all mean "not given" (the official CLI sends `""`).

import { isFilePart, type RawFields } from '../../http/fields.js';
import { invalidParameter } from '../errors.js';

/** A field as text, trimmed; undefined when not given. */
export function readText(fields: RawFields, name: string): string | undefined {
  const v = fields.get(name);
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v.trim() === '' ? undefined : v.trim();
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return String(v);
  if (isFilePart(v)) {
    const s = Buffer.from(v.data.buffer, v.data.byteOffset, v.data.byteLength).toString('utf8').trim();
    return s === '' ? undefined : s;
  }
  throw invalidParameter(name, 'a string', v);
}

/** "true"/"false" (any case), 1/0, or JSON booleans. */
export function readBoolean(fields: RawFields, name: string, fallback: boolean): boolean {
  const raw = fields.get(name);
  if (typeof raw === 'boolean') return raw;
  const text = readText(fields, name);
  if (text === undefined) return fallback;
  switch (text.toLowerCase()) {
    case 'true':
    case '1':
      return true;
    case 'false':
    case '0':
      return false;
    default:
      throw invalidParameter(name, "'true' or 'false'", text);
  }
}

/** One of `table`'s keys (any case) → its value; `fallback` when not given. */
export function readEnum<T extends string>(fields: RawFields, name: string, table: Readonly<Record<string, T>>, fallback: T): T {
  const text = readText(fields, name);
  if (text === undefined) return fallback;
  const hit = table[text.toLowerCase()];
  if (hit === undefined) throw invalidParameter(name, `one of ${Object.keys(table).join(', ')}`, text);
  return hit;
}
