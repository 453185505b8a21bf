/**
 * Task history in the admin site, read-only: every account's submissions as the queue keeps them
 * (who ran which task with which arguments, queue and tags). The queue owns its log; the list
 * reads it through the queue service, which filters, sorts and pages it, so the admin holds no
 * description of how it is stored. Arguments are shown as JSON text.
 */
import { BaseProperty, BaseRecord, type Filter, type ResourceOptions } from 'adminjs';
import type { PropertyType } from 'adminjs';
import {
  LOG_BROWSE_SORTS,
  type LogBrowseFilter,
  type LogBrowseQuery,
  type QueueService,
  type TaskLogEntry,
} from '../../queue/api/queue-service.js';
import { TASK_QUEUE } from './navigation.js';
import { ServiceResource } from './service-resource.js';

/** What the list reads: the queue service's log methods. */
export type TaskLogSource = Pick<QueueService, 'browseLog' | 'countLog' | 'logEntry' | 'logEntries' | 'estimatedLogSize'>;

/** Without a broker there is no queue service, and no history to list. */
export const NO_TASK_LOG: TaskLogSource = {
  browseLog: async () => [],
  countLog: async () => 0,
  logEntry: async () => null,
  logEntries: async () => new Map(),
  estimatedLogSize: async () => 0,
};

class LogProperty extends BaseProperty {
  constructor(
    path: string,
    type: PropertyType,
    private readonly array = false,
  ) {
    super({ path, type, isId: path === '_id', isSortable: (LOG_BROWSE_SORTS as readonly string[]).includes(path) });
  }

  override isArray(): boolean {
    return this.array;
  }
}

const PROPERTIES = [
  new LogProperty('_id', 'string'),
  new LogProperty('task_id', 'string'),
  new LogProperty('task_name', 'string'),
  new LogProperty('user', 'string'),
  new LogProperty('queue', 'string'),
  new LogProperty('tags', 'string', true),
  new LogProperty('timestamp', 'datetime'),
  new LogProperty('args', 'textarea'),
  new LogProperty('kwargs', 'textarea'),
];

const TEXT_FILTERS = ['task_name', 'user', 'queue', 'tags'] as const;

function date(value: unknown): Date | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}

/** The list's filter as the queue takes it: conditions on other fields (a list URL may name any) are left out. */
export function logFilter(filter: Filter | null | undefined): LogBrowseFilter {
  const out: LogBrowseFilter = {};
  const conditions = filter?.filters ?? {};
  for (const field of TEXT_FILTERS) {
    const value = conditions[field]?.value;
    if (typeof value === 'string' && value !== '') out[field] = value;
  }
  const range = conditions.timestamp?.value;
  if (typeof range === 'object') {
    const from = date(range.from);
    const to = date(range.to);
    if (from !== undefined || to !== undefined) out.timestamp = { ...(from && { from }), ...(to && { to }) };
  }
  return out;
}

const isSort = (path: string | undefined): path is LogBrowseQuery['sortBy'] =>
  path !== undefined && (LOG_BROWSE_SORTS as readonly string[]).includes(path);

export class TaskLogResource extends ServiceResource {
  constructor(private readonly source: TaskLogSource) {
    super('TaskLog', PROPERTIES);
  }

  override count(filter: Filter): Promise<number> {
    return this.source.countLog(logFilter(filter));
  }

  override async find(
    filter: Filter,
    options: { limit?: number; offset?: number; sort?: { sortBy?: string; direction?: 'asc' | 'desc' } },
  ): Promise<BaseRecord[]> {
    const entries = await this.source.browseLog({
      filter: logFilter(filter),
      sortBy: isSort(options.sort?.sortBy) ? options.sort.sortBy : 'timestamp',
      direction: options.sort?.direction === 'asc' ? 'asc' : 'desc',
      skip: Math.max(0, options.offset ?? 0),
      limit: Math.max(1, options.limit ?? 20),
    });
    return entries.map((entry) => this.record(entry));
  }

  override async findOne(id: string): Promise<BaseRecord | null> {
    const entry = await this.source.logEntry(id);
    return entry === null ? null : this.record(entry);
  }

  override async findMany(ids: (string | number)[]): Promise<BaseRecord[]> {
    const entries = await this.source.logEntries(ids.map(String));
    return [...entries.values()].map((entry) => this.record(entry));
  }

  private record(entry: TaskLogEntry): BaseRecord {
    const plain = JSON.parse(JSON.stringify(entry)) as Record<string, unknown>;
    return new BaseRecord({ ...plain, args: JSON.stringify(entry.args ?? []), kwargs: JSON.stringify(entry.kwargs ?? {}) }, this);
  }
}

const READ_ONLY = { isAccessible: false, isVisible: false };

export function taskLogResource(source: TaskLogSource): { resource: TaskLogResource; options: ResourceOptions } {
  return {
    resource: new TaskLogResource(source),
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
