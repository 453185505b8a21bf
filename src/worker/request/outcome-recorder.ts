/**
 * Writes task outcomes into the result store so that their messages can be acknowledged: retried
 * while the database restarts (bounded, and cut short when the shutdown's grace period ends), and
 * a final outcome the database refuses for good replaced by a FAILURE saying why.
 */
import type { Logger } from 'pino';
import type { CeleryExceptionInfo } from '../../queue/results/exceptions.js';
import type { RequestMeta } from '../../queue/results/result-document.js';
import type { ResultStore } from '../../queue/results/result-store.js';
import { isTransientWriteError } from '../../queue/results/write-errors.js';
import { OperationAborted, abortable, retrying } from '../service-retry.js';
import { unstorableOutcome } from './unstorable-result.js';

/** How a final outcome ended up in the database: as it was, or replaced by a FAILURE saying why it could not be. */
export type StoredAs = 'stored' | { replacedBy: CeleryExceptionInfo };

export interface OutcomeRecorderOptions {
  /** The store, or null while the database was never reached. */
  store: () => ResultStore | null;
  logger: Logger;
  /** Fires when the shutdown's grace period is over: writes still retrying give up. */
  graceOver: AbortSignal;
  /** How long one write is retried (shorter while closing). */
  deadlineMs: () => number;
}

export class OutcomeRecorder {
  constructor(private readonly options: OutcomeRecorderOptions) {}

  /**
   * Writes a result, retrying while the database restarts. A refusal that no retry can change
   * is thrown at once.
   */
  write(taskId: string, write: (store: ResultStore) => Promise<void>): Promise<void> {
    const store = this.options.store();
    if (store === null) return Promise.reject(new Error('result store not connected'));
    const signal = this.options.graceOver;
    return retrying(() => abortable(write(store), signal), {
      deadlineMs: this.options.deadlineMs(),
      signal,
      retryIf: isTransientWriteError,
      onRetry: (error, attempt, delayMs) =>
        this.options.logger.warn({ err: (error as Error).message, taskId, attempt, retryInMs: delayMs }, 'result write failed, retrying'),
    });
  }

  /**
   * Stores a final outcome so that the message can be acknowledged. When the database refuses
   * the outcome for good, a FAILURE naming the refusal is stored instead (and if even that is
   * refused, one without the arguments, which may be what the database objects to); when
   * nothing can be stored the loss is logged and the message still acknowledged, since running
   * the task again would end the same way. Transient failures and shutdowns are thrown: the
   * message then goes back to the queue.
   */
  async writeFinal(
    task: { taskId: string; taskName: string },
    meta: RequestMeta,
    write: (store: ResultStore, meta: RequestMeta) => Promise<void>,
    refused: () => [what: string, repr: string],
  ): Promise<StoredAs> {
    const { logger } = this.options;
    try {
      await this.write(task.taskId, (store) => write(store, meta));
      return 'stored';
    } catch (error) {
      if (!isPermanentWriteError(error)) throw error;
      const [what, repr] = refused();
      const replacedBy = unstorableOutcome(error, what, repr);
      logger.error(
        { err: error, taskId: task.taskId, task: task.taskName },
        `the database refused the task's ${what}; storing a FAILURE instead`,
      );
      let lastError: unknown = error;
      for (const fallbackMeta of [meta, { ...meta, args: null, kwargs: null }]) {
        try {
          await this.write(task.taskId, (store) => store.markFailure(task.taskId, replacedBy, null, fallbackMeta));
          return { replacedBy };
        } catch (fallbackError) {
          if (!isPermanentWriteError(fallbackError)) throw fallbackError;
          lastError = fallbackError;
        }
      }
      logger.error(
        { err: lastError, taskId: task.taskId, task: task.taskName },
        'the database refused even the FAILURE result; acknowledging the message without a stored result',
      );
      return { replacedBy };
    }
  }
}

/** A refusal that retrying cannot change (not an outage, not a shutdown cutting the write short). */
function isPermanentWriteError(error: unknown): boolean {
  return !(error instanceof OperationAborted) && !isTransientWriteError(error);
}
