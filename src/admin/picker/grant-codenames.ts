/**
 * The permission picker's rules: what the administrator chose (an area, a scope, names and
 * actions) → canonical permission codenames, built as structured grants and encoded the one way
 * the permission checks read them back, so a granted codename is always one the API asks for.
 * Pure; names are validated with the document API's own name rules.
 */
import { describeCodename, type ParsedCodename } from '../../auth/codenames.js';
import { DOCUMENT_ACTIONS, isTaskName, type DocumentAction, type Grant, type Role } from '../../auth/grants.js';
import { validateCollectionName, validateDatabaseName } from '../../db/names.js';
import { badRequest } from '../../errors.js';

export const GRANT_AREAS = ['data_store', 'catalog', 'cybercom_queue'] as const;
export type GrantArea = (typeof GRANT_AREAS)[number];

/** What can be granted in each area. */
export const GRANT_SCOPES: Record<GrantArea, readonly string[]> = {
  data_store: ['collection', 'database', 'create', 'admin'],
  catalog: ['collection', 'create', 'admin'],
  cybercom_queue: ['task', 'task_admin', 'metrics_read', 'schedule_tasks'],
};

export interface GrantSpec {
  area: GrantArea;
  scope: string;
  database?: string;
  collection?: string;
  task?: string;
  actions?: string[];
}

const invalid = (message: string) => badRequest('invalid_grant', message);

/** Reads an untrusted spec (the picker's JSON); throws 400 `invalid_grant` when it is not one. */
export function parseGrantSpec(value: unknown): GrantSpec {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('The choice must be a JSON object.');
  const raw = value as Record<string, unknown>;
  const area = raw.area;
  if (typeof area !== 'string' || !(GRANT_AREAS as readonly string[]).includes(area)) {
    throw invalid(`Choose an area: ${GRANT_AREAS.join(', ')}.`);
  }
  const text = (key: string): string | undefined => {
    const v = raw[key];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw invalid(`"${key}" must be a string.`);
    return v.trim();
  };
  const actions = raw.actions;
  if (actions !== undefined && (!Array.isArray(actions) || !actions.every((a) => typeof a === 'string'))) {
    throw invalid('"actions" must be a list of action names.');
  }
  const spec: GrantSpec = { area: area as GrantArea, scope: text('scope') ?? '' };
  const database = text('database');
  const collection = text('collection');
  const task = text('task');
  if (database !== undefined) spec.database = database;
  if (collection !== undefined) spec.collection = collection;
  if (task !== undefined) spec.task = task;
  if (actions !== undefined) spec.actions = actions as string[];
  return spec;
}

function chosenActions(spec: GrantSpec): DocumentAction[] {
  const actions = [...new Set(spec.actions ?? [])];
  const unknown = actions.filter((a) => !(DOCUMENT_ACTIONS as readonly string[]).includes(a));
  if (unknown.length > 0) throw invalid(`Unknown action ${unknown.map((a) => `"${a}"`).join(', ')}; use ${DOCUMENT_ACTIONS.join(', ')}.`);
  if (actions.length === 0) throw invalid('Choose at least one action (read, add, update, delete).');
  // Always in the same order, whatever order they were ticked in.
  return DOCUMENT_ACTIONS.filter((a) => actions.includes(a));
}

function requireName<T>(value: string | undefined, what: string, validate: (v: unknown) => T): T {
  if (value === undefined) throw invalid(`Choose a ${what}.`);
  return validate(value);
}

const role = (r: Role): Grant => ({ kind: 'role', role: r });

/** The grants `spec` describes (names validated). */
export function grantsForSpec(spec: GrantSpec): Grant[] {
  const scopes = GRANT_SCOPES[spec.area];
  if (!scopes.includes(spec.scope)) throw invalid(`In ${spec.area}, choose one of: ${scopes.join(', ')}.`);
  if (spec.area === 'cybercom_queue') {
    if (spec.scope === 'task_admin') return [role('task_admin')];
    if (spec.scope === 'metrics_read') return [role('metrics_read')];
    if (spec.scope === 'schedule_tasks') return [role('schedule_tasks')];
    const task = requireName(spec.task, 'task', (v) => v as string);
    if (!isTaskName(task)) throw invalid(`"${task}" is not a task name (a dotted name such as "tasks.add").`);
    return [{ kind: 'task', task }];
  }
  const area = spec.area;
  if (spec.scope === 'admin') return [role(area === 'data_store' ? 'datastore_admin' : 'catalog_admin')];
  if (spec.scope === 'create') return [role(area === 'data_store' ? 'datastore_create' : 'catalog_create')];
  const db = requireName(spec.database, 'database', validateDatabaseName);
  const actions = chosenActions(spec);
  if (spec.scope === 'database') return actions.map((action) => ({ kind: 'database', db, action }));
  const col = requireName(spec.collection, 'collection', validateCollectionName);
  return actions.map((action) => ({ kind: 'collection', area, db, col, action }));
}

/** The canonical codenames (with readable names) that grant what `spec` describes. */
export function codenamesForGrant(spec: GrantSpec): ParsedCodename[] {
  return grantsForSpec(spec).map(describeCodename);
}
