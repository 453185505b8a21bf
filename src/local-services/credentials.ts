/**
 * Generated service credentials for a local deployment, kept in `<stateDir>/credentials.json`
 * (mode 0600) so a restarted deployment logs into the users its data directories already hold.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../pki/files.js';

export interface LocalCredentials {
  mongo: { username: string; password: string };
  broker: { username: string; password: string; vhost: string };
}

/** URL-safe secrets: nothing to escape in URIs, rabbitmq.conf or command-line flags. */
function secret(): string {
  return randomBytes(24).toString('base64url');
}

function isCredentials(value: unknown): value is LocalCredentials {
  const v = value as LocalCredentials | null;
  const str = (s: unknown): boolean => typeof s === 'string' && s.length > 0;
  return (
    !!v && str(v.mongo?.username) && str(v.mongo?.password) && str(v.broker?.username) && str(v.broker?.password) && str(v.broker?.vhost)
  );
}

export function credentialsFile(stateDir: string): string {
  return join(stateDir, 'credentials.json');
}

/** The stored credentials, or new ones (then `created` is true and they are saved). */
export async function ensureCredentials(stateDir: string): Promise<{ credentials: LocalCredentials; created: boolean }> {
  const file = credentialsFile(stateDir);
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (isCredentials(parsed)) return { credentials: parsed, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && !(err instanceof SyntaxError)) throw err;
  }
  const credentials: LocalCredentials = {
    mongo: { username: 'cybercom', password: secret() },
    broker: { username: 'cybercom', password: secret(), vhost: 'cybercom' },
  };
  await writeFileAtomic(file, `${JSON.stringify(credentials, null, 2)}\n`, 0o600);
  return { credentials, created: true };
}
