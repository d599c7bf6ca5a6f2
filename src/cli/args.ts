// Minimal flag parsing shared by the CLI commands: --name value, --name=value, --flag, positionals.

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
}

export function parseArgs(argv: string[], booleanFlags: ReadonlySet<string> = new Set()): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) {
        flags.set(a.slice(2, eq), a.slice(eq + 1));
      } else if (booleanFlags.has(a.slice(2)) || i + 1 >= argv.length || argv[i + 1]!.startsWith('--')) {
        flags.set(a.slice(2), true);
      } else {
        flags.set(a.slice(2), argv[++i]!);
      }
    } else if (a.startsWith('-') && a.length === 2 && i + 1 < argv.length) {
      flags.set(a.slice(1), argv[++i]!);
    } else {
      positionals.push(a);
    }
  }
  return { positionals, flags };
}
