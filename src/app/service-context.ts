/**
 * The running service's shared parts, built once at start-up and handed to every router:
 * settings, logger, the database client, the auth module and the two document areas.
 */
import cluster from 'node:cluster';
import type { Db, MongoClient } from 'mongodb';
import type { Settings } from '../config/settings.js';
import type { Logger } from '../log/logger.js';
import { connectServiceClients } from '../db/mongo-client.js';
import { StorageState } from '../db/storage-state.js';
import { createAuthModule, type AuthModule } from '../auth/index.js';
import { grantTargets, type AreaListings } from '../auth/grant-targets.js';
import type { AreaName } from '../auth/grants.js';
import { createDocumentAreas, type DocumentArea } from '../documents/area.js';
import { QueueService } from '../queue/api/queue-service.js';
import { TaskLog } from '../queue/api/task-log.js';
import { ScheduleStore } from '../queue/schedules/schedule-store.js';
import { Scheduler } from '../queue/schedules/scheduler.js';
import { ScheduleService } from '../queue/schedules/schedule-service.js';
import { WorkerPrivileges } from '../db/worker-privileges.js';
import { ServiceMetrics } from '../metrics/index.js';
import { ClusterPeer } from '../runtime/cluster/peer.js';

export interface ServiceContext {
  settings: Settings;
  logger: Logger;
  /** The data store's and the catalog's engine, which also holds the workers' task results. */
  mongo: MongoClient;
  /** The service's own data (users, tokens, sessions, task history), on `settings.privateMongo`. */
  serviceDb: Db;
  auth: AuthModule;
  documents: { dataStore: DocumentArea; catalog: DocumentArea };
  /** Absent when no broker is configured (the queue endpoints then answer 503). */
  queue: QueueService | undefined;
  /** Schedules and this process's scheduler; absent without a broker. */
  schedules: ScheduleService | undefined;
  scheduler: Scheduler | undefined;
  /** Extra health probes registered by optional parts (the broker). */
  healthProbes: Map<string, () => Promise<void>>;
  /** Whether the database can still store anything (a full disk leaves it reachable). */
  storage: StorageState;
  /** Prometheus metrics; absent with METRICS_ENABLED=false. */
  metrics?: ServiceMetrics;
  /** Under the cluster (API_PROCESSES > 1): the way to the other API processes' answers, through the primary. */
  cluster?: ClusterPeer;
  close(): Promise<void>;
}

/** What auth may read of the document areas: their names, never the areas or their store. */
export function areaListings(documents: ServiceContext['documents']): AreaListings {
  const area = (name: AreaName): DocumentArea => (name === 'data_store' ? documents.dataStore : documents.catalog);
  return {
    databaseNames: (name) => area(name).databaseNames(),
    collectionNames: (name, db) => area(name).store.collectionNames(db),
  };
}

/** The task names the workers registered (the admin's permission picker offers them). */
export async function registeredTaskNames(ctx: Pick<ServiceContext, 'queue'>): Promise<string[]> {
  if (ctx.queue === undefined) throw new Error('no broker configured');
  return [...(await ctx.queue.catalog.get()).tasks.keys()];
}

export async function createServiceContext(settings: Settings, logger: Logger): Promise<ServiceContext> {
  const clients = await connectServiceClients(settings, logger);
  const { mongo, privateMongo } = clients;
  const serviceDb = privateMongo.db(settings.serviceDatabase);
  // On MongoDB, workers reach only the data-store databases their role names (src/db/worker-role.ts):
  // the ones that exist now are added before any request is served, then each one created or
  // deleted through the API.
  const privileges = new WorkerPrivileges(mongo.db('admin'), settings.workerDbRole, settings.serviceDatabase, logger);
  const documents = createDocumentAreas({
    settings,
    mongo,
    serviceDb,
    dataStoreHooks: { created: (db) => privileges.grant(db), dropped: (db) => privileges.revoke(db) },
  });
  await privileges.reconcile(() => documents.dataStore.databaseNames());
  // The auth module migrates legacy permission codenames against what exists in these areas.
  const auth = await createAuthModule({
    settings,
    logger,
    mongo: privateMongo,
    db: serviceDb,
    // The queue is built after the auth module (it needs the accounts); the log it keeps is read here on its own.
    grantTargets: grantTargets(areaListings(documents), () => new TaskLog(serviceDb).taskNames()),
  });
  const healthProbes = new Map<string, () => Promise<void>>();
  healthProbes.set('database', async () => {
    await Promise.all([serviceDb.command({ ping: 1 }), mongo.db(settings.serviceDatabase).command({ ping: 1 })]);
  });
  const queue =
    settings.broker === undefined
      ? undefined
      : new QueueService({
          broker: settings.broker,
          // The workers write the results on the main engine; the history is the service's own.
          mongo,
          serviceDb,
          resultCollection: settings.resultCollection,
          catalogCacheSeconds: settings.taskListCacheSeconds,
          catalogReplyTimeoutMs: settings.taskListReplyTimeoutMs,
          userIdsByName: (usernames) => auth.users.idsByUsername(usernames),
          operationTimeoutMs: settings.mongo.operationTimeoutMs,
          logger,
        }).start();
  if (queue !== undefined) {
    healthProbes.set('broker', async () => {
      await queue.session.waitUntilConnected(2_000);
    });
  }
  let scheduler: Scheduler | undefined;
  let schedules: ScheduleService | undefined;
  if (queue !== undefined) {
    const store = new ScheduleStore(serviceDb);
    await store.ensureIndexes();
    scheduler = new Scheduler({
      store,
      queue,
      owner: (userId) => auth.scheduleOwner(userId),
      logger,
      tickMs: settings.scheduler.tickMs,
      claimLeaseMs: settings.scheduler.claimLeaseMs,
      graceMs: settings.scheduler.graceMs,
    });
    schedules = new ScheduleService({ store, scheduler, queue, minIntervalSeconds: settings.scheduler.minIntervalSeconds });
    if (settings.scheduler.enabled) scheduler.start();
  }
  const peers = cluster.isWorker ? new ClusterPeer().start() : undefined;
  const metrics = settings.metrics.enabled
    ? new ServiceMetrics({ settings, serviceDb, queue, logger, cluster: peers, scheduler }).start()
    : undefined;
  return {
    settings,
    logger,
    mongo,
    serviceDb,
    auth,
    documents,
    queue,
    schedules,
    scheduler,
    healthProbes,
    storage: new StorageState(serviceDb),
    metrics,
    cluster: peers,
    async close() {
      peers?.close();
      // Before the queue: a fire being published finishes on an open broker connection.
      await scheduler?.close();
      // The queue before the metrics: closing its broker connection settles the metrics' channel too.
      await queue?.close();
      await metrics?.close();
      await auth.close();
      await clients.close();
    },
  };
}
