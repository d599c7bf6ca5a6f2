// What bin/cutout adds to node's environment when it starts the CLI, for the programs that start
// `cutout` without it (the benches' servers, bench:compare's checkouts; deploy/Dockerfile sets the
// same for its entry point, checked by test/unit/deploy-files.test.ts): glibc's malloc backs its
// mmapped blocks with transparent huge pages (docs/memory.md, "Huge pages"). Read by glibc only when
// a process starts, so it cannot be set from inside. A value the caller set is kept.

export const HUGE_PAGE_TUNABLES = 'glibc.malloc.hugetlb=1';

/** `env` as bin/cutout passes it on to node. */
export function launchEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return env.GLIBC_TUNABLES === undefined ? { ...env, GLIBC_TUNABLES: HUGE_PAGE_TUNABLES } : env;
}
