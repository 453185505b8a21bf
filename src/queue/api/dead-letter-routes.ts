/**
 * The dead-letter queue as task admins see it (QUEUE_ROUTES.deadLetters in route-table.ts):
 *   GET     parked task messages (id, name, arguments, why, from which queue, when); reading
 *           leaves every message in place
 *   DELETE  purges the queue; answers how many messages were removed
 * Anyone else gets 403 (401 when not logged in).
 */
import type { Channel } from 'amqplib';
import { closeChannel } from '../connection/bounded-close.js';
import type { Request, Router } from 'express';
import { isTaskAdmin } from '../../auth/permissions.js';
import { isAuthenticated } from '../../auth/principal.js';
import { badRequest, forbidden, unauthenticated } from '../../errors.js';
import { serve } from '../../http/route-table.js';
import { respond } from '../../http/respond.js';
import { queryOf } from '../../http/params.js';
import { peekDeadLetters, purgeDeadLetters } from '../dead-letter/dead-letter-queue.js';
import type { QueueService } from './queue-service.js';
import { DEAD_LETTER_LIMIT, QUEUE_ROUTES } from './route-table.js';

const { default: DEFAULT_LIMIT, max: MAX_LIMIT } = DEAD_LETTER_LIMIT;

function requireTaskAdmin(req: Request): void {
  if (!isAuthenticated(req.principal) || req.principal.username === null) throw unauthenticated();
  if (!isTaskAdmin(req.principal)) throw forbidden('Only task admins may see or purge the dead-letter queue.');
}

function parseLimit(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_LIMIT;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw badRequest('invalid_limit', `limit must be a whole number from 1 to ${MAX_LIMIT}.`);
  }
  return limit;
}

/** A channel of its own per request: a broker refusal then closes only that channel. */
async function withChannel<T>(service: QueueService, use: (channel: Channel) => Promise<T>): Promise<T> {
  const channel = await service.session.require().createChannel();
  channel.on('error', () => undefined);
  try {
    return await use(channel);
  } finally {
    await closeChannel(channel);
  }
}

export function mountDeadLetterRoutes(router: Router, service: () => QueueService): void {
  serve(router, QUEUE_ROUTES.deadLetters, {
    GET: async (req, res) => {
      requireTaskAdmin(req);
      const params = queryOf(req);
      const limit = parseLimit(params.limit);
      const { count, letters } = await withChannel(service(), (channel) => peekDeadLetters(channel, limit, service().queueType));
      respond(req, res, 200, { count, shown: letters.length, results: letters });
    },
    DELETE: async (req, res) => {
      requireTaskAdmin(req);
      const purged = await withChannel(service(), (channel) => purgeDeadLetters(channel, service().queueType));
      respond(req, res, 200, { purged });
    },
  });
}
