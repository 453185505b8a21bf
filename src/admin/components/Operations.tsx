/*
 * The Operations page: workers, queues, succeeded/failed tasks per minute, running tasks with
 * revoke/terminate (confirmed first), and the latest failures with their tracebacks. Data from
 * GET /api/admin/operations/data, read again every few seconds; actions POST to
 * /api/admin/operations/revoke with the admin's CSRF header. The chart is uPlot, bundled with
 * the rest of these components (nothing is loaded from elsewhere). Bundled by AdminJS.
 */
import React, { useCallback, useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import { Box, Button, H2, H4, Text, MessageBox } from '@adminjs/design-system';
import type { FailureRow } from '../operations/latest-failures.js';
import type { MinuteCount } from '../operations/minute-counts.js';
import type { ClusterView } from '../operations/views.js';
import type { ScheduleOverview, ScheduleSummary } from '../../queue/schedules/schedule-service.js';
import { csrfToken, errorMessage, readJson } from './shared/admin-fetch.js';
import { LoadFailed, Loading } from './shared/page-state.js';
import { cell, confirmFrame, head, table } from './shared/styles.js';

const ROOT = '/api/admin/operations';
const POLL_MS = 3000;

// uPlot's own stylesheet (uPlot.min.css): the chart's layers are positioned by it. The admin's
// Content-Security-Policy allows inline styles, which its other components need too.
const UPLOT_CSS =
  '.uplot, .uplot *, .uplot *::before, .uplot *::after {box-sizing: border-box;}.uplot {font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif;line-height: 1.5;width: min-content;}.u-title {text-align: center;font-size: 18px;font-weight: bold;}.u-wrap {position: relative;user-select: none;}.u-over, .u-under {position: absolute;}.u-under {overflow: hidden;}.uplot canvas {display: block;position: relative;width: 100%;height: 100%;}.u-axis {position: absolute;}.u-legend {font-size: 14px;margin: auto;text-align: center;}.u-inline {display: block;}.u-inline * {display: inline-block;}.u-inline tr {margin-right: 16px;}.u-legend th {font-weight: 600;}.u-legend th > * {vertical-align: middle;display: inline-block;}.u-legend .u-marker {width: 1em;height: 1em;margin-right: 4px;background-clip: padding-box !important;}.u-inline.u-live th::after {content: ":";vertical-align: middle;}.u-inline:not(.u-live) .u-value {display: none;}.u-series > * {padding: 4px;}.u-series th {cursor: pointer;}.u-legend .u-off > * {opacity: 0.3;}.u-select {background: rgba(0,0,0,0.07);position: absolute;pointer-events: none;}.u-cursor-x, .u-cursor-y {position: absolute;left: 0;top: 0;pointer-events: none;will-change: transform;}.u-hz .u-cursor-x, .u-vt .u-cursor-y {height: 100%;border-right: 1px dashed #607D8B;}.u-hz .u-cursor-y, .u-vt .u-cursor-x {width: 100%;border-bottom: 1px dashed #607D8B;}.u-cursor-pt {position: absolute;top: 0;left: 0;border-radius: 50%;border: 0 solid;pointer-events: none;will-change: transform;background-clip: padding-box !important;}.u-axis.u-off, .u-select.u-off, .u-cursor-x.u-off, .u-cursor-y.u-off, .u-cursor-pt.u-off {display: none;}';

const num: React.CSSProperties = { ...cell, textAlign: 'right', fontVariantNumeric: 'tabular-nums' };
const pre: React.CSSProperties = {
  whiteSpace: 'pre-wrap',
  wordBreak: 'break-word',
  fontSize: '12px',
  background: '#f6f7fb',
  padding: '8px',
  margin: '4px 0',
  maxHeight: '24rem',
  overflow: 'auto',
};

/** What GET /data answers (operations/routes.ts): the cluster's view with the failures this admin may see. */
interface OperationsData extends ClusterView {
  generatedAt: string;
  offlineRule: string;
  failures: FailureRow[];
  /** Null when no broker is configured. */
  schedules: ScheduleOverview | null;
}

/** A list of schedules: name, owner, task, next fire, last outcome (with why) and failures in a row. */
const ScheduleTable: React.FC<{ rows: ScheduleSummary[]; testId: string }> = ({ rows, testId }) => (
  <table style={table} data-testid={testId}>
    <thead>
      <tr>
        {['Schedule', 'Owner', 'Task', 'Next fire', 'Last outcome', 'Failures in a row', 'Missed'].map((h) => (
          <th key={h} style={head}>
            {h}
          </th>
        ))}
      </tr>
    </thead>
    <tbody>
      {rows.map((s) => (
        <tr key={s.id} data-testid="schedule" data-schedule-id={s.id}>
          <td style={cell}>{s.name}</td>
          <td style={cell}>{s.owner}</td>
          <td style={cell}>{s.task}</td>
          <td style={cell}>{s.nextFireAt === null ? '—' : new Date(s.nextFireAt).toLocaleString()}</td>
          <td style={cell}>
            {s.lastOutcome ?? '—'}
            {s.lastReason === null ? '' : ` (${s.lastReason})`}
          </td>
          <td style={num}>{s.failureStreak}</td>
          <td style={num}>{s.missedRuns}</td>
        </tr>
      ))}
    </tbody>
  </table>
);

/** What POST /revoke answers. */
interface RevokeAnswer {
  task_id: string;
  terminate: boolean;
  status: string | null;
}

/** A revoke waiting for the admin's confirmation. */
interface PendingRevoke {
  id: string;
  name: string | null;
  terminate: boolean;
}

interface Notice {
  variant: 'success' | 'danger';
  message: string;
}

const time = (iso: string | null) => (iso ? new Date(iso).toLocaleTimeString() : '—');
const json = (value: unknown) => (value === null || value === undefined ? '—' : JSON.stringify(value));
const rate = (n: number) => (n === 0 ? '0' : n.toFixed(2));

const StateBadge = ({ online }: { online: boolean }) => (
  <span style={{ padding: '2px 8px', borderRadius: '10px', fontSize: '12px', color: '#fff', background: online ? '#007d66' : '#c20012' }}>
    {online ? 'online' : 'offline'}
  </span>
);

const Section = ({ title, children, testId }: { title: string; children: React.ReactNode; testId: string }) => (
  <Box variant="white" mb="lg" data-testid={testId}>
    <H4>{title}</H4>
    {children}
  </Box>
);

const OutcomeChart = ({ minutes }: { minutes: MinuteCount[] }) => {
  const holderRef = useRef<HTMLDivElement>(null);
  const plotRef = useRef<uPlot | null>(null);
  const data: uPlot.AlignedData = [minutes.map((m) => m.minute / 1000), minutes.map((m) => m.succeeded), minutes.map((m) => m.failed)];

  // The chart is made on the first render, as wide as its holder then; later renders give it their data.
  useEffect(() => {
    if (plotRef.current) {
      plotRef.current.setData(data);
      return;
    }
    const width = Math.max(320, (holderRef.current && holderRef.current.clientWidth) || 800);
    plotRef.current = new uPlot(
      {
        width,
        height: 220,
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        series: [
          {},
          { label: 'Succeeded', stroke: '#007d66', fill: 'rgba(0,125,102,0.12)', width: 2 },
          { label: 'Failed', stroke: '#c20012', fill: 'rgba(194,0,18,0.12)', width: 2 },
        ],
        axes: [{}, { label: 'tasks / minute' }],
        legend: { live: false },
      },
      data,
      holderRef.current ?? undefined,
    );
  });

  useEffect(
    () => () => {
      plotRef.current?.destroy();
      plotRef.current = null;
    },
    [],
  );

  const total = minutes.reduce((sum, m) => ({ s: sum.s + m.succeeded, f: sum.f + m.failed }), { s: 0, f: 0 });
  return (
    <div>
      <div ref={holderRef} data-testid="outcome-chart" />
      <Text mt="sm" data-testid="outcome-totals">
        Last hour: {total.s} succeeded, {total.f} failed.
      </Text>
    </div>
  );
};

interface ConfirmProps {
  action: PendingRevoke;
  onConfirm: () => void;
  onCancel: () => void;
  busy: boolean;
}

const Confirm = ({ action, onConfirm, onCancel, busy }: ConfirmProps) => (
  <Box data-testid="revoke-confirm" p="lg" mb="lg" style={confirmFrame}>
    <Text mb="default">
      {action.terminate ? 'Terminate' : 'Revoke'} task <code>{action.id}</code>
      {action.name ? ` (${action.name})` : ''}?{' '}
      {action.terminate
        ? 'Its worker stops it now (SIGTERM); this cannot be undone.'
        : 'Workers will not start it; a run in progress continues.'}
    </Text>
    <Button variant="danger" mr="default" onClick={onConfirm} disabled={busy} data-testid="revoke-confirm-yes">
      Yes, {action.terminate ? 'terminate' : 'revoke'}
    </Button>
    <Button variant="text" onClick={onCancel} disabled={busy} data-testid="revoke-confirm-no">
      Cancel
    </Button>
  </Box>
);

const Operations = () => {
  const [data, setData] = useState<OperationsData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<PendingRevoke | null>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [manualId, setManualId] = useState('');

  const load = useCallback(() => {
    fetch(`${ROOT}/data`, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then((response) => readJson<OperationsData>(response))
      .then(
        (body) => {
          setData(body);
          setError(null);
        },
        (e: unknown) => setError(errorMessage(e)),
      );
  }, []);

  useEffect(() => {
    load();
    const timer = setInterval(load, POLL_MS);
    return () => clearInterval(timer);
  }, [load]);

  const confirmAction = () => {
    if (!pending) return;
    setBusy(true);
    fetch(`${ROOT}/revoke`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'X-XSRF-TOKEN': csrfToken() },
      body: JSON.stringify({ task_id: pending.id, terminate: pending.terminate }),
    })
      .then((response) => readJson<RevokeAnswer>(response))
      .then((body) => {
        setNotice({
          variant: 'success',
          message: `Task ${body.task_id} ${body.terminate ? 'terminated' : 'revoked'}${body.status ? ` (state: ${body.status})` : ''}.`,
        });
        load();
      })
      .catch((e: unknown) => setNotice({ variant: 'danger', message: `Could not revoke ${pending.id}: ${errorMessage(e)}` }))
      .finally(() => {
        setBusy(false);
        setPending(null);
      });
  };

  if (!data && error) return <LoadFailed message={`The operations data could not be loaded: ${error}`} />;
  if (!data) return <Loading />;

  return (
    <Box variant="grey">
      <style>{UPLOT_CSS}</style>
      <Box variant="white" mb="lg">
        <H2 data-testid="operations-title">Operations</H2>
        <Text>
          Workers, task queues and task outcomes, updated every {POLL_MS / 1000} seconds (last update {time(data.generatedAt)}).{' '}
          {data.offlineRule}
        </Text>
        {error ? <MessageBox mt="default" message={`Update failed: ${error}`} variant="danger" /> : null}
      </Box>

      <Section title="Workers" testId="workers">
        {data.workers.length === 0 ? (
          <Text data-testid="no-workers">No worker has been heard from.</Text>
        ) : (
          <table style={table}>
            <thead>
              <tr>
                <th style={head}>Node</th>
                <th style={head}>State</th>
                <th style={head}>Queues</th>
                <th style={{ ...head, textAlign: 'right' }}>Concurrency</th>
                <th style={{ ...head, textAlign: 'right' }}>Active</th>
                <th style={{ ...head, textAlign: 'right' }}>Processed</th>
                <th style={{ ...head, textAlign: 'right' }}>Succeeded</th>
                <th style={{ ...head, textAlign: 'right' }}>Failed</th>
                <th style={head}>Load</th>
                <th style={head}>Last heartbeat</th>
              </tr>
            </thead>
            <tbody>
              {data.workers.map((w) => (
                <tr key={w.node} data-testid="worker-row" data-node={w.node} data-state={w.online ? 'online' : 'offline'}>
                  <td style={cell} title={w.software || ''}>
                    {w.node}
                  </td>
                  <td style={cell}>
                    <StateBadge online={w.online} />
                  </td>
                  <td style={cell}>{w.queues.join(', ') || '—'}</td>
                  <td style={num}>{w.concurrency ?? '—'}</td>
                  <td style={num}>{w.active}</td>
                  <td style={num}>{w.processed}</td>
                  <td style={num}>{w.succeeded}</td>
                  <td style={num}>{w.failed}</td>
                  <td style={cell}>{w.load ? w.load.map((n) => n.toFixed(2)).join(' ') : '—'}</td>
                  <td style={cell}>{time(w.lastHeartbeat)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>

      <Section title="Queues" testId="queues">
        {data.queues.length === 0 ? (
          <Text>No queue is consumed by a live worker.</Text>
        ) : (
          <table style={table}>
            <thead>
              <tr>
                <th style={head}>Queue</th>
                <th style={{ ...head, textAlign: 'right' }}>Messages waiting</th>
                <th style={{ ...head, textAlign: 'right' }}>Consumers</th>
                <th style={{ ...head, textAlign: 'right' }}>Published / s</th>
                <th style={{ ...head, textAlign: 'right' }}>Delivered / s</th>
              </tr>
            </thead>
            <tbody>
              {data.queues.map((q) => (
                <tr key={q.name} data-testid="queue-row" data-queue={q.name}>
                  <td style={cell}>{q.name}</td>
                  <td style={num}>{q.messages}</td>
                  <td style={num}>{q.consumers}</td>
                  <td style={num}>{rate(q.publishRate)}</td>
                  <td style={num}>{rate(q.deliverRate)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Text mt="sm" fontSize="12px">
          Rates: tasks submitted through the API (with several API containers: through this one) and their deliveries to workers, per second
          over the last minute.
        </Text>
      </Section>

      <Section title="Succeeded and failed tasks per minute, last hour" testId="outcomes">
        <OutcomeChart minutes={data.minutes} />
      </Section>

      <Section title="Running tasks" testId="running">
        {notice ? (
          <div data-testid="revoke-notice">
            <MessageBox mb="lg" message={notice.message} variant={notice.variant} onCloseClick={() => setNotice(null)} />
          </div>
        ) : null}
        {pending ? <Confirm action={pending} busy={busy} onConfirm={confirmAction} onCancel={() => setPending(null)} /> : null}
        {data.running.length === 0 ? (
          <Text>No task you may see is running.</Text>
        ) : (
          <table style={table}>
            <thead>
              <tr>
                <th style={head}>Task</th>
                <th style={head}>Id</th>
                <th style={head}>Worker</th>
                <th style={head}>Arguments</th>
                <th style={head}>Started</th>
                <th style={head} />
              </tr>
            </thead>
            <tbody>
              {data.running.map((t) => (
                <tr key={t.id} data-testid="running-row" data-task-id={t.id}>
                  <td style={cell}>{t.name}</td>
                  <td style={cell}>
                    <code>{t.id}</code>
                  </td>
                  <td style={cell}>{t.worker}</td>
                  <td style={cell}>
                    {json(t.args)} {json(t.kwargs)}
                  </td>
                  <td style={cell}>{time(t.started)}</td>
                  <td style={cell}>
                    <Button
                      size="sm"
                      variant="outlined"
                      mr="sm"
                      onClick={() => setPending({ id: t.id, name: t.name, terminate: false })}
                      data-testid="revoke"
                    >
                      Revoke
                    </Button>
                    <Button
                      size="sm"
                      variant="danger"
                      onClick={() => setPending({ id: t.id, name: t.name, terminate: true })}
                      data-testid="terminate"
                    >
                      Terminate
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <form
          style={{ marginTop: '12px' }}
          onSubmit={(e) => {
            e.preventDefault();
            if (manualId.trim() !== '') setPending({ id: manualId.trim(), name: null, terminate: false });
          }}
        >
          <label htmlFor="revoke-id" style={{ marginRight: '8px' }}>
            Revoke a task by id
          </label>
          <input
            id="revoke-id"
            value={manualId}
            onChange={(e) => setManualId(e.target.value)}
            style={{ padding: '6px', width: '24rem', border: '1px solid #c0c0ca' }}
          />
          <Button type="submit" size="sm" ml="sm" variant="outlined" data-testid="revoke-by-id">
            Revoke…
          </Button>
        </form>
      </Section>

      {data.schedules === null ? null : (
        <Section title="Schedules" testId="schedules">
          <Text mb="default">
            {data.schedules.active} active, {data.schedules.paused} paused.
          </Text>
          <H4>Next to fire</H4>
          {data.schedules.next.length === 0 ? (
            <Text>No schedule fires soon.</Text>
          ) : (
            <ScheduleTable rows={data.schedules.next} testId="next-fires" />
          )}
          <H4>Failing</H4>
          {data.schedules.failing.length === 0 ? (
            <Text data-testid="no-failing-schedules">No schedule whose last fires were refused or failed.</Text>
          ) : (
            <ScheduleTable rows={data.schedules.failing} testId="failing-schedules" />
          )}
        </Section>
      )}

      <Section title="Latest failures" testId="failures">
        {data.failures.length === 0 ? (
          <Text data-testid="no-failures">No failed task you may see.</Text>
        ) : (
          data.failures.map((f) => (
            <Box key={f.taskId} mb="lg" data-testid="failure" data-task-id={f.taskId}>
              <Text fontWeight="bold">
                {f.name || '(unnamed task)'} — {f.error ? `${f.error.type}: ${f.error.message}` : 'failed'}
              </Text>
              <Text fontSize="12px">
                <code>{f.taskId}</code> · {f.dateDone ? new Date(f.dateDone).toLocaleString() : '—'} · worker {f.worker || '—'} · submitted
                by {f.user || 'another client'}
              </Text>
              <Text fontSize="12px">
                args {json(f.args)} · kwargs {json(f.kwargs)}
              </Text>
              <details open={data.failures.length <= 3}>
                <summary>Traceback</summary>
                <pre style={pre} data-testid="traceback">
                  {f.traceback || '(no traceback stored)'}
                </pre>
              </details>
            </Box>
          ))
        )}
      </Section>
    </Box>
  );
};

export default Operations;
