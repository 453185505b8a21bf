/*
 * Issue (resource action "issue": pick a user) or rotate (record action "rotate") an API token.
 * The new key is shown here once; lists and detail pages only ever show its first characters.
 */
import React, { useState } from 'react';
import { ApiClient, useNotice, type ActionProps } from 'adminjs';
import { Box, Text, Label, Input, Button, MessageBox } from '@adminjs/design-system';
import { errorMessage } from './shared/admin-fetch.js';

const api = new ApiClient();

/** The key the server issued, shown once. */
interface IssuedToken {
  username: string;
  key: string;
}

const KeyBox = ({ issued }: { issued: IssuedToken }) => (
  <Box mt="xl" p="lg" style={{ border: '1px solid #C0C0CA', borderRadius: '4px', background: '#F6F7FB' }} data-testid="token-key-box">
    <Text mb="sm">
      API token of <strong>{issued.username}</strong>. Copy it now: it is not shown again.
    </Text>
    <code data-testid="token-key" style={{ fontSize: '16px', userSelect: 'all', wordBreak: 'break-all' }}>
      {issued.key}
    </code>
    <Text mt="sm" color="grey60">
      Use it as <code>Authorization: Token {issued.key.slice(0, 6)}…</code>
    </Text>
  </Box>
);

const TokenKey = ({ record, resource, action }: ActionProps) => {
  const addNotice = useNotice();
  const [username, setUsername] = useState('');
  const [issued, setIssued] = useState<IssuedToken | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const rotating = action.name === 'rotate';

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const call = rotating
      ? api.recordAction({ resourceId: resource.id, recordId: record?.id ?? '', actionName: 'rotate', data: { confirm: 'yes' } })
      : api.resourceAction({ resourceId: resource.id, actionName: 'issue', data: { username } });
    call
      .then((r) => {
        if (r.data.issued) setIssued(r.data.issued as IssuedToken);
        if (r.data.notice) addNotice(r.data.notice);
      })
      .catch((e: unknown) => setError(errorMessage(e)))
      .finally(() => setBusy(false));
  };

  return (
    <Box variant="grey">
      <Box as="form" variant="white" onSubmit={submit} data-testid="token-form">
        <Text mb="xl">
          {rotating
            ? 'A new key replaces the old one, which stops working at once.'
            : 'Each user has at most one token; issuing one for a user who has a token replaces it.'}
        </Text>
        {rotating ? null : (
          <Box mb="lg">
            <Label htmlFor="token-username" required>
              Username
            </Label>
            <Input
              id="token-username"
              name="username"
              width={1}
              autoComplete="off"
              value={username}
              onChange={(e: React.ChangeEvent<HTMLInputElement>) => setUsername(e.target.value)}
            />
          </Box>
        )}
        {error ? <MessageBox mb="lg" variant="danger" message={error} /> : null}
        <Button type="submit" variant="contained" disabled={busy || (!rotating && username.trim() === '') || issued !== null}>
          {rotating ? 'Rotate' : 'Issue token'}
        </Button>
        {issued ? <KeyBox issued={issued} /> : null}
      </Box>
    </Box>
  );
};

export default TokenKey;
