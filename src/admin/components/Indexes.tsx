/*
 * The Indexes page: pick a data-store or catalog collection, see its indexes, create one (fields
 * in order with their types, unique, TTL, a name) and drop one after confirming. Data and actions
 * from /api/admin/indexes/* (the documents' own service decides what this admin may see and do);
 * writes carry the admin's CSRF header. The chosen collection is kept in the page's query string
 * (?area=&db=&col=) so a collection's view can be linked to. Bundled by AdminJS.
 */
import React, { useCallback, useEffect, useState } from 'react';
import { Box, Button, H2, H4, Text, MessageBox, Label, Input, Select } from '@adminjs/design-system';
import { csrfToken, errorMessage, readJson } from './shared/admin-fetch.js';
import { cell, confirmFrame, head, table } from './shared/styles.js';

const ROOT = '/api/admin/indexes';
const KEY_TYPES = ['1', '-1', '2dsphere', 'text', 'hashed'];

type Area = 'data_store' | 'catalog';

/** The collection on view, as in the page's query string. */
interface Choice {
  area: Area;
  db: string;
  col: string;
}

interface Option<T extends string = string> {
  value: T;
  label: string;
}

/** An index as the API lists it. */
interface IndexInfo {
  name: string;
  key?: Record<string, unknown>;
  unique?: boolean;
  sparse?: boolean;
  expireAfterSeconds?: number;
  partialFilterExpression?: unknown;
}

/** What GET <area>/<db>/<col>/ answers. */
interface CollectionIndexes {
  indexes: IndexInfo[];
  can_manage: boolean;
}

/** A new index as the API takes it: its fields in order, each with its type. */
interface IndexDefinition {
  keys: [string, number | string][];
  name?: string;
  unique?: boolean;
  expireAfterSeconds?: number;
}

interface KeyRow {
  field: string;
  type: string;
}

const seg = (name: string) => encodeURIComponent(name);
const get = <T,>(path: string) =>
  fetch(`${ROOT}/${path}`, { credentials: 'same-origin', headers: { Accept: 'application/json' } }).then((r) => readJson<T>(r));
const send = <T,>(method: string, path: string, body?: IndexDefinition) =>
  fetch(`${ROOT}/${path}`, {
    method,
    credentials: 'same-origin',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'X-XSRF-TOKEN': csrfToken() },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then((r) => readJson<T>(r));

function initialChoice(): Choice {
  const params = new URLSearchParams(window.location.search);
  return { area: params.get('area') === 'catalog' ? 'catalog' : 'data_store', db: params.get('db') || '', col: params.get('col') || '' };
}

const options = (names: string[]): Option[] => names.map((n) => ({ value: n, label: n }));
const keyText = (key: IndexInfo['key']) =>
  Object.entries(key || {})
    .map(([field, type]) => `${field}: ${type}`)
    .join(', ');
const optionText = (index: IndexInfo) =>
  [
    index.unique ? 'unique' : null,
    index.sparse ? 'sparse' : null,
    index.expireAfterSeconds !== undefined ? `expires after ${index.expireAfterSeconds} s` : null,
    index.partialFilterExpression ? `partial ${JSON.stringify(index.partialFilterExpression)}` : null,
  ]
    .filter(Boolean)
    .join(', ') || '—';

interface CreateFormProps {
  onCreate: (definition: IndexDefinition) => void;
  busy: boolean;
}

const CreateForm = ({ onCreate, busy }: CreateFormProps) => {
  const [keys, setKeys] = useState<KeyRow[]>([{ field: '', type: '1' }]);
  const [name, setName] = useState('');
  const [unique, setUnique] = useState(false);
  const [ttl, setTtl] = useState('');
  const setKey = (i: number, change: Partial<KeyRow>) => setKeys(keys.map((k, j) => (j === i ? { ...k, ...change } : k)));
  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    const body: IndexDefinition = {
      keys: keys.filter((k) => k.field.trim() !== '').map((k) => [k.field.trim(), /^-?1$/.test(k.type) ? Number(k.type) : k.type]),
    };
    if (name.trim() !== '') body.name = name.trim();
    if (unique) body.unique = true;
    if (ttl.trim() !== '') body.expireAfterSeconds = Number(ttl);
    onCreate(body);
  };
  return (
    <form onSubmit={submit} data-testid="create-index">
      {keys.map((k, i) => (
        // Rows are only ever added at the end, so a row's position is what identifies it.
        // eslint-disable-next-line @eslint-react/no-array-index-key
        <Box key={i} flex flexDirection="row" mb="sm">
          <Input
            placeholder="field (a.b for nested)"
            value={k.field}
            onChange={(e: React.ChangeEvent<HTMLInputElement>) => setKey(i, { field: e.target.value })}
            data-testid={`key-field-${i}`}
            mr="default"
          />
          <select value={k.type} onChange={(e) => setKey(i, { type: e.target.value })} data-testid={`key-type-${i}`}>
            {KEY_TYPES.map((t) => (
              <option key={t} value={t}>
                {t === '1' ? 'ascending (1)' : t === '-1' ? 'descending (-1)' : t}
              </option>
            ))}
          </select>
        </Box>
      ))}
      <Button type="button" variant="text" size="sm" onClick={() => setKeys([...keys, { field: '', type: '1' }])} data-testid="add-key">
        + another field
      </Button>
      <Box mt="default">
        <Label>Name (optional)</Label>
        <Input value={name} onChange={(e: React.ChangeEvent<HTMLInputElement>) => setName(e.target.value)} data-testid="index-name" />
      </Box>
      <Box mt="default">
        <label>
          <input type="checkbox" checked={unique} onChange={(e) => setUnique(e.target.checked)} data-testid="index-unique" /> unique
        </label>
      </Box>
      <Box mt="default">
        <Label>Expire records after (seconds, TTL; optional)</Label>
        <Input value={ttl} onChange={(e: React.ChangeEvent<HTMLInputElement>) => setTtl(e.target.value)} data-testid="index-ttl" />
      </Box>
      <Button mt="default" variant="primary" type="submit" disabled={busy} data-testid="create-index-submit">
        Create index
      </Button>
    </form>
  );
};

