import type { MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { DataStore, PermissionError } from '../../../src/worker/data-store.js';

/** Records which databases were opened: a refused name must never reach the driver. */
function recordingClient(): { client: MongoClient; opened: string[] } {
  const opened: string[] = [];
  const client = { db: (name: string) => (opened.push(name), { collection: (col: string) => ({ name: col }) }) } as unknown as MongoClient;
  return { client, opened };
}

describe('DataStore: databases tasks may not touch', () => {
  it.each(['admin', 'Config', 'LOCAL', 'cybercom', 'CyberCom'])(
    "refuses %j (the server's databases and the service database, any case)",
    (db) => {
      const { client, opened } = recordingClient();
      const store = new DataStore(client, 'cybercom');
      expect(() => store.collection(db, 'things')).toThrow(PermissionError);
      expect(opened).toEqual([]);
    },
  );

  it('gives any other database', () => {
    const { client, opened } = recordingClient();
    new DataStore(client, 'cybercom').collection('data', 'things');
    expect(opened).toEqual(['data']);
  });
});
