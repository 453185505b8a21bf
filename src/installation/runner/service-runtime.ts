/**
 * What operator commands need from a runtime, so install, status, logs, rotation and restore are
 * written once for compose and for local processes.
 */
export interface ProcessState {
  service: string;
  state: string;
  detail: string;
}

export interface ServiceRuntime {
  readonly kind: 'compose' | 'local';
  /** Service names for logs and status. */
  readonly services: readonly string[];
  isRunning(): Promise<boolean>;
  /** Starts the stack, or restarts it so new configuration and certificates take effect. */
  startOrRestart(): Promise<void>;
  stop(): Promise<void>;
  processStates(): Promise<ProcessState[]>;
  logTail(service: string, lines: number): Promise<string>;
  /** Streams a service's log until interrupted. */
  followLogs(service: string, lines: number): Promise<void>;
  /** Removes the database's and broker's data (restore onto a clean slate). Stack must be stopped. */
  removeData(): Promise<void>;
}
