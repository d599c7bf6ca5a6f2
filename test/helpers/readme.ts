// README.md read as a new user reads it: its fenced shell blocks split into commands (comments dropped,
// `a && b` split, `\` continuations joined), its untagged blocks, and its inline code spans.

export interface ReadmeBlock {
  /** The fence's info string: 'sh', 'js', '' … */
  lang: string;
  /** The `## ` heading the block sits under. */
  section: string;
  /** 1-based line of the opening fence. */
  line: number;
  lines: string[];
}

export interface ReadmeCommand {
  text: string;
  section: string;
  line: number;
}

export const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console']);

export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const blocks: ReadmeBlock[] = [];
  let section = '';
  let open: ReadmeBlock | null = null;
  markdown.split('\n').forEach((raw, i) => {
    const fence = /^(`{3,}|~{3,})\s*([\w+-]*)/.exec(raw);
    if (open) {
      if (fence && fence[2] === '') {
        blocks.push(open);
        open = null;
      } else {
        open.lines.push(raw);
      }
      return;
    }
    if (fence) {
      open = { lang: fence[2]!, section, line: i + 1, lines: [] };
      return;
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(raw);
    if (heading) section = heading[1]!.trim();
  });
  if (open) throw new Error(`README.md: the code block at line ${(open as ReadmeBlock).line} is never closed`);
  return blocks;
}

/** Drop a `#` comment that is outside quotes and starts a word. */
export function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"') i++;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '\\') {
      i++;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
      return line.slice(0, i);
    }
  }
  return line;
}

/** Split on `&&` outside quotes. */
export function splitAnd(line: string): string[] {
  const parts: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '&' && line[i + 1] === '&') {
      parts.push(line.slice(start, i));
      start = i + 2;
      i++;
    }
  }
  parts.push(line.slice(start));
  return parts.map((p) => p.trim().replace(/\s+/g, ' ')).filter((p) => p.length > 0);
}

/** Every command of every shell block, in README order. */
export function readmeCommands(markdown: string): ReadmeCommand[] {
  const out: ReadmeCommand[] = [];
  for (const block of readmeBlocks(markdown)) {
    if (!SHELL_LANGS.has(block.lang)) continue;
    let pending = '';
    block.lines.forEach((raw, i) => {
      const line = stripComment(raw.replace(/^\$\s+/, ''));
      if (/\\\s*$/.test(line)) {
        pending += line.replace(/\\\s*$/, ' ');
        return;
      }
      const whole = pending + line;
      pending = '';
      for (const text of splitAnd(whole)) out.push({ text, section: block.section, line: block.line + 1 + i });
    });
  }
  return out;
}

/** The untagged block's lines that start with `cutout `, continuation lines (indented) joined. */
export function synopsisLines(block: ReadmeBlock): string[] {
  const out: string[] = [];
  for (const raw of block.lines) {
    if (/^cutout\s/.test(raw)) out.push(raw.trim());
    else if (/^\s+\S/.test(raw) && out.length > 0) out[out.length - 1] += ` ${raw.trim()}`;
  }
  return out;
}

/** Inline code spans outside fenced blocks. */
export function inlineCode(markdown: string): string[] {
  const prose = markdown.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\s*$/gm, '');
  // A span may wrap onto the next line; its line break reads as a space.
  return [...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s+/g, ' ').trim());
}
