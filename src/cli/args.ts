// Minimal flag parsing shared by the CLI commands: --name value, --name=value, --flag, positionals.
// A mistyped flag must not pass silently: `keys create --credit 100` made a key with no credits.
// Each command names the flags it knows; unknown and repeated ones are usage errors (checkFlags).

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
  /** Flags given more than once (the last one would win). */
  repeated: string[];
}

export function parseArgs(argv: string[], booleanFlags: ReadonlySet<string> = new Set()): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  const repeated: string[] = [];
  const set = (name: string, value: string | true) => {
    if (flags.has(name) && !repeated.includes(name)) repeated.push(name);
    flags.set(name, value);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) {
        set(a.slice(2, eq), a.slice(eq + 1));
      } else if (booleanFlags.has(a.slice(2)) || i + 1 >= argv.length || argv[i + 1]!.startsWith('--')) {
        set(a.slice(2), true);
      } else {
        set(a.slice(2), argv[++i]!);
      }
    } else if (a.startsWith('-') && a.length === 2 && i + 1 < argv.length) {
      set(a.slice(1), argv[++i]!);
    } else {
      positionals.push(a);
    }
  }
  return { positionals, flags, repeated };
}

function dashes(name: string): string {
  return name.length === 1 ? `-${name}` : `--${name}`;
}

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** The first unknown or repeated flag, as a usage message; null when every flag is known and given once. */
export function checkFlags(args: ParsedArgs, known: readonly string[]): string | null {
  for (const name of args.flags.keys()) {
    if (known.includes(name)) continue;
    const near = known.filter((k) => k.length > 1 && distance(name, k) <= 2).sort((x, y) => distance(name, x) - distance(name, y))[0];
    return `unknown option '${dashes(name)}'${near ? ` (did you mean '${dashes(near)}'?)` : ''}`;
  }
  if (args.repeated.length > 0) return `option '${dashes(args.repeated[0]!)}' given more than once`;
  return null;
}
