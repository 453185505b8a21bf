/** What the server answers a command on `admin` with, when it refuses it: the error; undefined when it runs it. */
import type { Document, MongoClient } from 'mongodb';

export function commandRefusal(client: MongoClient, command: Document): Promise<unknown> {
  return client
    .db('admin')
    .command(command)
    .then(
      () => undefined,
      (err: unknown) => err,
    );
}
