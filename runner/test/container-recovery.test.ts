// A `podman run` that hangs before it has created its container (podman 4.3's --userns=auto
// deadlock) is killed and retried; one that fails outright is reported as it is. A stand-in
// podman script plays the engine: it "creates" the container by writing the cid file.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startContainer } from '../src/sandbox/container.ts';

const dir = mkdtempSync(join(tmpdir(), 'chronomap-fake-podman-'));
const spec = {
  name: 'chronomap-run-test',
  instanceLabel: 'test',
  image: 'img',
  command: ['true'],
  codeDir: dir,
  outputDir: dir,
  tmpDir: undefined,
  envFile: join(dir, 'env'),
  owner: '1.1',
  hardTimeoutSecs: 60,
  memoryMb: 64,
  cpus: 1,
  maxOutputBytes: 1000,
  network: 'n',
  dnsServers: ['1.1.1.1'],
  seccompProfile: 'p',
  cidFile: join(dir, 'cid'),
  disableIpv6: true,
};

/**
 * A podman whose n-th `run` (counted in a file) runs `createScript` and then, unless that
 * script ended it, writes the cid file (given as its third argument) and "runs" the scraper.
 */
function fakePodman(name: string, createScript: string): { path: string; creates: () => number } {
  const path = join(dir, name);
  const counter = join(dir, `${name}.creates`);
  writeFileSync(
    path,
    `#!/bin/sh
case "$1" in
  run)
    [ "$2" = --cidfile ] || exit 99
    [ -e "$3" ] && { echo "Error: container id file exists" >&2; exit 125; }
    n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n + 1)); echo $n > ${counter}
    ${createScript}
    echo fake-id > "$3"
    echo "ran after $n creates"; exit 0 ;;
  *) exit 0 ;;
esac
`,
  );
  chmodSync(path, 0o755);
  return { path, creates: () => Number(readFileSync(counter, 'utf8')) };
}

t.test('a run that hangs before creating its container is killed and tried again', async (t) => {
  const podman = fakePodman('hangs-once', 'if [ $n = 1 ]; then exec sleep 600; fi');
  const result = await startContainer(spec, { podman: podman.path, maxLogBytes: 1000, createTimeoutMs: 500 })
    .result;
  t.equal(result.engineError, undefined);
  t.equal(result.exitCode, 0);
  t.equal(result.stdout, 'ran after 2 creates\n');
});

t.test('a run that keeps hanging is reported as an engine error after two attempts', async (t) => {
  const podman = fakePodman('hangs-always', 'exec sleep 600');
  const result = await startContainer(spec, { podman: podman.path, maxLogBytes: 1000, createTimeoutMs: 300 })
    .result;
  t.match(
    result.engineError,
    /podman did not create the container within 0\.3 s \(killed after 2 attempts\)/,
  );
  t.equal(podman.creates(), 2);
});

t.test("a run that fails is reported with podman's message, without retrying", async (t) => {
  const podman = fakePodman('fails', "echo 'Error: no such network' >&2; exit 125");
  const result = await startContainer(spec, { podman: podman.path, maxLogBytes: 1000, createTimeoutMs: 5000 })
    .result;
  t.equal(result.engineError, 'Error: no such network');
  t.equal(podman.creates(), 1);
});
