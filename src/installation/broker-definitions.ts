/**
 * RabbitMQ definitions for the installation: the vhost and three users (an administrator for
 * operations, the API, the workers), imported by the broker at every boot in both runtimes, so a
 * changed password reaches an existing node with a restart. Password hashes follow RabbitMQ's
 * rabbit_password_hashing_sha256: base64(salt ‖ SHA-256(salt ‖ password)) with a 4-byte salt.
 * The salt is derived from SECRET_KEY (not random) so the file is byte-identical across re-runs.
 */
import { createHash, createHmac } from 'node:crypto';
import { ACCOUNTS, type Secrets } from './secrets.js';

export function rabbitPasswordHash(password: string, salt: Buffer): string {
  if (salt.length !== 4) throw new RangeError('RabbitMQ uses a 4-byte salt');
  const digest = createHash('sha256')
    .update(Buffer.concat([salt, Buffer.from(password, 'utf8')]))
    .digest();
  return Buffer.concat([salt, digest]).toString('base64');
}

function saltFor(secretKey: string, username: string, password: string): Buffer {
  return createHmac('sha256', secretKey).update(`${username}\0${password}`).digest().subarray(0, 4);
}

export function brokerDefinitions(secrets: Secrets): object {
  const users = [
    { name: ACCOUNTS.broker.admin, password: secrets.BROKER_ADMIN_PASSWORD, tags: 'administrator' },
    { name: ACCOUNTS.broker.api, password: secrets.BROKER_API_PASSWORD, tags: '' },
    { name: ACCOUNTS.broker.worker, password: secrets.BROKER_WORKER_PASSWORD, tags: '' },
  ];
  return {
    users: users.map((u) => ({
      name: u.name,
      password_hash: rabbitPasswordHash(u.password, saltFor(secrets.SECRET_KEY, u.name, u.password)),
      hashing_algorithm: 'rabbit_password_hashing_sha256',
      tags: u.tags,
    })),
    vhosts: [{ name: ACCOUNTS.vhost }],
    // Celery's workers and its remote control declare their own exchanges and reply queues, so
    // both clients need configure rights on the vhost; separation is by identity (revocable).
    permissions: users.map((u) => ({ user: u.name, vhost: ACCOUNTS.vhost, configure: '.*', write: '.*', read: '.*' })),
  };
}

export function renderBrokerDefinitions(secrets: Secrets): string {
  return `${JSON.stringify(brokerDefinitions(secrets), null, 2)}\n`;
}
