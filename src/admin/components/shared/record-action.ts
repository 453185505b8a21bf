/*
 * A record action's form submitted through AdminJS's API, the way the one-button actions do it
 * (Clear login failures, Pause and Resume): busy while it runs, the server's notice shown and
 * kept as the result, a failure kept as the error.
 */
import { useState } from 'react';
import { ApiClient, useNotice } from 'adminjs';
import { errorMessage } from './admin-fetch.js';

const api = new ApiClient();

export interface RecordActionCall {
  resourceId: string;
  recordId: string;
  actionName: string;
  data: Record<string, unknown>;
}

export function useRecordAction() {
  const addNotice = useNotice();
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = (call: RecordActionCall): void => {
    setError(null);
    setBusy(true);
    api
      .recordAction(call)
      .then((r) => {
        if (r.data.notice) {
          addNotice(r.data.notice);
          setResult(r.data.notice.message);
        }
      })
      .catch((e: unknown) => setError(errorMessage(e)))
      .finally(() => setBusy(false));
  };

  return { error, result, busy, run };
}
