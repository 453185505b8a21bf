/**
 * The services a worker runs on, made from the connection settings: passed to the Worker rather
 * than made by it, so that what it is wired to is the caller's choice.
 */
import type { MongoClient } from 'mongodb';
import type { BrokerSettings, MongoSettings } from '../config/connections.js';
import { connectMongo } from '../db/mongo-client.js';
import { BrokerSession } from '../queue/connection/broker-session.js';
import { TaskPublisher } from '../queue/publishing/task-publisher.js';

/** What the worker sends messages with (retries, canvas steps, chord callbacks). */
export type TaskSender = Pick<TaskPublisher, 'publish' | 'close'>;

export interface WorkerServices {
  /** The broker session to consume on, not yet started: the worker starts it, and closes it when it stops. */
  session: BrokerSession;
  /**
   * Opens the database client. A function rather than a client: the worker starts before the
   * database answers, and retries this until it does; it closes the client when it stops.
   */
  openDatabase: () => Promise<MongoClient>;
  /**
   * Sends retries and canvas steps on the session, each confirmed by the broker before the
   * message it follows from is acknowledged; the worker closes it when it stops.
   */
  publisher: TaskSender;
}

export function workerServices(broker: BrokerSettings, mongo: MongoSettings): WorkerServices {
  const session = new BrokerSession({ settings: broker });
  return { session, publisher: new TaskPublisher({ session }), openDatabase: () => connectMongo(mongo) };
}
