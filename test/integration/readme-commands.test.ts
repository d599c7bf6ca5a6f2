// README.md as a new user runs it. Every command in its shell blocks is either run here as written, in
// the checkout, or skipped with the reason given in RULES; a command this file does not know fails the test,
// so a new README line gets run or consciously skipped. The untagged "Command line" block may name only
// flags the commands' --help lists, and every inline `npm run X` / `node dist/…` must exist.
//
// What the runs change, and why (everything else is the README's text):
// - `<key>` is the demo key that `npm start` printed.
// - `localhost:8080` becomes `localhost:<port>`: the server listens on a free port (CUTOUT_PORT=0),
//   since 8080 may be taken on a shared machine; serve's --help is checked to say 8080 is the default.
// - `photo.jpg` is a generated photo (a figure on a gradient, 854x480 JPEG) in a temporary folder, and relative output
//   paths (`-o X`) land there too, so nothing is written into the checkout.
// - curl gets `-D FILE` appended, to read the status and headers; the request is the README's.
// - The environment: without the npm_* variables and node_modules/.bin entries that `npm test` adds,
//   nor tap's variables and its NODE_OPTIONS import (a user's shell has none of them); CUTOUT_DATA_DIR is a fresh folder (the README's "empty data folder",
//   not the checkout's ./data) and CUTOUT_HOST=127.0.0.1; npm's cache is a fresh folder, so the first
//   `npx cutout` is the first in this checkout (npx links the checkout into its cache and runs its
//   install script, which must not rebuild it) and nothing is left in ~/.npm; npm_config_yes=false,
//   so an npx that missed the local bin stops instead of fetching a package named cutout.
// - `cert.pem`/`key.pem` (the TLS section) are written in the temporary folder, and its `--port 8443`
//   becomes `--port 0` (the port it prints then replaces 8443 in the curl line).
// - `/path/to/cutout` (the library section) is this checkout, installed into a new project in the
//   temporary folder; the section's JS block runs there as written, plus one line that prints what it got.
// The install line itself (`npm ci`) is not re-run: CI's own `npm ci` in a fresh clone (.ci/run) has
// just run it, and running it here would rebuild the checkout under the running suite.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import sharp from 'sharp';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';
import { syntheticFigure } from '../helpers/core-fixtures.js';
import { inlineCode, readmeBlocks, readmeCommands, synopsisLines, type ReadmeCommand } from '../helpers/readme.js';

const ROOT = PACKAGE_ROOT;
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; scripts: Record<string, string> };
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

// ---------------------------------------------------------------------------------------------------
// The commands this file knows

type Check = (t: Test) => void;
interface Rule {
  match: RegExp;
  /** Why it is not run; absent: it is run below. */
  skip?: string;
  /** What is checked instead, for a skipped command. */
  check?: Check;
  /** Run by a subtest of its own rather than the npx loop. */
  special?: boolean;
}

const hasScript =
  (name: string): Check =>
  (t) =>
    t.ok(PKG.scripts[name], `package.json has the script ${name}`);

