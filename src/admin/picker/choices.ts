/**
 * What the permission picker offers: the databases of the data store and the catalog (and the
 * collections of one database, asked for when it is chosen), the registered tasks, and the
 * groups and users to grant to. Lists are capped so a huge deployment still gets a quick page;
 * names beyond the cap can still be typed.
 */
import pTimeout from 'p-timeout';
import type { AdminDeps } from '../deps.js';
import { validateDatabaseName } from '../../db/names.js';
import { badRequest } from '../../errors.js';

export const MAX_CHOICES = 1000;
/** The task list comes from a broadcast to the workers; the picker does not wait longer. */
const TASK_LIST_TIMEOUT_MS = 3_000;

export interface PickerChoices {
  areas: { data_store: { databases: string[] }; catalog: { databases: string[] } };
  tasks: string[];
  /** Why there is no task list (no queue configured, no worker answered), else null. */
  tasksError: string | null;
  groups: string[];
  users: string[];
}

const cap = (names: string[]): string[] => names.slice(0, MAX_CHOICES);

async function taskNames(deps: AdminDeps): Promise<{ tasks: string[]; error: string | null }> {
  if (deps.taskNames === undefined) return { tasks: [], error: 'the task queue is not connected to the admin site' };
  try {
    const names = await pTimeout(deps.taskNames(), { milliseconds: TASK_LIST_TIMEOUT_MS, message: 'no answer from the workers in time' });
    return { tasks: cap([...new Set(names)].sort()), error: null };
  } catch (err) {
    return { tasks: [], error: err instanceof Error ? err.message : String(err) };
  }
}

export async function pickerChoices(deps: AdminDeps): Promise<PickerChoices> {
  const [dataStore, catalog, tasks, groups, users] = await Promise.all([
    deps.areas.dataStore.databaseNames(),
    deps.areas.catalog.databaseNames(),
    taskNames(deps),
    deps.models.Group.find({}, { name: 1 }).sort({ name: 1 }).limit(MAX_CHOICES).lean().exec(),
    deps.models.User.find({}, { username: 1 }).sort({ username: 1 }).limit(MAX_CHOICES).lean().exec(),
  ]);
  return {
    areas: { data_store: { databases: cap(dataStore) }, catalog: { databases: cap(catalog) } },
    tasks: tasks.tasks,
    tasksError: tasks.error,
    groups: groups.map((g) => g.name),
    users: users.map((u) => u.username),
  };
}

/** The collections of one existing database of an area ([] when it does not exist). */
export async function pickerCollections(deps: AdminDeps, area: unknown, database: unknown): Promise<string[]> {
  const documentArea = area === 'catalog' ? deps.areas.catalog : area === 'data_store' ? deps.areas.dataStore : undefined;
  if (documentArea === undefined) throw badRequest('invalid_area', 'The area must be data_store or catalog.');
  const db = validateDatabaseName(database);
  if (!(await documentArea.databaseExists(db))) return [];
  return cap((await documentArea.store.collectionNames(db)).sort());
}
