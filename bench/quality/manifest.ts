// Parsing of the evaluation-set manifest (CSV with a header row, RFC 4180 quoting). No I/O.

export type GtType = 'alpha_matte' | 'binary_mask';

export interface ManifestRow {
  id: string;
  imagePath: string;
  gtPath: string;
  gtType: GtType;
  /** Empty when the item has no trimap. */
  trimapPath: string;
  category: string;
  group: string;
  dataset: string;
  width: number;
  height: number;
  notes: string;
}

/** Splits CSV text into records of fields (handles quotes, doubled quotes, CRLF, newlines in quotes). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let field = '';
  let row: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      field = '';
      if (row.length > 1 || row[0] !== '') rows.push(row);
      row = [];
    } else field += ch;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export function parseManifest(text: string): ManifestRow[] {
  const [header, ...records] = parseCsv(text);
  if (header === undefined) return [];
  const col = (name: string): number => {
    const i = header.indexOf(name);
    if (i < 0) throw new Error(`manifest lacks column ${name}`);
    return i;
  };
  const c = {
    id: col('id'),
    image: col('image_path'),
    gt: col('gt_path'),
    type: col('gt_type'),
    trimap: col('trimap_path'),
    category: col('category'),
    group: col('group'),
    dataset: col('dataset'),
    width: col('width'),
    height: col('height'),
    notes: header.indexOf('notes'),
  };
  return records.map((r) => {
    const get = (i: number): string => (i >= 0 ? (r[i] ?? '') : '');
    const gtType = get(c.type);
    if (gtType !== 'alpha_matte' && gtType !== 'binary_mask') {
      throw new Error(`unknown gt_type ${JSON.stringify(gtType)} for ${get(c.id)}`);
    }
    return {
      id: get(c.id),
      imagePath: get(c.image),
      gtPath: get(c.gt),
      gtType,
      trimapPath: get(c.trimap),
      category: get(c.category),
      group: get(c.group),
      dataset: get(c.dataset),
      width: Number(get(c.width)),
      height: Number(get(c.height)),
      notes: get(c.notes),
    };
  });
}
