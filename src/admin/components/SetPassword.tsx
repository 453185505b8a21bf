/*
 * "Set password" on a user (record action): new password twice. The server checks the rules
 * and stores only the scrypt hash (src/admin/resources/users.ts); nothing is shown back.
 */
import React, { useState } from 'react';
import { ApiClient, useNotice, type ActionProps } from 'adminjs';
import { Box, Text, Label, Input, Button, MessageBox } from '@adminjs/design-system';
import { errorMessage } from './shared/admin-fetch.js';

const api = new ApiClient();

interface PasswordFieldProps {
  id: string;
  name: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
}

const PasswordField = ({ id, name, label, value, onChange }: PasswordFieldProps) => (
  <Box mb="lg">
    <Label htmlFor={id} required>
      {label}
    </Label>
    <Input
      id={id}
      name={name}
      type="password"
      width={1}
      autoComplete="new-password"
      value={value}
      onChange={(e: React.ChangeEvent<HTMLInputElement>) => onChange(e.target.value)}
    />
  </Box>
);

const SetPassword = ({ record, resource }: ActionProps) => {
  const addNotice = useNotice();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    setError(null);
    if (password !== confirm) {
      setError('The two passwords differ.');
      return;
    }
    setBusy(true);
    api
      .recordAction({ resourceId: resource.id, recordId: record?.id ?? '', actionName: 'setPassword', data: { password, confirm } })
      .then((r) => {
        const failure = r.data.record && r.data.record.errors && r.data.record.errors.password;
        if (failure) {
          setError(failure.message);
          return;
        }
        setDone(true);
        setPassword('');
        setConfirm('');
        if (r.data.notice) addNotice(r.data.notice);
      })
      .catch((e: unknown) => setError(errorMessage(e)))
      .finally(() => setBusy(false));
  };

  return (
    <Box variant="grey">
      <Box as="form" variant="white" onSubmit={submit} data-testid="set-password">
        <Text mb="xl">
          New password for <strong>{record?.params.username}</strong>. It is stored as a scrypt hash; the user's other sessions end.
        </Text>
        <PasswordField id="new-password" name="password" label="New password" value={password} onChange={setPassword} />
        <PasswordField id="confirm-password" name="confirm" label="New password (again)" value={confirm} onChange={setConfirm} />
        {error ? <MessageBox mb="lg" variant="danger" message={error} /> : null}
        {done ? <MessageBox mb="lg" variant="success" message="The password was changed." /> : null}
        <Button type="submit" variant="contained" disabled={busy || password === ''}>
          Set password
        </Button>
      </Box>
    </Box>
  );
};

export default SetPassword;
