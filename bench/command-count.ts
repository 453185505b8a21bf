/**
 * Preloaded into a benchmarked server (`node --import`): counts the database commands its mongodb
 * clients start, by name, through the driver's command monitoring (on when the connection string
 * says `monitorCommands=true`), and on SIGUSR2 writes the counts so far to the file
 * BENCH_COMMAND_COUNT_FILE names. The benchmark reads them before and after a run.
 */
import { writeFileSync } from 'node:fs';
import { MongoClient, type CommandStartedEvent } from 'mongodb';

const file = process.env.BENCH_COMMAND_COUNT_FILE;
const counts: Record<string, number> = {};
const emit = MongoClient.prototype.emit;
// The client re-emits its topology's monitoring events (and only then do listeners see them).
MongoClient.prototype.emit = function countCommands(this: MongoClient, ...args: Parameters<typeof emit>) {
  if (args[0] === 'commandStarted') {
    const { commandName } = args[1] as CommandStartedEvent;
    counts[commandName] = (counts[commandName] ?? 0) + 1;
  }
  return emit.apply(this, args);
} as typeof emit;

if (file !== undefined) process.on('SIGUSR2', () => writeFileSync(file, JSON.stringify(counts)));
