/**
 * What an earlier run left behind when it could not clean up (killed, or CYBERCOM_E2E_KEEP=1,
 * SMOKE_KEEP=1): its compose project, its remote host, its work directories, the containers and
 * network of the smoke test. Removed before a run starts, and by `stack.e2e.ts --clean`. A
 * compose project of the same name that this test did not make (its env file is not in one of
 * our work directories) is never touched: the run stops instead. Without testcontainers' reaper
 * (see testcontainers.ts) this is what removes a killed run's containers.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getContainerRuntimeClient } from 'testcontainers';
import { run } from './engine.js';
import type { RemoteHost } from './remote-host.js';
import { TEST_LABEL } from './testcontainers.js';

/** The engine's API client that testcontainers uses (Podman's socket, see testcontainers.ts). */
async function engineApi() {
  return (await getContainerRuntimeClient()).container.dockerode;
}

/**
 * Removes the containers (with their volumes) a test labelled, then its networks (by name prefix): what a
 * killed run left, and a container whose start failed half-way (testcontainers hands back no
 * handle for it). Each is stopped, then removed with its volumes: a forced removal of a running
 * container once left its anonymous volume behind on this Podman 4.
 */
export async function removeTestContainers(test: string, networkPrefix: string): Promise<void> {
  const api = await engineApi();
  const containers = await api.listContainers({ all: true, filters: { label: [`${TEST_LABEL}=${test}`] } });
  for (const c of containers) {
    const container = api.getContainer(c.Id);
    if (c.State === 'running') await container.stop({ t: 10 });
    await container.remove({ v: true });
  }
  for (const network of await api.listNetworks()) {
    if (network.Name.startsWith(networkPrefix)) await api.getNetwork(network.Id).remove();
  }
  if (containers.length > 0) console.log(`  removed ${containers.length} container(s) left by the ${test} test`);
}

export const WORK_PREFIX = 'cybercom-e2e-';

function isOurs(envFile: string | undefined): boolean {
  return envFile !== undefined && envFile.startsWith(join(tmpdir(), WORK_PREFIX));
}

export async function removeLeftovers(project: string, remote: RemoteHost, composeFiles: string[]): Promise<void> {
  const api = await engineApi();
  const label = `com.docker.compose.project=${project}`;
  const containers = await api.listContainers({ all: true, filters: { label: [label] } });
  const strangers = containers.filter((c) => !isOurs(c.Labels['com.docker.compose.project.environment_file']));
  if (strangers.length > 0) {
    throw new Error(
      `a compose project "${project}" that this test did not make exists (${strangers.map((c) => c.Names.join(',')).join(' ')}); the test would replace it, so it stops`,
    );
  }
  if (containers.length > 0) {
    console.log(`  removing the compose project "${project}" left by an earlier run`);
    const envFile = containers[0]?.Labels['com.docker.compose.project.environment_file'];
    if (envFile && existsSync(envFile)) {
      await run(
        'docker',
        [
          'compose',
          ...composeFiles.flatMap((f) => ['-f', f]),
          '--env-file',
          envFile,
          '-p',
          project,
          'down',
          '--volumes',
          '--remove-orphans',
          '--timeout',
          '10',
        ],
        { timeoutMs: 300_000 },
      );
    } else {
      for (const c of containers) await api.getContainer(c.Id).remove({ force: true, v: true });
      for (const v of (await api.listVolumes({ filters: { label: [label] } })).Volumes ?? []) await api.getVolume(v.Name).remove();
      for (const n of await api.listNetworks({ filters: { label: [label] } })) await api.getNetwork(n.Id).remove();
    }
  }
  await remote.tearDown();
  for (const entry of readdirSync(tmpdir())) {
    if (entry.startsWith(WORK_PREFIX)) rmSync(join(tmpdir(), entry), { recursive: true, force: true });
  }
}
