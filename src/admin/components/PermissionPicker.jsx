/*
 * The permission picker (resource action "picker" on Permission): choose what to grant from the
 * databases and collections that exist in the data store and catalog, or from the registered
 * tasks, and the picker creates the right codenames (the canonical ones the API checks),
 * optionally granting them to a group or a user at once. The server builds and validates the codenames
 * (src/admin/picker/*); this component only collects the choice and shows the preview.
 */
import React, { useEffect, useMemo, useState } from 'react';
import { ApiClient, useNotice } from 'adminjs';
import { Box, H5, Text, Label, Input, Button, MessageBox, Loader } from '@adminjs/design-system';

const api = new ApiClient();
const RESOURCE = 'Permission';
const ACTION = 'picker';

const AREAS = [
  { value: 'data_store', label: 'Data store' },
  { value: 'catalog', label: 'Catalog' },
  { value: 'cybercom_queue', label: 'Task queue' },
];

const SCOPES = {
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
  ],
};

const ACTIONS = [
  { value: 'safe', label: 'read (GET)' },
  { value: 'add', label: 'add (POST)' },
  { value: 'update', label: 'update (PUT/PATCH)' },
  { value: 'delete', label: 'delete (DELETE)' },
];

const selectStyle = {
  width: '100%',
  padding: '8px',
  border: '1px solid #C0C0CA',
  borderRadius: '4px',
  background: '#fff',
  fontSize: '14px',
};

const Radio = ({ name, options, value, onChange }) => (
  <Box mb="lg">
    {options.map((option) => (
      <label key={option.value} style={{ display: 'block', margin: '4px 0', cursor: 'pointer' }}>
        <input type="radio" name={name} value={option.value} checked={value === option.value} onChange={() => onChange(option.value)} />{' '}
        {option.label}
      </label>
    ))}
  </Box>
);

const NameField = ({ id, label, value, onChange, suggestions, hint }) => (
  <Box mb="lg">
    <Label htmlFor={id}>{label}</Label>
    <Input id={id} name={id} width={1} list={`${id}-list`} value={value} autoComplete="off" onChange={(e) => onChange(e.target.value)} />
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

const errorText = (e) => {
  const data = e && e.response && e.response.data;
  if (data && data.error && data.error.message) return data.error.message;
  return String(e && e.message ? e.message : e);
};

const PermissionPicker = () => {
  const addNotice = useNotice();
  const [choices, setChoices] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [area, setArea] = useState('data_store');
  const [scope, setScope] = useState('collection');
  const [database, setDatabase] = useState('');
  const [collection, setCollection] = useState('');
  const [collections, setCollections] = useState([]);
  const [task, setTask] = useState('');
  const [actions, setActions] = useState(['safe']);
  const [group, setGroup] = useState('');
  const [user, setUser] = useState('');
  const [preview, setPreview] = useState({ codenames: [], error: null });
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api
      .resourceAction({ resourceId: RESOURCE, actionName: ACTION, params: { op: 'choices' } })
      .then((r) => setChoices(r.data))
      .catch((e) => setLoadError(errorText(e)));
  }, []);

  useEffect(() => {
    setCollections([]);
    if (!database || (area !== 'data_store' && area !== 'catalog')) return;
    api
      .resourceAction({ resourceId: RESOURCE, actionName: ACTION, params: { op: 'collections', area, database } })
      .then((r) => setCollections(r.data.collections || []))
      .catch(() => setCollections([]));
  }, [area, database]);

  const spec = useMemo(() => ({ area, scope, database, collection, task, actions }), [area, scope, database, collection, task, actions]);

  useEffect(() => {
    let current = true;
    api
      .resourceAction({ resourceId: RESOURCE, actionName: ACTION, params: { op: 'preview', spec: JSON.stringify(spec) } })
      .then((r) => {
        if (current) setPreview({ codenames: r.data.codenames || [], error: r.data.error || null });
      })
      .catch((e) => {
        if (current) setPreview({ codenames: [], error: errorText(e) });
      });
    return () => {
      current = false;
    };
  }, [spec]);

  const chooseArea = (value) => {
    setArea(value);
    setScope(SCOPES[value][0].value);
    setDatabase('');
    setCollection('');
  };

  const toggleAction = (value) => {
    setActions((old) => (old.includes(value) ? old.filter((a) => a !== value) : [...old, value]));
  };

  const submit = (event) => {
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
        setResult({ ok: true, data: r.data });
        if (r.data.notice) addNotice(r.data.notice);
      })
      .catch((e) => {
        setResult({ ok: false, message: errorText(e) });
      })
      .finally(() => setBusy(false));
  };

  if (loadError)
    return (
      <Box variant="grey">
        <MessageBox message={`The choices could not be loaded: ${loadError}`} variant="danger" />
      </Box>
    );
  if (!choices)
    return (
      <Box variant="grey">
        <Loader />
      </Box>
    );

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
            onChange={(v) => {
              setDatabase(v);
              setCollection('');
            }}
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
