/**
 * Schedules in the admin site, read-only: what each schedule runs, when it fires next, its last
 * outcome (with the reason a fire was refused or failed), its failures in a row and its missed
 * runs. Schedules are made and changed through the API (/api/queue/schedules/), whose checks
 * (crontab, time zone, rights) the admin's forms would otherwise pass by.
 */
import type { ResourceOptions } from 'adminjs';
import { Schema, type Connection, type Model } from 'mongoose';
import { ServiceResource } from './mongoose-resource.js';
import { TASK_QUEUE } from './navigation.js';

export interface ScheduleRecord {
  _id: string;
  name: string;
  owner: string;
  task: string;
  timing: unknown;
  queue: string | null;
  overlap: string;
  paused: boolean;
  note: string;
  next_fire_at: Date | null;
  last_fire_at: Date | null;
  total_runs: number;
  missed_total: number;
  last_outcome: string | null;
  last_reason: string | null;
  failure_streak: number;
  finished: boolean;
  args_json: string;
  kwargs_json: string;
}

const scheduleSchema = new Schema<ScheduleRecord>(
  {
    _id: { type: String },
    name: String,
    owner: String,
    task: String,
    timing: Schema.Types.Mixed,
    queue: String,
    overlap: String,
    paused: Boolean,
    note: String,
    next_fire_at: Date,
    last_fire_at: Date,
    total_runs: Number,
    missed_total: Number,
    last_outcome: String,
    last_reason: String,
    failure_streak: Number,
    finished: Boolean,
    args_json: String,
    kwargs_json: String,
  },
  // The queue's schedules own this collection and its indexes; the admin only reads it.
  { collection: 'schedules', versionKey: false, autoIndex: false, autoCreate: false },
);

export function scheduleModel(connection: Connection): Model<ScheduleRecord> {
  return (connection.models.Schedule as Model<ScheduleRecord> | undefined) ?? connection.model<ScheduleRecord>('Schedule', scheduleSchema);
}

/** The timing in a few words: `cron 0 2 * * * (America/Chicago)`, `every 900 s`, `sunrise at 46.8, -89.5`, `once at ...`. */
export function timingText(timing: unknown): string {
  const t = (timing ?? {}) as Record<string, unknown>;
  switch (t.kind) {
    case 'crontab':
      return `cron ${String(t.cron)} (${String(t.tz)})`;
    case 'interval':
      return `every ${String(t.everySeconds)} s`;
    case 'solar':
      return `${String(t.event)} at ${String(t.lat)}, ${String(t.lon)}`;
    case 'clocked':
      return `once at ${String(t.at)}`;
    default:
      return '';
  }
}

export class ScheduleResource extends ServiceResource<ScheduleRecord> {
  protected override toParams(document: Record<string, unknown>): Record<string, unknown> {
    return { ...document, timing: timingText(document.timing) };
  }

  protected override writableParams(): Record<string, unknown> {
    return {};
  }
}

const READ_ONLY = { isAccessible: false, isVisible: false };

export function scheduleResource(model: Model<ScheduleRecord>): { resource: ScheduleResource; options: ResourceOptions } {
  return {
    resource: new ScheduleResource(model),
    options: {
      navigation: TASK_QUEUE,
      sort: { sortBy: 'next_fire_at', direction: 'asc' },
      listProperties: ['name', 'owner', 'task', 'timing', 'next_fire_at', 'paused', 'last_outcome', 'failure_streak'],
      showProperties: [
        'name',
        'owner',
        'task',
        'timing',
        'queue',
        'args_json',
        'kwargs_json',
        'overlap',
        'paused',
        'note',
        'next_fire_at',
        'last_fire_at',
        'total_runs',
        'missed_total',
        'last_outcome',
        'last_reason',
        'failure_streak',
        'finished',
      ],
      filterProperties: ['name', 'owner', 'task', 'paused', 'last_outcome'],
      properties: {
        name: { isTitle: true },
        args_json: { type: 'textarea' },
        kwargs_json: { type: 'textarea' },
      },
      actions: { new: READ_ONLY, edit: READ_ONLY, delete: READ_ONLY, bulkDelete: READ_ONLY },
    },
  };
}
