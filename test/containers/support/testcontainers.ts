/**
 * testcontainers as this machine needs it: the engine is Podman behind its Docker-compatible
 * socket, and no image can be pulled from a registry, so every container runs an image built
 * here (build-base-image.sh, build-standins.sh, the installer's own builds).
 *
 * Importing this module sets testcontainers' settings before its first use:
 *   - no Ryuk: the reaper is an image pulled from Docker Hub. Each run removes what it made
 *     itself, and what a killed run left is removed by the next one (leftovers.ts);
 *   - the engine's published ports are reached on this host's loopback: this machine is itself a
 *     container (it has /.dockerenv), where testcontainers would otherwise dial the Podman
 *     network's gateway instead;
 *   - DOCKER_HOST defaults to Podman's socket, as for the `docker` CLI and compose.
 * Pull policy: testcontainers' default, which pulls an image only when it is missing here (never
 * "always"); every image these tests use is built on this machine, so a pull can only mean a
 * missing build, and it fails (no registry is reachable).
 */
import { GenericContainer, PullPolicy, type StartedTestContainer } from 'testcontainers';
import { DEFAULT_DOCKER_HOST } from './engine.js';

process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';
process.env.DOCKER_HOST ??= DEFAULT_DOCKER_HOST;

/** For every container and compose environment of these tests: images come from this machine. */
export const LOCAL_IMAGES = PullPolicy.defaultPolicy();

/** Label on the containers a test starts, so a later run can find what a killed one left. */
export const TEST_LABEL = 'org.cybercom-ts.test';

/**
 * A GenericContainer on a locally built image that can publish a port on loopback only
 * (testcontainers publishes on every address; the servers under test are reached from this host).
 */
export class LocalContainer extends GenericContainer {
  constructor(image: string, test: string) {
    super(image);
    this.withPullPolicy(LOCAL_IMAGES).withLabels({ [TEST_LABEL]: test });
  }

  /**
   * Publishes each port on 127.0.0.1 at a free port (read it with getMappedPort). Podman 4 (Debian
   * 12) reports every port the image EXPOSEs in the container's inspect result, published or not,
   * and testcontainers' start waits until each one reported is published: publish them all.
   */
  withLoopbackPorts(...ports: number[]): this {
    this.withExposedPorts(...ports);
    for (const port of ports) {
      this.hostConfig.PortBindings = { ...this.hostConfig.PortBindings, [`${port}/tcp`]: [{ HostIp: '127.0.0.1', HostPort: '0' }] };
    }
    return this;
  }
}

/**
 * Keeps a container's output from its start (testcontainers' log consumer), so a failure can show
 * it even after testcontainers removed a container that never became ready.
 */
export class CapturedLogs {
  private readonly lines: string[] = [];

  constructor(readonly name: string) {}

  readonly consumer = (stream: NodeJS.ReadableStream): void => {
    stream.on('data', (chunk: Buffer | string) => {
      for (const line of chunk.toString().split('\n')) if (line.trim()) this.lines.push(line);
    });
  };

  tail(count = 40): string {
    return [`-- last lines of ${this.name} --`, ...this.lines.slice(-count)].join('\n');
  }
}

/** Stops (and removes, with its anonymous volumes) each started container; reports, never throws. */
export async function stopAll(containers: Array<StartedTestContainer | undefined>): Promise<void> {
  const started = containers.filter((c): c is StartedTestContainer => c !== undefined);
  await Promise.all(
    started.map((container) =>
      container.stop({ remove: true, removeVolumes: true, timeout: 10_000 }).catch((err: Error) => {
        console.log(`  stopping ${container.getName()}: ${err.message}`);
      }),
    ),
  );
}