const RULES: Rule[] = [
  // Run in their own subtests below (a second server, another project), not by the npx loop.
  { match: /^openssl req -x509 .* -keyout key\.pem -out cert\.pem /, special: true },
  { match: /^npx cutout serve --tls-cert cert\.pem --tls-key key\.pem --port 8443$/, special: true },
  { match: /^curl -k .*https:\/\/localhost:8443\/v1\.0\/account$/, special: true },
  { match: /^npm install \/path\/to\/cutout$/, special: true },
  { match: /^npm install-scripts deny cutout$/, special: true },
  { match: /^npx tap dist\/test\/unit\/config\.test\.js$/ },
  { match: /^npx cutout --help$/ },
  { match: /^npx cutout serve --help$/ },
  { match: /^npx cutout --version$/ },
  { match: /^npx cutout remove \S/ },
  { match: /^npm start$/ },
  { match: /^curl .*\/v1\.0\/removebg(\s|$)/ },
  { match: /^curl .*\/v1\.0\/account(\s|$)/ },
  {
    match: /^npm ci$/,
    skip: "the install: CI's own `npm ci` in a fresh clone (.ci/run) ran it before this test; here it would rebuild the checkout under the running suite",
    check: (t) => t.match(fs.readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8'), /^\s*if ! npm ci\b/m, '.ci/run installs with npm ci'),
  },
  { match: /^npm test$/, skip: 'the suite this test is part of', check: hasScript('test') },
  { match: /^npm run lint$/, skip: "npm test's pretest runs it before this suite", check: hasScript('lint') },
  { match: /^npm run format$/, skip: 'it rewrites the checkout; npm run lint (pretest) checks that the tree is formatted', check: hasScript('format') },
  { match: /^npm run gpu$/, skip: "needs a GPU box, and downloads ONNX Runtime's CUDA provider (~180 MB)", check: hasScript('gpu') },
  ...[
    /^export CUTOUT_LEDGER_URL=postgres:\/\/\S+$/,
    /^npx cutout serve --no-demo-key$/,
    /^npx cutout keys create --credits \d+$/,
    /^npx cutout usage --since \d+$/,
  ].map(
    (match): Rule => ({
      match,
      skip: 'the Deployment section: needs a PostgreSQL at db.internal; test/integration/three-nodes.test.ts runs serve, keys and usage against a database it starts',
      check: (t) => t.ok(fs.existsSync(path.join(ROOT, 'test', 'integration', 'three-nodes.test.ts')), 'three-nodes.test.ts exists'),
    }),
  ),
  {
    match: /^docker build -f deploy\/Dockerfile --target (cpu|cuda) -t cutout:(cpu|cuda) \.$/,
    skip: 'no docker daemon here; test/unit/deploy-files.test.ts parses deploy/Dockerfile and checks its stages',
    check: (t) =>
      t.match(
        fs.readFileSync(path.join(ROOT, 'deploy', 'Dockerfile'), 'utf8'),
        /^FROM \S+ AS cpu$[\s\S]*^FROM \S+ AS cuda$/m,
        'the Dockerfile has both targets',
      ),
  },
  {
    match: /^kubectl (create secret generic cutout-ledger|apply -f deploy\/kubernetes\/)/,
    skip: 'no cluster here; test/unit/deploy-files.test.ts validates the manifests against the Kubernetes schemas',
    check: (t) => t.ok(fs.existsSync(path.join(ROOT, 'deploy', 'kubernetes', 'secret.yaml')), 'deploy/kubernetes/ has the manifests'),
  },
];

const ruleOf = (c: ReadmeCommand): Rule | undefined => RULES.find((r) => r.match.test(c.text));
const COMMANDS = readmeCommands(README);
const where = (c: ReadmeCommand) => `README.md:${c.line} (${c.section})`;
/** The README's commands matching `re`, each text once, in README order. */
function commandsLike(re: RegExp): ReadmeCommand[] {
  const seen = new Set<string>();
  return COMMANDS.filter((c) => re.test(c.text) && !seen.has(c.text) && seen.add(c.text));
}

// ---------------------------------------------------------------------------------------------------
// Processes: each in its own group, killed by pid at teardown and on exit

const liveGroups = new Set<number>();
const killGroup = (pid: number, signal: NodeJS.Signals = 'SIGKILL'): void => {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: gone already.
  }
};
process.once('exit', () => {
  for (const pid of liveGroups) killGroup(pid);
});

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'cutout-readme-'));
t.teardown(() => fs.rmSync(TMP, { recursive: true, force: true }));
const DATA = path.join(TMP, 'data');
const PHOTO = path.join(TMP, 'photo.jpg');

