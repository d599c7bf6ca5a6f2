// What `cutout remove <file|dir>...` works on, and where each result goes. Folders are searched
// recursively with links followed, so a link back up a folder tree or to a file already found must
// not make the same photo run twice (a loop ran each photo ~40 times until ELOOP). Only regular
// files are read: a FIFO or /dev/zero would block or never end. Nothing is dropped silently: each
// argument is processed, skipped with a reason, or failed with one.

import fs from 'node:fs';
import path from 'node:path';

export interface CollectedInputs {
  /** Regular files to process, each once, in argument order (folder entries sorted). */
  files: string[];
  /** "path: reason" for what is left out on purpose. */
  skipped: string[];
  /** "path: reason" for arguments that cannot be read: they fail the run. */
  failed: string[];
}

/** `NAME.cutout.EXT`: what `remove` writes beside its inputs, not an input of a later run over the folder. */
const RESULT_NAME = /\.cutout(-\d+)?\.(png|jpe?g|webp|zip)$/i;

function statError(p: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT') return `${p}: no such file or folder`;
  if (err.code === 'ELOOP') return `${p}: too many levels of links (a link loop)`;
  return `${p}: cannot be read (${err.code ?? err.message})`;
}

export function collectInputs(inputs: string[]): CollectedInputs {
  const out: CollectedInputs = { files: [], skipped: [], failed: [] };
  /** dev:inode of every folder searched and file taken, with the path it was first met at. */
  const seen = new Map<string, string>();
  const visit = (p: string, named: boolean): void => {
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch (err) {
      out.failed.push(statError(p, err as NodeJS.ErrnoException));
      return;
    }
    const id = `${st.dev}:${st.ino}`;
    const first = seen.get(id);
    if (st.isDirectory()) {
      if (first !== undefined) {
        out.skipped.push(`${p}: the folder ${first}, already searched`);
        return;
      }
      seen.set(id, p);
      let entries: string[];
      try {
        entries = fs.readdirSync(p).sort();
      } catch (err) {
        out.failed.push(statError(p, err as NodeJS.ErrnoException));
        return;
      }
      for (const e of entries) visit(path.join(p, e), false);
    } else if (!st.isFile()) {
      out.skipped.push(`${p}: not a regular file`);
    } else if (first !== undefined) {
      out.skipped.push(`${p}: the same file as ${first}`);
    } else if (!named && RESULT_NAME.test(p)) {
      out.skipped.push(`${p}: a result of cutout (*.cutout.*); name it to process it`);
    } else {
      seen.set(id, p);
      out.files.push(p);
    }
  };
  for (const p of inputs) visit(p, true);
  return out;
}

/** A result's file extension by its content type. */
export const RESULT_EXTENSION: Readonly<Record<string, string>> = Object.freeze({
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/webp': '.webp',
  'application/zip': '.zip',
});

/** `OUT/NAME`, or `DIR/NAME.cutout` beside the input: a result's path before its extension. */
function naturalStem(file: string, outDir: string | undefined): string {
  const base = path.basename(file, path.extname(file));
  return outDir !== undefined ? path.join(outDir, base) : path.join(path.dirname(file), `${base}.cutout`);
}

/** The file `p` names, links resolved, whether or not it exists yet (its folder's links resolved). */
export function realTarget(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    const dir = path.dirname(path.resolve(p));
    try {
      return path.join(fs.realpathSync(dir), path.basename(p));
    } catch {
      return path.resolve(p);
    }
  }
}

/**
 * Where each file's result goes, without its extension (known once the result is: format auto is a
 * PNG or a JPEG by the result's pixels). The natural stem, or the first `stem-2`, `stem-3` … (in
 * input order) that no other result has and that gives no input's path with any result extension:
 * a/x.png and b/x.png into one OUT, or x.png and x.jpg in one folder, do not overwrite each other,
 * and writing into a folder of photos never overwrites a photo.
 */
export function resultStems(files: string[], outDir: string | undefined): ResultStem[] {
  const inputs = new Set(files.map(realTarget));
  const used = new Set<string>();
  const taken = (stem: string) => used.has(realTarget(stem)) || Object.values(RESULT_EXTENSION).some((ext) => inputs.has(realTarget(`${stem}${ext}`)));
  return files.map((file) => {
    const natural = naturalStem(file, outDir);
    let stem = natural;
    for (let n = 2; taken(stem); n++) stem = `${natural}-${n}`;
    used.add(realTarget(stem));
    return { stem, natural };
  });
}

export interface ResultStem {
  /** Where the result goes, before its extension. */
  stem: string;
  /** Where it would have gone (`OUT/NAME` or `DIR/NAME.cutout`); differs from `stem` when that was taken. */
  natural: string;
}
