import { existsSync } from 'node:fs';
import { GenericContainer, getContainerRuntimeClient, Wait } from 'testcontainers';

// The PostGIS image is built locally from Debian packages (scripts/podman/build-postgis-image): this
// machine cannot pull from a registry. Testcontainers talks to podman's Docker-compatible API socket.

export const POSTGIS_IMAGE = 'localhost/chronomap-postgis:15';
const PODMAN_SOCKET = '/run/podman/podman.sock';
const START_TIMEOUT_MS = 180_000;

/** Points Testcontainers at podman's socket when no Docker engine is configured; false when neither exists. */
function useContainerEngine(): boolean {
  if (!process.env.DOCKER_HOST && existsSync(PODMAN_SOCKET)) {
    process.env.DOCKER_HOST = `unix://${PODMAN_SOCKET}`;
  }
  // Ryuk (the reaper container) would need pulling from a registry; global-teardown removes ours.
  process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

export async function startPostgisContainer(
  log: (line: string) => void,
): Promise<{ url: string; id: string } | undefined> {
  if (!useContainerEngine()) return undefined;
  try {
    const client = await getContainerRuntimeClient();
    if (!(await client.image.exists({ string: POSTGIS_IMAGE } as never))) {
      log(
        `container engine found but image ${POSTGIS_IMAGE} is missing (scripts/podman/build-postgis-image builds it)`,
      );
      return undefined;
    }
  } catch (error) {
    log(`no usable container engine (${(error as Error).message.split('\n')[0]})`);
    return undefined;
  }
  // podman 4.3 can hang an API call under concurrent storage changes (fixed in 4.4): rather than
  // hang the whole run, give up after a while and let the suite use the embedded cluster.
  const starting = new GenericContainer(POSTGIS_IMAGE)
    .withExposedPorts(5432)
    // podman's Docker-compatible API does not apply containers.conf's default_ulimits, and runc
    // cannot raise NPROC to the service's own limit here: ask for modest limits explicitly.
    .withUlimits({ nproc: { soft: 4096, hard: 4096 }, nofile: { soft: 8192, hard: 8192 } })
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/))
    .withStartupTimeout(120_000)
    .start();
  starting.catch(() => {}); // a failure after we stopped waiting must not crash the set-up
  let container: Awaited<typeof starting> | undefined;
  try {
    container = await Promise.race([
      starting,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), START_TIMEOUT_MS).unref()),
    ]);
  } catch (error) {
    // podman 4.3 sometimes fails a start with a transient "broken pipe"; the embedded cluster serves.
    log(`the container engine could not start ${POSTGIS_IMAGE} (${(error as Error).message.split('\n')[0]})`);
    return undefined;
  }
  if (!container) {
    log(`the container engine did not start ${POSTGIS_IMAGE} within ${START_TIMEOUT_MS / 1000} s`);
    return undefined;
  }
  return {
    url: `postgres://postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`,
    id: container.getId(),
  };
}

export async function removeContainer(id: string): Promise<void> {
  useContainerEngine();
  const client = await getContainerRuntimeClient();
  const container = client.container.getById(id);
  await client.container.stop(container, { timeout: 5 });
  await client.container.remove(container, { removeVolumes: true });
}
