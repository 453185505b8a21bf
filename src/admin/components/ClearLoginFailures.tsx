/*
 * "Clear login failures" on a user (record action): one button. The server clears the login
 * throttle's counts of the account from every address (src/admin/resources/users.ts); the next
 * login is judged as if none had failed.
 */
import React, { useState } from 'react';
import { ApiClient, useNotice, type ActionProps } from 'adminjs';
import { Box, Text, Button, MessageBox } from '@adminjs/design-system';
import { errorMessage } from './shared/admin-fetch.js';

const api = new ApiClient();

const ClearLoginFailures = ({ record, resource }: ActionProps) => {
  const addNotice = useNotice();
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    api
      .recordAction({ resourceId: resource.id, recordId: record?.id ?? '', actionName: 'clearLoginFailures', data: {} })
      .then((r) => {
        if (r.data.notice) {
          addNotice(r.data.notice);
          setResult(r.data.notice.message);
        }
      })
      .catch((e: unknown) => setError(errorMessage(e)))
      .finally(() => setBusy(false));
  };

  return (
    <Box variant="grey">
      <Box as="form" variant="white" onSubmit={submit} data-testid="clear-login-failures">
        <Text mb="xl">
          Clears the failed logins counted against <strong>{record?.params.username}</strong> from every address, so that wrong passwords
          are no longer answered &quot;too many attempts&quot; and no wait is asked. The right password is never refused for failures, so
          use this for a user who mistyped often or after an attack has stopped.
        </Text>
        {error ? <MessageBox mb="lg" variant="danger" message={error} /> : null}
        {result ? <MessageBox mb="lg" variant="success" message={result} /> : null}
        <Button type="submit" variant="contained" disabled={busy}>
          Clear login failures
        </Button>
      </Box>
    </Box>
  );
};

export default ClearLoginFailures;