const Indexes = () => {
  const [choice, setChoice] = useState(initialChoice);
  const [databases, setDatabases] = useState<string[]>([]);
  const [collections, setCollections] = useState<string[]>([]);
  const [view, setView] = useState<CollectionIndexes | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [pendingDrop, setPendingDrop] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const fail = (e: unknown) => setError(errorMessage(e));

  useEffect(() => {
    const params = new URLSearchParams(window.location.search);
    params.set('area', choice.area);
    for (const key of ['db', 'col'] as const) {
      if (choice[key]) params.set(key, choice[key]);
      else params.delete(key);
    }
    window.history.replaceState(null, '', `${window.location.pathname}?${params}`);
  }, [choice]);

  useEffect(() => {
    get<{ databases: string[] }>(`${choice.area}/`)
      .then((body) => setDatabases(body.databases))
      .catch(fail);
  }, [choice.area]);

  /* eslint-disable react-hooks/set-state-in-effect, @eslint-react/hooks-extra/no-direct-set-state-in-use-effect --
     Whichever control changes the choice (or the query string at first), what was shown for the
     last one goes at once, before the next answer comes. */
  useEffect(() => {
    setCollections([]);
    if (!choice.db) return;
    get<{ collections: string[] }>(`${choice.area}/${seg(choice.db)}/`)
      .then((body) => setCollections(body.collections))
      .catch(fail);
  }, [choice.area, choice.db]);

  const load = useCallback(() => {
    setView(null);
    if (!choice.db || !choice.col) return;
    get<CollectionIndexes>(`${choice.area}/${seg(choice.db)}/${seg(choice.col)}/`)
      .then((body) => {
        setView(body);
        setError(null);
      })
      .catch(fail);
  }, [choice]);
  useEffect(load, [load]);
  /* eslint-enable react-hooks/set-state-in-effect, @eslint-react/hooks-extra/no-direct-set-state-in-use-effect */

  const path = `${choice.area}/${seg(choice.db)}/${seg(choice.col)}/`;
  const create = (body: IndexDefinition) => {
    setBusy(true);
    send<{ name: string }>('POST', path, body)
      .then((answer) => {
        setNotice(`Index ${answer.name} created.`);
        setError(null);
        load();
      })
      .catch(fail)
      .finally(() => setBusy(false));
  };
  const drop = () => {
    if (pendingDrop === null) return;
    setBusy(true);
    send('DELETE', `${path}${seg(pendingDrop)}/`)
      .then(() => {
        setNotice(`Index ${pendingDrop} dropped.`);
        setError(null);
        setPendingDrop(null);
        load();
      })
      .catch(fail)
      .finally(() => setBusy(false));
  };

  return (
    <Box variant="grey">
      <H2 data-testid="indexes-title">Indexes</H2>
      {error ? <MessageBox mb="lg" message={error} variant="danger" data-testid="indexes-error" /> : null}
      {notice ? (
        <MessageBox mb="lg" message={notice} variant="success" onCloseClick={() => setNotice(null)} data-testid="indexes-notice" />
      ) : null}
      <Box variant="white" mb="lg" data-testid="collection-picker">
        <H4>Collection</H4>
        <Box flex flexDirection="row">
          <Box mr="lg" width={1 / 3}>
            <Label>Area</Label>
            <Select
              value={{ value: choice.area, label: choice.area === 'catalog' ? 'Catalog' : 'Data store' }}
              options={[
                { value: 'data_store', label: 'Data store' },
                { value: 'catalog', label: 'Catalog' },
              ]}
              onChange={(o: Option<Area> | null) => setChoice({ area: o ? o.value : 'data_store', db: '', col: '' })}
            />
          </Box>
          <Box mr="lg" width={1 / 3} data-testid="pick-database">
            <Label>Database</Label>
            <Select
              value={choice.db ? { value: choice.db, label: choice.db } : null}
              options={options(databases)}
              onChange={(o: Option | null) => setChoice({ ...choice, db: o ? o.value : '', col: '' })}
            />
          </Box>
          <Box width={1 / 3} data-testid="pick-collection">
            <Label>Collection</Label>
            <Select
              value={choice.col ? { value: choice.col, label: choice.col } : null}
              options={options(collections)}
              onChange={(o: Option | null) => setChoice({ ...choice, col: o ? o.value : '' })}
            />
          </Box>
        </Box>
      </Box>
      {view ? (
        <Box variant="white" mb="lg" data-testid="index-list">
          <H4>
            {choice.db}.{choice.col}
          </H4>
          {pendingDrop ? (
            <Box data-testid="drop-confirm" p="lg" mb="lg" style={confirmFrame}>
              <Text mb="default">
                Drop the index <code>{pendingDrop}</code>? Queries that use it get slower; a unique index stops refusing duplicates.
              </Text>
              <Button variant="danger" mr="default" onClick={drop} disabled={busy} data-testid="drop-confirm-yes">
                Yes, drop it
              </Button>
              <Button variant="text" onClick={() => setPendingDrop(null)} disabled={busy} data-testid="drop-confirm-no">
                Cancel
              </Button>
            </Box>
          ) : null}
          <table style={table}>
            <thead>
              <tr>
                <th style={head}>Name</th>
                <th style={head}>Keys (in order)</th>
                <th style={head}>Options</th>
                <th style={head} />
              </tr>
            </thead>
            <tbody>
              {view.indexes.map((index) => (
                <tr key={index.name} data-testid="index-row" data-name={index.name}>
                  <td style={cell}>
                    <code>{index.name}</code>
                  </td>
                  <td style={cell}>{keyText(index.key)}</td>
                  <td style={cell}>{optionText(index)}</td>
                  <td style={cell}>
                    {view.can_manage && index.name !== '_id_' ? (
                      <Button size="sm" variant="danger" onClick={() => setPendingDrop(index.name)} data-testid="drop-index">
                        Drop
                      </Button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Box>
      ) : null}
      {view && view.can_manage ? (
        <Box variant="white" mb="lg">
          <H4>New index</H4>
          <Text mb="default">Building an index on a large collection takes a while; other requests are served meanwhile.</Text>
          <CreateForm onCreate={create} busy={busy} />
        </Box>
      ) : null}
    </Box>
  );
};

export default Indexes;
