/*
 * "Pause" and "Resume" on a schedule (record actions): pause takes an optional note saying why
 * (shown with the schedule, as the API's pause takes one); resume starts from the next fire to
 * come. The server does it through the schedules' service (src/admin/resources/schedules.ts).
 */
import React, { useState } from 'react';
import type { ActionProps } from 'adminjs';
import { Box, Text, Button, Input, Label, MessageBox } from '@adminjs/design-system';
import { useRecordAction } from './shared/record-action.js';

const ScheduleToggle = ({ record, resource, action }: ActionProps) => {
  const pause = action.name === 'pause';
  const [note, setNote] = useState('');
  const { error, result, busy, run } = useRecordAction();

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    run({ resourceId: resource.id, recordId: record?.id ?? '', actionName: action.name, data: pause ? { note } : {} });
  };

  return (
    <Box variant="grey">
      <Box as="form" variant="white" onSubmit={submit} data-testid="schedule-toggle">
        <Text mb="xl">
          {pause ? (
            <>
              Pausing <strong>{record?.params.name}</strong> keeps it and its next fire; it fires nothing until it is resumed, and fires
              that pass meanwhile are neither run nor counted as missed.
            </>
          ) : (
            <>
              Resuming <strong>{record?.params.name}</strong> starts it again from its next fire to come (fires that passed while it was
              paused are not caught up).
            </>
          )}
        </Text>
        {pause ? (
          <Box mb="xl">
            <Label htmlFor="schedule-note">Note (why it is paused)</Label>
            <Input
              id="schedule-note"
              width={1}
              value={note}
              onChange={(e: React.ChangeEvent<HTMLInputElement>) => setNote(e.target.value)}
            />
          </Box>
        ) : null}
        {error ? <MessageBox mb="lg" variant="danger" message={error} /> : null}
        {result ? <MessageBox mb="lg" variant="success" message={result} /> : null}
        <Button type="submit" variant="contained" disabled={busy}>
          {pause ? 'Pause' : 'Resume'}
        </Button>
      </Box>
    </Box>
  );
};

export default ScheduleToggle;
