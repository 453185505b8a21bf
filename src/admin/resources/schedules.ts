/**
 * Schedules in the admin site: what each schedule runs, when it fires next, its last outcome
 * (with the reason a fire was refused or failed), its failures in a row and its missed runs, and
 * the actions pause (with a note) and resume. The queue owns its schedules: the list reads them
 * through the schedules' service, and pause and resume are the service's own, as the API's are,
 * so the admin holds no description of how they are stored. Schedules are made and changed
 * through the API (/api/queue/schedules/), whose checks (crontab, time zone, rights) a form here
 * would pass by. Task admins (and superusers) see and manage every schedule; other staff their own.
 */
import {
  BaseProperty,
  BaseRecord,
  ValidationError,
  type ActionContext,
  type ActionRequest,
  type Filter,
  type PropertyType,
  type ResourceOptions,
} from 'adminjs';
import {
  SCHEDULE_BROWSE_SORTS,
  type ScheduleBrowseFilter,
  type ScheduleBrowseQuery,
  type ScheduleDoc,
  type ScheduleService,
} from '../../queue/schedules/schedule-service.js';
import { component } from '../components.js';
import type { ServiceAdmin } from '../current-admin.js';
import { TASK_QUEUE } from './navigation.js';
import { ServiceResource } from './service-resource.js';

/** What the resource uses of the schedules' service. */
export type ScheduleSource = Pick<ScheduleService, 'browse' | 'countBrowse' | 'get' | 'getMany' | 'pause' | 'resume'>;

/** Without a broker there is no schedules' service, and no schedule to list. */
export const NO_SCHEDULES: ScheduleSource = {
  browse: async () => [],
  countBrowse: async () => 0,
  get: async () => null,
  getMany: async () => [],
  pause: async (doc) => doc,
  resume: async (doc) => doc,
};

/** The timing in a few words: `cron 0 2 * * * (America/Chicago)`, `every 900 s`, `sunrise at 46.8, -89.5`, `once at ...`. */
function timingText(timing: unknown): string {
  const t = (timing ?? {}) as Record<string, unknown>;
  switch (t.kind) {
    case 'crontab':
      return `cron ${String(t.cron)} (${String(t.tz)})`;
    case 'interval':
      return `every ${String(t.everySeconds)} s`;
    case 'solar':
      return `${String(t.event)} at ${String(t.lat)}, ${String(t.lon)}`;
    case 'clocked':
      return `once at ${t.at instanceof Date ? t.at.toISOString() : String(t.at)}`;
    default:
      return '';
  }
}

class ScheduleProperty extends BaseProperty {
  constructor(path: string, type: PropertyType) {
    super({ path, type, isId: path === '_id', isSortable: (SCHEDULE_BROWSE_SORTS as readonly string[]).includes(path) });
  }
}

const PROPERTIES = [
  new ScheduleProperty('_id', 'string'),
  new ScheduleProperty('name', 'string'),
  new ScheduleProperty('owner', 'string'),
  new ScheduleProperty('task', 'string'),
  new ScheduleProperty('timing', 'string'),
  new ScheduleProperty('queue', 'string'),
  new ScheduleProperty('args_json', 'textarea'),
  new ScheduleProperty('kwargs_json', 'textarea'),
  new ScheduleProperty('overlap', 'string'),
  new ScheduleProperty('paused', 'boolean'),
  new ScheduleProperty('note', 'string'),
  new ScheduleProperty('next_fire_at', 'datetime'),
  new ScheduleProperty('last_fire_at', 'datetime'),
  new ScheduleProperty('total_runs', 'number'),
  new ScheduleProperty('missed_total', 'number'),
  new ScheduleProperty('last_outcome', 'string'),
  new ScheduleProperty('last_reason', 'string'),
  new ScheduleProperty('failure_streak', 'number'),
  new ScheduleProperty('finished', 'boolean'),
];

const TEXT_FILTERS = ['name', 'owner', 'task', 'last_outcome'] as const;

/** The list's filter as the service takes it: conditions on other fields (a list URL may name any) are left out. */
function scheduleFilter(filter: Filter | null | undefined): ScheduleBrowseFilter {
  const out: ScheduleBrowseFilter = {};
  const conditions = filter?.filters ?? {};
  for (const field of TEXT_FILTERS) {
    const value = conditions[field]?.value;
    if (typeof value === 'string' && value !== '') out[field] = value;
  }
  const paused = conditions.paused?.value;
  if (paused === 'true' || paused === 'false') out.paused = paused === 'true';
  return out;
}

