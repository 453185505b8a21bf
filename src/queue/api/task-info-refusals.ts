/**
 * Which workers lack `cybercom_task_info`. A Python worker without the extension answers it with
 * an error and logs that error with a traceback, each time it is asked; with the task list
 * refreshed every few seconds that would fill its log. So a node that refused is left out of
 * that broadcast for a while (a pcre pattern matching every other node name, so workers that
 * came up since are still asked), then asked again, in case it was restarted with the extension.
 */
import type { BroadcastOptions, NodeReplies } from '../remote-control/control-client.js';
import type { TaskInfoReply } from '../protocol/task-info.js';

/** How long a refusal is believed. */
const REASK_AFTER_MS = 10 * 60_000;

/** A regular expression for literal text (the same escapes mean the same in Python's `re`). */
const literal = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A pattern for kombu's `pcre` matcher (Python's `re.match`, anchored at the start only) that
 * matches every node name except the given ones.
 */
export function excludingPattern(nodes: readonly string[]): string {
  return `(?!(?:${nodes.map(literal).join('|')})$)`;
}

export class TaskInfoRefusals {
  private readonly refusedAt = new Map<string, number>();

  constructor(
    private readonly reaskAfterMs = REASK_AFTER_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** How to address the next broadcast: everyone, or everyone but the nodes that recently refused. */
  addressing(): Pick<BroadcastOptions, 'pattern' | 'matcher'> {
    const now = this.now();
    for (const [node, at] of this.refusedAt) if (now - at >= this.reaskAfterMs) this.refusedAt.delete(node);
    if (this.refusedAt.size === 0) return {};
    return { pattern: excludingPattern([...this.refusedAt.keys()].sort()), matcher: 'pcre' };
  }

  /** Remembers the nodes that refused; a node that answered is forgotten as a refuser. */
  note(replies: NodeReplies<TaskInfoReply>): void {
    const now = this.now();
    for (const [node, reply] of Object.entries(replies)) {
      if (reply.kind === 'refused') this.refusedAt.set(node, now);
      else this.refusedAt.delete(node);
    }
  }
}
