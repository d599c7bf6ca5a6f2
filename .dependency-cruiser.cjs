// The layers of src/, top to bottom, and the imports that would run back up them (docs/layers.md).
// `npm test` runs this first (pretest → lint:layers): an upward import fails it with the rule's name.
// Type-only imports count too: a type is a dependency of the module that names it.

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle makes two modules one: neither can be read, tested or moved alone.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'nothing-imports-cli',
      comment: 'cli/ is the top: every command line and script entry point (each *-cli.ts) lives there and nothing imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: ['^src/cli/', '-cli\\.ts$'] },
    },
    {
      name: 'clis-live-in-cli',
      comment: 'An entry point (*-cli.ts) outside cli/ would hide a top-layer module among the layers below.',
      severity: 'error',
      from: { path: '-cli\\.ts$', pathNot: '^src/cli/' },
      to: {},
    },
    {
      name: 'http-not-above-api',
      comment: 'http/ serves whatever route table its caller hands it (ServerDeps.api); it imports nothing of api/, web/, lib/.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(api|web|lib)/' },
    },
    {
      name: 'http-not-into-process',
      comment: 'http/ names the shapes it needs (http/memory-pressure.ts); process/ implements them.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/process/' },
    },
    {
      name: 'services-not-above-http',
      comment: 'What the api uses (ledger, pool, fetch, image) and what runs in the workers know nothing of HTTP or of their callers.',
      severity: 'error',
      from: { path: '^src/(ledger|pool|fetch|image|worker|native|domain|process)/' },
      to: { path: '^src/(http|api|web|lib)/' },
    },
    {
      name: 'worker-not-into-pool',
      comment: 'The workers share one module with the pool, its protocol (pool/protocol.ts), and import nothing else of pool/.',
      severity: 'error',
      from: { path: '^src/worker/' },
      to: { path: '^src/pool/', pathNot: '^src/pool/protocol\\.ts$' },
    },
    {
      name: 'pool-not-into-worker',
      comment: 'The pool starts the workers by file name and talks to them through pool/protocol.ts only.',
      severity: 'error',
      from: { path: '^src/pool/' },
      to: { path: '^src/worker/' },
    },
    {
      name: 'process-not-into-observe',
      comment: 'process/ carries the metrics between processes (process/metric-json.ts); observe/ merges and serves them.',
      severity: 'error',
      from: { path: '^src/process/' },
      to: { path: '^src/observe/' },
    },
    {
      name: 'only-worker-loads-native',
      comment: 'The addon is loaded in the workers; others may only name where it is (native/addon-path.ts).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(worker|native)/' },
      to: { path: '^src/native/', pathNot: '^src/native/addon-path\\.ts$' },
    },
    {
      name: 'domain-at-bottom',
      comment: 'domain/ is imported by anyone and imports nothing of ours.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'config-at-bottom',
      comment: 'config.ts is imported by anyone; it should import nothing above domain/.',
      severity: 'error',
      from: { path: '^src/config\\.ts$' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|test|bench)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    reporterOptions: { text: { highlightFocused: true } },
  },
};
