/**
 * The worker's result store: the shared ResultStore whose two per-task writes — the start count
 * before a task runs and the final document after — go out grouped with those of the other tasks
 * starting or finishing at the same moment (see grouped-writes.ts), and the final-state reads of
 * the tasks arriving together go out as one (grouped-reads.ts). Other reads, RETRY and the rarer
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
import { READY_STATES, isTaskState, type TaskState } from '../queue/results/states.js';
import { GroupedReads, type ReadCollection } from './grouped-reads.js';
import { GroupedWrites, type GroupedCollection } from './grouped-writes.js';

export class GroupedResultStore extends ResultStore {
  private readonly group: GroupedWrites;
  private readonly reads: GroupedReads;

  constructor(client: MongoClient, options: ResultStoreOptions) {
    super(client, options);
    this.group = new GroupedWrites(this.collection as unknown as GroupedCollection, { status: 1, [DELIVERIES_FIELD]: 1 });
    this.reads = new GroupedReads(this.collection as unknown as ReadCollection, { status: 1 });
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
    increment = 1,
  ): Promise<DeliveryCount> {
    void this.ensureIndex();
    const { filter, update, key } = deliveryUpdate(taskId, retries, meta, started, increment);
    return this.group.update(
      taskId,
      filter,
      update,
      // A document the update created holds exactly this increment.
      (inserted, document): DeliveryCount => ({
        count: inserted ? increment : countedDeliveries(document, key, increment),
        finalState: null,
      }),
      () => super.countDelivery(taskId, retries, meta, started, increment),
    );
  }

  /** The task's final state (SUCCESS, FAILURE, REVOKED), or null; read together with those of the tasks arriving with it. */
  async finalState(taskId: string): Promise<TaskState | null> {
    const row = await this.reads.get(taskId);
    const status: unknown = row?.status;
    return isTaskState(status) && READY_STATES.has(status) ? status : null;
  }
}
