/**
 * What the administration site needs of the running service. The composition root (src/app/)
 * hands over its service context, which has all of these; the admin names only what it uses so
 * that it does not import the layer that assembles it.
 */
import type { Settings } from '../config/settings.js';
import type { Logger } from '../log/logger.js';
import type { AuthModule } from '../auth/index.js';
import type { DocumentArea } from '../documents/area.js';
import type { QueueService } from '../queue/api/queue-service.js';
import type { ClusterPeer } from '../runtime/cluster/peer.js';
import type { ScheduleService } from '../queue/schedules/schedule-service.js';

export interface AdminContext {
  settings: Settings;
  logger: Logger;
  auth: AuthModule;
  documents: { dataStore: DocumentArea; catalog: DocumentArea };
  /** Absent when no broker is configured. */
  queue: QueueService | undefined;
  /** The schedules (the Operations page shows their next fires and failures); absent without a broker. */
  schedules: ScheduleService | undefined;
  /** Under the cluster: the way to the other API processes' answers. */
  cluster?: ClusterPeer;
}
