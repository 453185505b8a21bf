/*
 * The permission picker (resource action "picker" on Permission): choose what to grant from the
 * databases and collections that exist in the data store and catalog, or from the registered
 * tasks, and the picker creates the right codenames (the canonical ones the API checks),
 * optionally granting them to a group or a user at once. The server builds and validates the codenames
 * (src/admin/picker/*); this component only collects the choice and shows the preview.
 */
import React, { useEffect, useMemo, useState } from 'react';
import { ApiClient, useNotice } from 'adminjs';
import { Box, H5, Text, Label, Input, Button, MessageBox } from '@adminjs/design-system';
import type { ParsedCodename } from '../../auth/codenames.js';
import type { PickerChoices } from '../picker/choices.js';
import type { GrantArea } from '../picker/grant-codenames.js';
import { errorMessage } from './shared/admin-fetch.js';
import { LoadFailed, Loading } from './shared/page-state.js';

const api = new ApiClient();
const RESOURCE = 'Permission';
const ACTION = 'picker';

interface Option<T extends string = string> {
  value: T;
  label: string;
}

/** The codenames the current choice makes, or why it makes none. */
interface Preview {
  codenames: ParsedCodename[];
  error: string | null;
}

type Result = { ok: true; data: { summary: string } } | { ok: false; message: string };

const AREAS: Option<GrantArea>[] = [
  { value: 'data_store', label: 'Data store' },
  { value: 'catalog', label: 'Catalog' },
  { value: 'cybercom_queue', label: 'Task queue' },
];

/** What can be granted in each area (the server's GRANT_SCOPES), the first being the default. */
const SCOPES: Record<GrantArea, [Option, ...Option[]]> = {
  data_store: [
    { value: 'collection', label: 'One collection' },
    { value: 'database', label: 'A whole database (all its collections)' },
    { value: 'create', label: 'Create and delete databases and collections' },
    { value: 'admin', label: 'Data store administrator (everything)' },
  ],
  catalog: [
    { value: 'collection', label: 'One collection' },
    { value: 'create', label: 'Create and delete catalog collections' },
    { value: 'admin', label: 'Catalog administrator (everything)' },
  ],
  cybercom_queue: [
    { value: 'task', label: 'Run one task' },
    { value: 'task_admin', label: 'Task administrator (run any task, see every run)' },
    { value: 'metrics_read', label: 'Read service metrics (Prometheus /api/metrics)' },
    { value: 'schedule_tasks', label: 'Schedule tasks (periodic and one-off runs of the tasks they may run)' },
  ],
};

const ACTIONS = [
  { value: 'safe', label: 'read (GET)' },
  { value: 'add', label: 'add (POST)' },
  { value: 'update', label: 'update (PUT/PATCH)' },
  { value: 'delete', label: 'delete (DELETE)' },
];

const selectStyle: React.CSSProperties = {
  width: '100%',
  padding: '8px',
  border: '1px solid #C0C0CA',
  borderRadius: '4px',
  background: '#fff',
  fontSize: '14px',
};

interface RadioProps<T extends string> {
  name: string;
  options: Option<T>[];
  value: string;
  onChange: (value: T) => void;
}

const Radio = <T extends string>({ name, options, value, onChange }: RadioProps<T>) => (
  <Box mb="lg">
    {options.map((option) => (
      <label key={option.value} style={{ display: 'block', margin: '4px 0', cursor: 'pointer' }}>
        <input type="radio" name={name} value={option.value} checked={value === option.value} onChange={() => onChange(option.value)} />{' '}
        {option.label}
      </label>
    ))}
  </Box>
);

interface NameFieldProps {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  suggestions?: string[];
  hint?: string;
}