/** The user's shell, not `npm test`'s (see the header). */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|TAP_|_TAPJS_)/i.test(k) || k === 'INIT_CWD') continue;
    env[k] = v;
  }
  // tap's process tracking (--import=…@tapjs/processinfo…) would load into every node we start.
  const nodeOptions = (env.NODE_OPTIONS ?? '')
    .split(/\s+/)
    .filter((o) => o && !o.includes('@tapjs'))
    .join(' ');
  if (nodeOptions) env.NODE_OPTIONS = nodeOptions;
  else delete env.NODE_OPTIONS;
  env.PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((p) => !/node_modules[\\/]\.bin$/.test(p) && !p.includes('@npmcli'))
    .join(path.delimiter);
  return {
    ...env,
    CUTOUT_DATA_DIR: DATA,
    CUTOUT_HOST: '127.0.0.1',
    CUTOUT_PORT: '0',
    npm_config_cache: path.join(TMP, 'npm-cache'),
    npm_config_yes: 'false',
    npm_config_update_notifier: 'false',
  };
}

function start(command: string): ChildProcess {
  const child = spawn('sh', ['-c', command], { cwd: ROOT, env: userEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  liveGroups.add(child.pid!);
  child.once('exit', () => liveGroups.delete(child.pid!));
  return child;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run one command to its end, killed (group) after `ms`. */
function runShell(command: string, ms: number): Promise<Ran> {
  const child = start(command);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${ms} ms]`;
      killGroup(child.pid!);
    }, ms);
    child.once('close', (code) => {
      clearTimeout(timer);
      killGroup(child.pid!); // anything it left behind in its group
      resolve({ code, stdout, stderr });
    });
  });
}

// ---------------------------------------------------------------------------------------------------
// Substitutions (see the header)

const ctx = { key: '', port: 0, tlsPort: 0 };

function substitute(command: string): string {
  let s = command.replace(/<key>/g, ctx.key);
  if (ctx.port) s = s.replace(/localhost:8080/g, `localhost:${ctx.port}`);
  if (ctx.tlsPort) s = s.replace(/localhost:8443/g, `localhost:${ctx.tlsPort}`);
  s = s.replace(/--port 8443\b/g, '--port 0');
  s = s.replace(/(^|\s)(cert|key)\.pem(?=\s|$)/g, (_m, pre: string, name: string) => `${pre}${path.join(TMP, `${name}.pem`)}`);
  s = s.replace(/(^|[\s@=])photo\.jpg(?=\s|$)/g, (_m, pre: string) => `${pre}${PHOTO}`);
  s = s.replace(/(\s-o\s+)(?!\/)(\S+)/g, (_m, flag: string, p: string) => `${flag}${path.join(TMP, p)}`);
  return s;
}

async function checkCutout(t: Test, file: string, photo: { width: number; height: number }): Promise<void> {
  t.ok(fs.existsSync(file) && fs.statSync(file).isFile(), `${path.basename(file)} written`);
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) return;
  const img = sharp(fs.readFileSync(file));
  const meta = await img.metadata();
  t.same([meta.format, meta.channels, meta.hasAlpha], ['png', 4, true], 'an RGBA PNG');
  t.same([meta.width, meta.height], [photo.width, photo.height], "the photo's size");
  const alpha = await img.extractChannel(3).raw().toBuffer();
  let clear = 0;
  let solid = 0;
  for (const a of alpha) {
    if (a < 8) clear++;
    else if (a > 247) solid++;
  }
  const n = alpha.length;
  t.ok(clear / n > 0.05 && solid / n > 0.05, `a cut-out: ${((100 * clear) / n).toFixed(0)}% transparent, ${((100 * solid) / n).toFixed(0)}% opaque`);
}

/** curl -D's file: the last response's status and headers (a 100 Continue comes first). */
function readHeaders(file: string): { status: number; headers: Record<string, string> } {
  const blocks = fs
    .readFileSync(file, 'latin1')
    .split(/\r?\n\r?\n/)
    .filter((b) => b.startsWith('HTTP/'));
  const [statusLine, ...lines] = blocks[blocks.length - 1]!.split(/\r?\n/);
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers };
}

function exitsZero(t: Test, r: Ran): void {
  t.equal(r.code, 0, 'exits 0');
  if (r.code !== 0) t.comment(`stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
}

let curlN = 0;
async function curl(command: string): Promise<Ran & { status: number; headers: Record<string, string> }> {
  const dump = path.join(TMP, `headers-${++curlN}.txt`);
  const r = await runShell(`${substitute(command)} -D '${dump}'`, 60_000);
  if (r.code !== 0 || !fs.existsSync(dump)) return { ...r, status: 0, headers: {} };
  return { ...r, ...readHeaders(dump) };
}

// ---------------------------------------------------------------------------------------------------

/** The first match of `re` in a started command's output (`read`), or null once it exits without one or 90 s pass. */
function whenPrinted(server: ChildProcess, exited: Promise<unknown>, read: () => string, re: RegExp): Promise<RegExpExecArray | null> {
  return new Promise((resolve) => {
    const deadline = setTimeout(() => resolve(null), 90_000);
    const look = () => {
      const m = re.exec(read());
      if (m) {
        clearTimeout(deadline);
        resolve(m);
      }
    };
    server.stdout!.on('data', look);
    void exited.then(() => {
      clearTimeout(deadline);
      resolve(re.exec(read()));
    });
  });
}

t.test('every README command is run here or skipped by name', async (t) => {
  t.ok(COMMANDS.length >= 8, `${COMMANDS.length} commands read from README.md's shell blocks`);
  for (const c of COMMANDS) {
    const rule = ruleOf(c);
    if (!rule) {
      t.fail(`${where(c)}: \`${c.text}\` is new to test/integration/readme-commands.test.ts: run it there, or add it to RULES with a skip reason`);
    } else if (rule.skip) {
      t.pass(`${where(c)}: \`${c.text}\` not run: ${rule.skip}`);
      rule.check?.(t);
    }
  }
  for (const rule of RULES)
    t.ok(
      COMMANDS.some((c) => rule.match.test(c.text)),
      `the README still has ${rule.match}`,
    );
});

t.test('the Command line block names only what the commands know', async (t) => {
  const block = readmeBlocks(README).find((b) => b.lang === '' && b.section === 'Command line');
  t.ok(block, 'README.md has an untagged block under "## Command line"');
  const lines = block ? synopsisLines(block) : [];
  t.ok(lines.length >= 4, `${lines.length} synopsis lines`);
  const top = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' }).stdout;
  for (const line of lines) {
    const verb = line.split(/\s+/)[1]!;
    t.match(top, new RegExp(`cutout ${verb}\\b`), `cutout --help lists ${verb}`);
    const r = spawnSync(process.execPath, [CLI, verb, '--help'], { encoding: 'utf8', env: { ...process.env, CUTOUT_DATA_DIR: DATA } });
    const help = r.stdout + r.stderr;
    for (const flag of new Set(line.match(/--[a-z][\w-]*/g) ?? [])) t.ok(help.includes(flag), `cutout ${verb} --help lists ${flag}`);
    const sub = /^cutout \w+ ([a-z]+(?:\|[a-z]+)+)/.exec(line);
    for (const s of sub ? sub[1]!.split('|') : []) t.match(help, new RegExp(`cutout ${verb} ${s}\\b`), `cutout ${verb} --help lists ${s}`);
  }
});

t.test("cutout --help's own synopsis names only what each command knows, --device included", async (t) => {
  const top = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' }).stdout;
  // A verb's line and the more-indented lines that continue it.
  const synopsis = new Map<string, string>();
  let verb: string | undefined;
  for (const line of top.split('\n')) {
    const m = /^ {2}cutout (\w+)/.exec(line);
    if (m) synopsis.set((verb = m[1]!), line);
    else if (verb && /^ {4,}\S/.test(line)) synopsis.set(verb, `${synopsis.get(verb)} ${line}`);
    else verb = undefined;
  }
  for (const v of ['serve', 'remove']) t.match(synopsis.get(v) ?? '', /--device\b/, `cutout --help's ${v} line names --device`);
  for (const [v, line] of synopsis) {
    if (v === 'keys' || v === 'usage') continue; // their flags belong to the subcommands
    const r = spawnSync(process.execPath, [CLI, v, '--help'], { encoding: 'utf8', env: { ...process.env, CUTOUT_DATA_DIR: DATA } });
    for (const flag of new Set(line.match(/--[a-z][\w-]*/g) ?? []))
      t.ok((r.stdout + r.stderr).includes(flag), `cutout ${v} --help lists ${flag}, as cutout --help says`);
  }
});

t.test('every inline npm script and dist file exists', async (t) => {
  const spans = [...new Set(inlineCode(README))];
  for (const span of spans) {
    const script = /^npm (?:run ([\w:-]+)|(start|test))\b/.exec(span);
    if (script) t.ok(PKG.scripts[script[1] ?? script[2]!], `\`${span}\`: package.json has the script`);
    const file = /^node (dist\/\S+\.js)\b/.exec(span);
    if (file) t.ok(fs.existsSync(path.join(ROOT, file[1]!)), `\`${span}\`: the build wrote ${file[1]}`);
  }
  t.ok(
    spans.some((s) => s.startsWith('npm run ')),
    'inline npm scripts found',
  );
});

t.test('the commands, as a new user runs them', async (t) => {
  // A photo of a subject as the README's photo.jpg.
  fs.writeFileSync(PHOTO, await syntheticFigure(854, 480));
  const photo = { width: 854, height: 480 };
  fs.mkdirSync(path.join(TMP, 'npm-cache'));

  const built = ['dist/src/cli/main.js', 'build/Release/cutout.node'].map((f) => path.join(ROOT, f));
  const stamps = built.map((f) => fs.statSync(f).mtimeMs);

  // Only the known ones: an unknown one has failed the first test already.
  for (const c of commandsLike(/^npx cutout |^npx tap /).filter((c) => ruleOf(c) && !ruleOf(c)!.skip && !ruleOf(c)!.special)) {
    await t.test(`\`${c.text}\` (${where(c)})`, async (t) => {
      const args = c.text.split(' ').slice(2);
      const r = await runShell(substitute(c.text), args[0] === 'remove' ? 120_000 : 60_000);
      exitsZero(t, r);
      if (c.text === 'npx cutout --help') {
        t.match(r.stdout, /^Usage:/m);
        for (const verb of ['serve', 'remove', 'keys', 'usage']) t.match(r.stdout, new RegExp(`cutout ${verb}\\b`));
      } else if (c.text === 'npx cutout serve --help') {
        t.match(r.stdout, /^Usage: cutout serve/m);
        t.match(r.stdout, /--port PORT .*default 8080/, "8080, the port the README's curl lines use, is the default");
      } else if (c.text === 'npx cutout --version') {
        t.equal(r.stdout.trim(), PKG.version);
      } else if (args[0] === 'dist/test/unit/config.test.js') {
        t.match(r.stdout, /^# \{ total: \d+, pass: \d+ \}$/m, 'one test file runs, and passes');
      } else {
        t.ok(args.includes('photo.jpg'), 'the README removes photo.jpg');
        const o = args.indexOf('-o');
        const out = o >= 0 ? path.join(TMP, args[o + 1]!, 'photo.png') : path.join(TMP, 'photo.cutout.png');
        t.match(r.stdout, /^1 done, 0 failed, 0 skipped in [\d.]+ s$/m);
        await checkCutout(t, out, photo);
      }
    });
  }
  // npx linked this checkout into its (fresh) cache, so the first-run path was taken …
  const npx = path.join(TMP, 'npm-cache', '_npx');
  const links = fs.existsSync(npx) ? fs.readdirSync(npx).map((h) => path.join(npx, h, 'node_modules', 'cutout')) : [];
  t.ok(
    links.some((l) => fs.existsSync(l) && fs.realpathSync(l) === fs.realpathSync(ROOT)),
    "npx linked the checkout into its cache (its first run here, which runs the checkout's install script)",
  );
  // … and that did not rebuild it.
  t.same(
    built.map((f) => fs.statSync(f).mtimeMs),
    stamps,
    'npx did not rebuild the checkout (src/install/install.mjs skips the build under npx)',
  );

  await t.test('`npm start`, then the curl lines', async (t) => {
    const [startCmd] = commandsLike(/^npm start$/);
    t.ok(startCmd, 'the README starts the server with npm start');
    if (!startCmd) return;
    const server = start(startCmd.text);
    let out = '';
    server.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    server.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    /** Ctrl-C, as a user stops it (SIGINT to the group); SIGKILL after 20 s; then nothing is left. */
    const stop = async (): Promise<boolean> => {
      killGroup(server.pid!, 'SIGINT');
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        killGroup(server.pid!);
      }, 20_000);
      await exited;
      clearTimeout(timer);
      killGroup(server.pid!);
      return !killed;
    };
    t.teardown(stop);

    const listening = await whenPrinted(server, exited, () => out, /cutout listening on http:\/\/[^:\s]+:(\d+) \(data: (.*)\)/);
    t.ok(listening, 'npm start listens within 90 s');
    if (!listening) {
      t.comment(out);
      return;
    }
    t.equal(listening[2], DATA, 'on the empty data folder');
    const key = /Demo API key \(shown once\): (\S+)/.exec(out);
    t.ok(key, 'prints the demo key on first start');
    if (!key) return;
    ctx.key = key[1]!;
    ctx.port = Number(listening[1]);

    const hasCurl = spawnSync('sh', ['-c', 'command -v curl']).status === 0;
    const curls = commandsLike(/^curl /);
    if (!hasCurl) {
      t.pass('the curl lines', { skip: `curl is not installed here: not run: ${curls.map((c) => c.text).join(' | ')}` });
      return;
    }
    const removebg = curls.find((c) => /\/v1\.0\/removebg(\s|$)/.test(c.text));
    const account = curls.find((c) => /\/v1\.0\/account(\s|$)/.test(c.text));
    t.ok(removebg && account, 'the README has both curl lines');
    if (!removebg || !account) return;
    for (const c of [removebg, account]) {
      t.match(c.text, /<key>/, `${where(c)} takes the key as <key>`);
      t.match(c.text, /localhost:8080/, `${where(c)} calls localhost:8080`);
    }

    const credits = async (label: string): Promise<number | undefined> => {
      const r = await curl(account.text);
      exitsZero(t, r);
      t.equal(r.status, 200, `${label}: \`${account.text}\` answers 200`);
      let body: any;
      try {
        body = JSON.parse(r.stdout);
      } catch {
        t.fail(`${label}: the account call prints JSON: ${r.stdout}`);
        return undefined;
      }
      t.match(
        body,
        {
          data: {
            attributes: { credits: { total: Number, subscription: Number, payg: Number, enterprise: Number }, api: { free_calls: Number, sizes: String } },
          },
        },
        `${label}: the account JSON has remove.bg's shape`,
      );
      return body?.data?.attributes?.credits?.total as number | undefined;
    };

    const before = await credits('before');
    const r = await curl(removebg.text);
    exitsZero(t, r);
    t.equal(r.status, 200, `\`${removebg.text}\` answers 200`);
    t.equal(r.headers['content-type'], 'image/png');
    t.equal(r.headers['x-credits-charged'], '1', 'X-Credits-Charged: 1');
    const outFile = /\s-o\s+(\S+)/.exec(substitute(removebg.text))?.[1];
    t.ok(outFile, 'the removebg line writes its answer with -o');
    if (outFile) await checkCutout(t, outFile, photo);
    const after = await credits('after');
    t.ok(typeof before === 'number' && before > 0, `the demo key has credits (${before})`);
    t.equal(after, (before ?? NaN) - 1, 'the balance went down by one');

    t.ok(await stop(), 'Ctrl-C stops npm start within 20 s');
    t.match(out, /cutout serve: stopped/);
  });

  await t.test('Serving over TLS: the certificate, the HTTPS server, the curl line', async (t) => {
    const [openssl] = commandsLike(/^openssl req /);
    const [serve] = commandsLike(/^npx cutout serve --tls-cert /);
    const [get] = commandsLike(/^curl -k /);
    t.ok(openssl && serve && get, 'the README has the three lines');
    if (!openssl || !serve || !get || !ctx.key) return;
    const made = await runShell(substitute(openssl.text), 60_000);
    exitsZero(t, made);
    t.ok(fs.existsSync(path.join(TMP, 'cert.pem')) && fs.existsSync(path.join(TMP, 'key.pem')), 'cert.pem and key.pem written');
    const server = start(substitute(serve.text));
    let out = '';
    server.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    server.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    t.teardown(() => killGroup(server.pid!));
    const url = await whenPrinted(server, exited, () => out, /cutout listening on (https?):\/\/[^:\s]+:(\d+)/);
    t.ok(url, 'the TLS server listens');
    if (!url) {
      t.comment(out);
      return;
    }
    t.equal(url[1], 'https', 'on https');
    ctx.tlsPort = Number(url[2]);
    const r = await curl(get.text);
    exitsZero(t, r);
    t.equal(r.status, 200, `\`${get.text}\` answers 200 over HTTPS`);
    t.match(JSON.parse(r.stdout || '{}'), { data: { attributes: { credits: { total: Number } } } }, 'the account JSON');
    // Ctrl-C, as for npm start: the whole group gets SIGINT (sh's own status is the signal's).
    killGroup(server.pid!, 'SIGINT');
    const timer = setTimeout(() => killGroup(server.pid!), 20_000);
    await exited;
    clearTimeout(timer);
    t.match(out, /cutout serve: stopped/, 'Ctrl-C stops it');
  });

  await t.test('Use it as a library: another project installs the checkout and runs the example', async (t) => {
    const installs = commandsLike(/^npm install(-scripts deny)? /);
    t.same(
      installs.map((c) => c.text),
      ['npm install /path/to/cutout', 'npm install-scripts deny cutout'],
    );
    const js = readmeBlocks(README).find((b) => b.lang === 'js' && b.section === 'Use it as a library');
    t.ok(js, 'the section has a js block');
    if (!js) return;
    const project = path.join(TMP, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'project', version: '1.0.0', private: true }));
    fs.copyFileSync(PHOTO, path.join(project, 'photo.jpg'));
    const stamp = fs.statSync(path.join(ROOT, 'dist', 'src', 'cli', 'main.js')).mtimeMs;
    for (const c of installs) {
      const r = await runShell(`cd '${project}' && ${c.text.replace('/path/to/cutout', ROOT)}`, 120_000);
      exitsZero(t, r);
    }
    t.equal(fs.statSync(path.join(ROOT, 'dist', 'src', 'cli', 'main.js')).mtimeMs, stamp, 'the checkout was not rebuilt');
    t.equal(fs.realpathSync(path.join(project, 'node_modules', 'cutout')), fs.realpathSync(ROOT), 'node_modules/cutout is the checkout');
    const printed = 'console.log(JSON.stringify({ width: out.width, height: out.height, type: out.contentType, bytes: out.data.length }));';
    fs.writeFileSync(path.join(project, 'example.mjs'), `${js.lines.filter((l) => !/^\s*\/\//.test(l)).join('\n')}\n${printed}\n`);
    const r = await runShell(`cd '${project}' && node example.mjs`, 180_000);
    exitsZero(t, r);
    const got = JSON.parse(r.stdout.trim().split('\n').pop() || '{}') as { width?: number; height?: number; type?: string; bytes?: number };
    t.same([got.width, got.height, got.type], [photo.width, photo.height, 'image/png'], 'the cut-out at full size, as PNG');
    t.ok((got.bytes ?? 0) > 1000, `${got.bytes} bytes`);
  });
});
