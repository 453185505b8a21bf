/**
 * The worker's result store: the shared ResultStore whose two per-task writes — the start count
 * before a task runs and the final document after — go out grouped with those of the other tasks
 * starting or finishing at the same moment (see grouped-writes.ts). Reads, RETRY and the rarer
 * writes keep the single-document path.
 */
import type { Document, MongoClient } from 'mongodb';
import type { RequestMeta, ResultDocument } from '../queue/results/result-document.js';
import {
  DELIVERIES_FIELD,
  ResultStore,
  countedDeliveries,
  deliveryUpdate,
  type DeliveryCount,
  type ResultStoreOptions,
} from '../queue/results/result-store.js';
import { GroupedWrites, type GroupedCollection } from './grouped-writes.js';

export class GroupedResultStore extends ResultStore {
  private readonly group: GroupedWrites;

  constructor(client: MongoClient, options: ResultStoreOptions) {
    super(client, options);
    this.group = new GroupedWrites(this.collection as unknown as GroupedCollection, { status: 1, [DELIVERIES_FIELD]: 1 });
  }

  override store(doc: ResultDocument): Promise<void> {
    void this.ensureIndex();
    return this.group.replace(doc as unknown as Document & { _id: string }, () => super.store(doc));
  }

  override countDelivery(
    taskId: string,
    retries: number,
    meta: RequestMeta,
    started?: { pid: number; hostname: string },
  ): Promise<DeliveryCount> {
    void this.ensureIndex();
    const { filter, update, key } = deliveryUpdate(taskId, retries, meta, started);
    return this.group.update(
      taskId,
      filter,
      update,
      // A document the update created holds exactly this start.
      (inserted, document): DeliveryCount => ({ count: inserted ? 1 : countedDeliveries(document, key), finalState: null }),
      () => super.countDelivery(taskId, retries, meta, started),
    );
  }
}
