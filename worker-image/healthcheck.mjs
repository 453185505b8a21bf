// Container healthcheck of a worker: sends a remote-control ping addressed to this worker's own
// node name (WORKER_NODE_NAME) through the broker and exits 0 when it answers within 5 s. Uses the
// worker's own configuration (env) and the compiled modules in /app/dist.
import { loadWorkerConfig } from '/app/dist/src/worker/config.js';
import { BrokerSession } from '/app/dist/src/queue/connection/broker-session.js';
import { ControlClient } from '/app/dist/src/queue/remote-control/control-client.js';

const config = loadWorkerConfig(process.env);
const session = new BrokerSession({ settings: { ...config.broker, heartbeatSeconds: 0 } });
session.start();
const control = new ControlClient({ session });
let healthy = false;
try {
  await session.waitUntilConnected(5000);
  const replies = await control.broadcast('ping', {}, { destination: [config.nodeName], timeoutMs: 5000 });
  healthy = config.nodeName in replies;
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
} finally {
  await control.close().catch(() => undefined);
  await session.close().catch(() => undefined);
}
process.exit(healthy ? 0 : 1);
