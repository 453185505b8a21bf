// One AMQPS login with a given client certificate, for checks run inside the remote test host's
// network namespace (`ip netns exec ... node amqp-login.mjs`): exit 0 when the broker accepts the
// session, 1 (with the error) when it refuses. Arguments: URL CA_FILE CERT_FILE KEY_FILE.
import { readFileSync } from 'node:fs';
import amqp from 'amqplib';

const [url, caFile, certFile, keyFile] = process.argv.slice(2);
try {
  const conn = await amqp.connect(url, {
    ca: [readFileSync(caFile)],
    cert: readFileSync(certFile),
    key: readFileSync(keyFile),
    timeout: 10_000,
  });
  await conn.close();
  console.log('accepted');
} catch (err) {
  console.log(`refused: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
