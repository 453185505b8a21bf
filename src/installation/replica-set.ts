/**
 * The cluster topology of the compose runtime: three mongod members of one replica set
 * (compose.cluster.yaml layered over compose.yaml). This module holds what the installer derives
 * from it: the members' names, the clients' connection string, and the keyFile the members
 * authenticate each other with. The local runtime's engine (FerretDB, or one mongod) stays a
 * single node.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../pki/files.js';

/** `replication.replSetName` in docker/mongod.cluster.conf and `_id` of the replica set's configuration. */
export const REPLICA_SET_NAME = 'cybercom';
/** Compose service names of the members, the first the preferred primary (the one whose port is published). */
export const REPLICA_SET_MEMBERS = ['mongo', 'mongo-2', 'mongo-3'] as const;
/** The services compose.cluster.yaml adds for the database (for status and logs). */
export const REPLICA_SET_SERVICES = ['mongo-2', 'mongo-3', 'mongo-replica-set'] as const;
/** Layered over compose.yaml when the topology is cluster. */
export const CLUSTER_COMPOSE_FILE = 'compose.cluster.yaml';
const MEMBER_PORT = 27017;

/**
 * The API's and the local worker's MONGO_URI inside the stack. Every member is listed, so the
 * driver finds the primary from any of them; every write is acknowledged by a majority of the
 * members (a write the API has confirmed survives the loss of any one), and one failed write or
 * read is retried once on the new primary after a failover. The driver retries by default; the
 * options are spelled out so the connection string says what the installation relies on.
 */
export function replicaSetUri(): string {
  const hosts = REPLICA_SET_MEMBERS.map((member) => `${member}:${MEMBER_PORT}`).join(',');
  return `mongodb://${hosts}/?replicaSet=${REPLICA_SET_NAME}&w=majority&retryWrites=true&retryReads=true`;
}

/**
 * A remote worker's MONGO_URI: the members' names resolve only inside the stack, so it talks to
 * the published first member alone (directConnection), with the same write acknowledgement. Its
 * writes succeed while that member is primary, which it is by preference.
 */
export function publishedMemberUri(address: string, port: number): string {
  return `mongodb://${address}:${port}/?directConnection=true&w=majority&retryWrites=true&retryReads=true`;
}

/**
 * 756 random bytes, as `openssl rand -base64 756` in MongoDB's instructions: 1008 base64
 * characters, within mongod's limit of 1024 and from the base64 set it requires.
 */
const KEY_FILE_BYTES = 756;
const KEY_FILE_PATTERN = /^[A-Za-z0-9+/=]{6,1024}$/;

export function generateKeyFile(): string {
  return `${randomBytes(KEY_FILE_BYTES).toString('base64')}\n`;
}

/** What mongod accepts as a keyFile (whitespace is ignored by mongod, so it is here). */
export function isValidKeyFile(text: string): boolean {
  return KEY_FILE_PATTERN.test(text.replace(/\s+/g, ''));
}

/**
 * The installation's keyFile (config/, 0600, backed up with the other secrets): kept when
 * present and valid, generated otherwise. The members of a running replica set all hold the same
 * one, so it is never replaced behind their back.
 */
export async function ensureKeyFile(file: string): Promise<{ keyFile: string; generated: boolean }> {
  const existing = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (existing !== undefined && isValidKeyFile(existing)) return { keyFile: existing, generated: false };
  const keyFile = generateKeyFile();
  await writeFileAtomic(file, keyFile, 0o600);
  return { keyFile, generated: true };
}