const isSort = (path: string | undefined): path is ScheduleBrowseQuery['sortBy'] =>
  path !== undefined && (SCHEDULE_BROWSE_SORTS as readonly string[]).includes(path);

/** Whose schedules the administrator sees: undefined for everyone's (task admins), else their own account's. */
function ownerScope(context: ActionContext | undefined): string | undefined {
  const admin = context?.currentAdmin as ServiceAdmin | undefined;
  if (admin?.isTaskAdmin === true || admin?.isSuperuser === true) return undefined;
  return admin?.id ?? '';
}

const visibleTo = (doc: ScheduleDoc, context: ActionContext | undefined): boolean => {
  const owner = ownerScope(context);
  return owner === undefined || doc.owner_id === owner;
};

export class ScheduleResource extends ServiceResource {
  constructor(private readonly source: ScheduleSource) {
    super('Schedule', PROPERTIES);
  }

  override count(filter: Filter, context?: ActionContext): Promise<number> {
    return this.source.countBrowse(ownerScope(context), scheduleFilter(filter));
  }

  override async find(
    filter: Filter,
    options: { limit?: number; offset?: number; sort?: { sortBy?: string; direction?: 'asc' | 'desc' } },
    context?: ActionContext,
  ): Promise<BaseRecord[]> {
    const docs = await this.source.browse({
      ownerId: ownerScope(context),
      filter: scheduleFilter(filter),
      sortBy: isSort(options.sort?.sortBy) ? options.sort.sortBy : 'next_fire_at',
      direction: options.sort?.direction === 'desc' ? 'desc' : 'asc',
      skip: Math.max(0, options.offset ?? 0),
      limit: Math.max(1, options.limit ?? 20),
    });
    return docs.map((doc) => this.record(doc));
  }

  override async findOne(id: string, context?: ActionContext): Promise<BaseRecord | null> {
    const doc = await this.source.get(id);
    return doc === null || !visibleTo(doc, context) ? null : this.record(doc);
  }

  override async findMany(ids: (string | number)[], context?: ActionContext): Promise<BaseRecord[]> {
    const docs = await this.source.getMany(ids.map(String));
    return docs.filter((doc) => visibleTo(doc, context)).map((doc) => this.record(doc));
  }

  record(doc: ScheduleDoc): BaseRecord {
    const plain = JSON.parse(JSON.stringify({ ...doc, timing: timingText(doc.timing) })) as Record<string, unknown>;
    return new BaseRecord(plain, this);
  }

  /** Pauses (with the request's note) or resumes the context's schedule through the service. */
  async toggle(request: ActionRequest, context: ActionContext, pause: boolean) {
    const found = context.record === undefined ? null : await this.source.get(String(context.record.id()));
    if (found === null || !visibleTo(found, context)) throw new ValidationError({}, { message: 'No such schedule.' });
    if (request.method !== 'post') return { record: this.record(found).toJSON(context.currentAdmin) };
    const note = typeof request.payload?.note === 'string' ? request.payload.note.trim() : undefined;
    const changed = pause ? await this.source.pause(found, note === '' ? undefined : note) : await this.source.resume(found);
    return {
      record: this.record(changed).toJSON(context.currentAdmin),
      notice: {
        message: pause
          ? `"${found.name}" is paused: it fires nothing until it is resumed.`
          : `"${found.name}" is resumed from its next fire to come.`,
        type: 'success' as const,
      },
    };
  }
}

const READ_ONLY = { isAccessible: false, isVisible: false };

/** A pause or resume action, offered where it applies (pause on a running schedule, resume on a paused one). */
function toggleAction(resource: ScheduleResource, pause: boolean) {
  const applies = (context: ActionContext) => context.record === undefined || context.record.params.paused !== pause;
  return {
    actionType: 'record' as const,
    icon: pause ? 'Pause' : 'Play',
    component: component('ScheduleToggle'),
    isAccessible: applies,
    isVisible: applies,
    handler: (request: ActionRequest, _response: unknown, context: ActionContext) => resource.toggle(request, context, pause),
  };
}

export function scheduleResource(source: ScheduleSource): { resource: ScheduleResource; options: ResourceOptions } {
  const resource = new ScheduleResource(source);
  return {
    resource,
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
      actions: {
        new: READ_ONLY,
        edit: READ_ONLY,
        delete: READ_ONLY,
        bulkDelete: READ_ONLY,
        pause: toggleAction(resource, true),
        resume: toggleAction(resource, false),
      },
    },
  };
}
