/**
 * Task history in the admin site, read-only: the submission log the queue API writes
 * (`task_log` in the service database: who ran which task with which arguments, queue and tags).
 * Arguments are shown as JSON text.
 */
import type { ResourceOptions } from 'adminjs';
import { Schema, type Connection, type Model } from 'mongoose';
import { ServiceResource } from './mongoose-resource.js';
import { TASK_QUEUE } from './navigation.js';

export interface TaskLogRecord {
  _id: string;
  task_id: string;
  user: string;
  task_name: string;
  args: unknown;
  kwargs: unknown;
  queue: string;
  tags: string[];
  timestamp: Date;
}

const taskLogSchema = new Schema<TaskLogRecord>(
  {
    _id: { type: String },
    task_id: String,
    user: String,
    task_name: String,
    args: Schema.Types.Mixed,
    kwargs: Schema.Types.Mixed,
    queue: String,
    tags: [String],
    timestamp: Date,
  },
  // The queue API owns this collection and its indexes; the admin only reads it.
  { collection: 'task_log', versionKey: false, autoIndex: false, autoCreate: false },
);

export function taskLogModel(connection: Connection): Model<TaskLogRecord> {
  return (connection.models.TaskLog as Model<TaskLogRecord> | undefined) ?? connection.model<TaskLogRecord>('TaskLog', taskLogSchema);
}

export class TaskLogResource extends ServiceResource<TaskLogRecord> {
  protected override toParams(document: Record<string, unknown>): Record<string, unknown> {
    return { ...document, args: JSON.stringify(document.args ?? []), kwargs: JSON.stringify(document.kwargs ?? {}) };
  }

  protected override writableParams(): Record<string, unknown> {
    return {};
  }
}

const READ_ONLY = { isAccessible: false, isVisible: false };

export function taskLogResource(model: Model<TaskLogRecord>): { resource: TaskLogResource; options: ResourceOptions } {
  return {
    resource: new TaskLogResource(model),
    options: {
      navigation: TASK_QUEUE,
      sort: { sortBy: 'timestamp', direction: 'desc' },
      listProperties: ['timestamp', 'task_name', 'user', 'queue', 'tags'],
      showProperties: ['task_id', 'task_name', 'user', 'timestamp', 'queue', 'tags', 'args', 'kwargs'],
      filterProperties: ['task_name', 'user', 'queue', 'tags', 'timestamp'],
      properties: {
        task_id: { isTitle: true },
        args: { type: 'textarea' },
        kwargs: { type: 'textarea' },
      },
      actions: { new: READ_ONLY, edit: READ_ONLY, delete: READ_ONLY, bulkDelete: READ_ONLY },
    },
  };
}
