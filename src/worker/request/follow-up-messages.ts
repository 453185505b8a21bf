/**
 * The messages a finished task sends on, built from its own message: after a SUCCESS its
 * callbacks (the result prepended to their args) and the next step of its chain, after a
 * FAILURE its errbacks (the failed task's id as their argument), after `ctx.retry()` the same
 * message again. Sending them is the outcome flow's part (request-outcomes.ts).
 */
import type { PublishTaskInput } from '../../queue/publishing/task-publisher.js';
import { toJsonValue } from '../../queue/protocol/python-json.js';
import { AUTHENTICATED_USER_HEADER, type HeaderValue } from '../../queue/protocol/task-message.js';
import type { IncomingTask } from '../../queue/protocol/task-message-parser.js';
import { SUBMITTER_ACCESS_HEADER } from '../../queue/protocol/submitter-access.js';
import { parseSignatureList, popChain, signatureMessages, type ApplyContext } from '../canvas.js';
import type { Retry } from './task-retry.js';

/** Callbacks, then the next chain step carrying the rest; throws InvalidSignatureError for an unusable canvas. */
export function successSteps(task: IncomingTask, value: unknown, defaultQueue: string): PublishTaskInput[] {
  const base = applyContext(task, [toJsonValue(value)], defaultQueue);
  const steps = parseSignatureList(task.embed.callbacks).flatMap((sig) => signatureMessages(sig, base));
  const next = popChain(task.embed.chain);
  if (next !== null) steps.push(...signatureMessages(next.next, { ...base, chain: next.rest }));
  return steps;
}

/** The errbacks, each sent as a task; throws InvalidSignatureError for unusable ones. */
export function errbackSteps(task: IncomingTask, defaultQueue: string): PublishTaskInput[] {
  const context = applyContext(task, [task.taskId], defaultQueue);
  return parseSignatureList(task.embed.errbacks).flatMap((sig) => signatureMessages(sig, context));
}

/** The same message again (same id, retries + 1, the retry's eta and arguments), on the queue it came from. */
export function retryMessage(task: IncomingTask, retry: Retry, defaultQueue: string): PublishTaskInput {
  // The publisher sets the authenticated user from `authenticatedUser`, not from the headers.
  const { [AUTHENTICATED_USER_HEADER]: _user, ...headers } = task.customHeaders;
  return {
    taskName: task.taskName,
    taskId: task.taskId,
    args: retry.nextArgs,
    kwargs: retry.nextKwargs,
    queue: task.deliveryInfo.routingKey || defaultQueue,
    authenticatedUser: task.authenticatedUser,
    headers,
    timeLimit: task.timeLimit,
    eta: retry.when,
    expires: task.expires ?? undefined,
    ignoreResult: task.ignoreResult,
    retries: task.retries + 1,
    rootId: task.rootId,
    parentId: task.parentId,
    groupId: task.groupId,
    groupIndex: task.groupIndex,
    shadow: task.shadow,
    priority: task.deliveryInfo.priority ?? undefined,
    embed: task.embed,
  };
}

function applyContext(task: IncomingTask, args: ApplyContext['args'], defaultQueue: string): ApplyContext {
  const inheritedHeaders: Record<string, HeaderValue> = {};
  const access = task.customHeaders[SUBMITTER_ACCESS_HEADER];
  if (access !== undefined && access !== null) inheritedHeaders[SUBMITTER_ACCESS_HEADER] = access;
  return {
    args,
    parentId: task.taskId,
    rootId: task.rootId ?? task.taskId,
    defaultQueue,
    inheritedHeaders,
    authenticatedUser: task.authenticatedUser,
  };
}
