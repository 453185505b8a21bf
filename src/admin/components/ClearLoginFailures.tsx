/*
 * "Clear login failures" on a user (record action): one button. The server clears the login
 * throttle's counts of the account from every address (src/admin/resources/users.ts); the next
 * login is judged as if none had failed.
 */
import React from 'react';
import type { ActionProps } from 'adminjs';
import { Box, Text, Button, MessageBox } from '@adminjs/design-system';
import { useRecordAction } from './shared/record-action.js';

const ClearLoginFailures = ({ record, resource }: ActionProps) => {
  const { error, result, busy, run } = useRecordAction();

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    run({ resourceId: resource.id, recordId: record?.id ?? '', actionName: 'clearLoginFailures', data: {} });
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
