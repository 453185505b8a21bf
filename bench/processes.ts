/** Child processes of the benchmarks: the API and baseline servers, started and stopped cleanly. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Starts `command` and resolves once a line of its stdout matches `readyPattern`. */
export async function startChild(command: string[], env: Record<string, string>, readyPattern: RegExp): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(command[0] as string, command.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command.join(' ')} did not start`)), 60_000);
    lines.on('line', (l) => {
      if (readyPattern.test(l)) {
        clearTimeout(timer);
        resolve(l);
      }
    });
    child.once('exit', (code) => reject(new Error(`${command.join(' ')} exited with ${code}`)));
  });
  return { child, line };
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}
