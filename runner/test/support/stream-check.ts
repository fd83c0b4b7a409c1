// For the sandbox tests that reach the stand-in outside host on TCP 443, 80 and 53: the stream
// check those ports are redirected to (the firewall refuses them when it is not running), and
// the stand-in host accepted as a DNS resolver (the firewall lets DNS go to SCRAPER_DNS only),
// both until the test ends.
import { spawnSync } from 'node:child_process';
import type { Test } from 'tap';
import type { RunnerConfig } from '../../src/config.ts';
import { sandboxSubnets } from '../../src/sandbox/preflight.ts';
import { startStreamCheck, type StreamCheckProcess } from '../../src/sandbox/stream-check/launch.ts';
import { WAN_ADDRESS } from './wan-host.ts';

export async function withStreamCheck(t: Test, config: RunnerConfig): Promise<StreamCheckProcess> {
  const check = await startStreamCheck(config.streamCheckPort, await sandboxSubnets(config));
  t.teardown(() => check.stop());
  const resolver = ['-d', WAN_ADDRESS, '-j', 'RETURN'];
  t.equal(
    spawnSync('iptables', ['-t', 'raw', '-I', 'CHRONOMAP_DNS', '1', ...resolver]).status,
    0,
    'resolver rule',
  );
  t.teardown(() => void spawnSync('iptables', ['-t', 'raw', '-D', 'CHRONOMAP_DNS', ...resolver]));
  return check;
}
