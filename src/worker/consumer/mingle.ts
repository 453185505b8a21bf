/**
 * Celery's mingle: at start-up the worker asks the other workers for the ids they know are
 * revoked, so a task revoked before it came up is not run by it.
 */
import type { Logger } from 'pino';
import type { BrokerSession } from '../../queue/connection/broker-session.js';
import { ControlClient } from '../../queue/remote-control/control-client.js';
import type { RevokedSet } from '../revoked-set.js';

export async function mingle(session: BrokerSession, nodeName: string, revoked: RevokedSet, logger: Logger): Promise<void> {
  const client = new ControlClient({ session });
  try {
    const replies = await client.broadcast('hello', { from_node: nodeName, revoked: {} }, { timeoutMs: 1_000 });
    for (const [node, reply] of Object.entries(replies)) {
      if (node !== nodeName && reply !== null && typeof reply === 'object' && !Array.isArray(reply)) {
        revoked.mergeHelloPayload(reply.revoked);
      }
    }
  } catch (error) {
    logger.warn({ err: (error as Error).message }, 'mingle failed; continuing without peers\u2019 revoked ids');
  } finally {
    await client.close();
  }
}
