/**
 * The running service's shared parts, built once at start-up and handed to every router:
 * settings, logger, the database client, the auth module and the two document areas.
 */
import type { Db, MongoClient } from 'mongodb';
import type { Settings } from './config/settings.js';
import type { Logger } from './log/logger.js';
import { connectMongo } from './db/mongo-client.js';
import { createAuthModule, type AuthModule } from './auth/index.js';
import { DocumentArea, createDocumentAreas } from './documents/area.js';

export interface ServiceContext {
  settings: Settings;
  logger: Logger;
  mongo: MongoClient;
  serviceDb: Db;
  auth: AuthModule;
  documents: { dataStore: DocumentArea; catalog: DocumentArea };
  /** Extra health probes registered by optional parts (the broker). */
  healthProbes: Map<string, () => Promise<void>>;
  close(): Promise<void>;
}

export async function createServiceContext(settings: Settings, logger: Logger): Promise<ServiceContext> {
  const mongo = await connectMongo(settings.mongo);
  const serviceDb = mongo.db(settings.serviceDatabase);
  const auth = await createAuthModule({ settings, logger, mongo, db: serviceDb });
  const documents = createDocumentAreas(settings, mongo, serviceDb);
  const healthProbes = new Map<string, () => Promise<void>>();
  healthProbes.set('database', async () => {
    await serviceDb.command({ ping: 1 });
  });
  return {
    settings,
    logger,
    mongo,
    serviceDb,
    auth,
    documents,
    healthProbes,
    async close() {
      await auth.close();
      await mongo.close();
    },
  };
}