const NameField = ({ id, label, value, onChange, suggestions, hint }: NameFieldProps) => (
  <Box mb="lg">
    <Label htmlFor={id}>{label}</Label>
    <Input
      id={id}
      name={id}
      width={1}
      list={`${id}-list`}
      value={value}
      autoComplete="off"
      onChange={(e: React.ChangeEvent<HTMLInputElement>) => onChange(e.target.value)}
    />
    <datalist id={`${id}-list`}>
      {(suggestions || []).map((s) => (
        <option key={s} value={s} />
      ))}
    </datalist>
    {hint ? (
      <Text variant="sm" mt="sm" color="grey60">
        {hint}
      </Text>
    ) : null}
  </Box>
);

const PermissionPicker = () => {
  const addNotice = useNotice();
  const [choices, setChoices] = useState<PickerChoices | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [area, setArea] = useState<GrantArea>('data_store');
  const [scope, setScope] = useState('collection');
  const [database, setDatabase] = useState('');
  const [collection, setCollection] = useState('');
  const [collections, setCollections] = useState<string[]>([]);
  const [task, setTask] = useState('');
  const [actions, setActions] = useState<string[]>(['safe']);
  const [group, setGroup] = useState('');
  const [user, setUser] = useState('');
  const [preview, setPreview] = useState<Preview>({ codenames: [], error: null });
  const [result, setResult] = useState<Result | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api
      .resourceAction({ resourceId: RESOURCE, actionName: ACTION, params: { op: 'choices' } })
      .then((r) => setChoices(r.data as PickerChoices))
      .catch((e: unknown) => setLoadError(errorMessage(e)));
  }, []);

  // The list is emptied where the database or area is chosen (chooseArea, chooseDatabase).
  useEffect(() => {
    if (!database || (area !== 'data_store' && area !== 'catalog')) return;
    api
      .resourceAction({ resourceId: RESOURCE, actionName: ACTION, params: { op: 'collections', area, database } })
      .then((r) => setCollections((r.data.collections as string[] | undefined) || []))
      .catch(() => setCollections([]));
  }, [area, database]);

  const spec = useMemo(() => ({ area, scope, database, collection, task, actions }), [area, scope, database, collection, task, actions]);

  useEffect(() => {
    let current = true;
    api
      .resourceAction({ resourceId: RESOURCE, actionName: ACTION, params: { op: 'preview', spec: JSON.stringify(spec) } })
      .then((r) => {
        const answer = r.data as Partial<Preview>;
        if (current) setPreview({ codenames: answer.codenames || [], error: answer.error || null });
      })
      .catch((e: unknown) => {
        if (current) setPreview({ codenames: [], error: errorMessage(e) });
      });
    return () => {
      current = false;
    };
  }, [spec]);

  const chooseArea = (value: GrantArea) => {
    setArea(value);
    setScope(SCOPES[value][0].value);
    setDatabase('');
    setCollection('');
    setCollections([]);
  };

  const chooseDatabase = (value: string) => {
    setDatabase(value);
    setCollection('');
    setCollections([]);
  };

  const toggleAction = (value: string) => {
    setActions((old) => (old.includes(value) ? old.filter((a) => a !== value) : [...old, value]));
  };

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setResult(null);
    api
      .resourceAction({
        resourceId: RESOURCE,
        actionName: ACTION,
        method: 'post',
        data: { spec: JSON.stringify(spec), group, user },
      })
      .then((r) => {
        setResult({ ok: true, data: r.data as { summary: string } });
        if (r.data.notice) addNotice(r.data.notice);
      })
      .catch((e: unknown) => {
        setResult({ ok: false, message: errorMessage(e) });
      })
      .finally(() => setBusy(false));
  };

  if (loadError) return <LoadFailed message={`The choices could not be loaded: ${loadError}`} />;
  if (!choices) return <Loading />;

  const databases = area === 'catalog' ? choices.areas.catalog.databases : choices.areas.data_store.databases;
  const needsDatabase = (area === 'data_store' || area === 'catalog') && (scope === 'collection' || scope === 'database');
  const needsCollection = needsDatabase && scope === 'collection';
  const needsActions = needsDatabase;

  return (
    <Box variant="grey">
      <Box as="form" variant="white" onSubmit={submit} data-testid="permission-picker">
        <Text mb="xl">
          Pick what to grant; the permission codenames are created for you and can be granted to a group or a user right away.
        </Text>

        <H5 mb="sm">Area</H5>
        <Radio name="area" options={AREAS} value={area} onChange={chooseArea} />

        <H5 mb="sm">What</H5>
        <Radio name="scope" options={SCOPES[area]} value={scope} onChange={setScope} />

        {needsDatabase ? (
          <NameField
            id="picker-database"
            label="Database"
            value={database}
            onChange={chooseDatabase}
            suggestions={databases}
            hint={`${databases.length} existing database(s) offered; a name that does not exist yet can be typed too.`}
          />
        ) : null}
        {needsCollection ? (
          <NameField
            id="picker-collection"
            label="Collection"
            value={collection}
            onChange={setCollection}
            suggestions={collections}
            hint={database ? `${collections.length} existing collection(s) in ${database}.` : 'Choose the database first.'}
          />
        ) : null}
        {needsActions ? (
          <Box mb="lg">
            <H5 mb="sm">Allowed actions</H5>
            {ACTIONS.map((a) => (
              <label key={a.value} style={{ display: 'inline-block', marginRight: '1.2rem', cursor: 'pointer' }}>
                <input
                  type="checkbox"
                  name={`action-${a.value}`}
                  checked={actions.includes(a.value)}
                  onChange={() => toggleAction(a.value)}
                />{' '}
                {a.label}
              </label>
            ))}
          </Box>
        ) : null}
        {area === 'cybercom_queue' && scope === 'task' ? (
          <NameField
            id="picker-task"
            label="Task"
            value={task}
            onChange={setTask}
            suggestions={choices.tasks}
            hint={
              choices.tasksError
                ? `Registered tasks are not available (${choices.tasksError}); type the task name.`
                : `${choices.tasks.length} registered task(s) offered.`
            }
          />
        ) : null}

        <H5 mb="sm">Grant to (optional)</H5>
        <Box flex flexDirection="row" flexWrap="wrap" mb="lg">
          <Box mr="xl" style={{ minWidth: '16rem' }}>
            <Label htmlFor="picker-group">Group</Label>
            <select id="picker-group" name="picker-group" value={group} onChange={(e) => setGroup(e.target.value)} style={selectStyle}>
              <option value="">(no group)</option>
              {choices.groups.map((g) => (
                <option key={g} value={g}>
                  {g}
                </option>
              ))}
            </select>
          </Box>
          <Box style={{ minWidth: '16rem' }}>
            <NameField id="picker-user" label="User" value={user} onChange={setUser} suggestions={choices.users} />
          </Box>
        </Box>

        <Box mb="lg" data-testid="picker-preview">
          <H5 mb="sm">Codenames</H5>
          {preview.error ? <Text color="error">{preview.error}</Text> : null}
          {!preview.error && preview.codenames.length === 0 ? <Text color="grey60">Nothing chosen yet.</Text> : null}
          <ul style={{ listStyle: 'none', padding: 0 }}>
            {preview.codenames.map((c) => (
              <li key={c.codename} style={{ margin: '4px 0' }}>
                <code>{c.codename}</code>{' '}
                <Text as="span" color="grey60">
                  {c.name}
                </Text>
              </li>
            ))}
          </ul>
        </Box>

        <Button
          type="submit"
          variant="contained"
          disabled={busy || !!preview.error || preview.codenames.length === 0}
          data-testid="picker-submit"
        >
          Create permissions{group || user ? ' and grant them' : ''}
        </Button>

        {result ? (
          <Box mt="lg" data-testid="picker-result">
            {result.ok ? (
              <MessageBox variant="success" message={result.data.summary} />
            ) : (
              <MessageBox variant="danger" message={result.message} />
            )}
          </Box>
        ) : null}
      </Box>
    </Box>
  );
};

export default PermissionPicker;
