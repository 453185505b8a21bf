/**
 * The `registered` remote-control reply: Celery formats each task as the bare name, or as
 * `"<name> [<attr>=<value> <attr>=<value>]"` with the requested attributes that have a value,
 * in the order requested, values inserted raw (as celery/worker/control.py formats them).
 */

export interface RegisteredTaskInfo {
  name: string;
  /** Attribute values as Python would `str()` them; null or missing = "None" = left out. */
  attributes: Record<string, string | null | undefined>;
}

/** Worker side: Celery's `registered` output for the given tasks and requested attributes, sorted by name. */
export function formatRegisteredTasks(tasks: readonly RegisteredTaskInfo[], taskinfoitems: readonly string[]): string[] {
  return [...tasks]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((task) => {
      const fields = taskinfoitems
        .map((item) => [item, task.attributes[item]] as const)
        .filter((pair): pair is readonly [string, string] => pair[1] !== null && pair[1] !== undefined)
        .map(([item, value]) => `${item}=${value}`);
      return fields.length > 0 ? `${task.name} [${fields.join(' ')}]` : task.name;
    });
}

export interface ParsedRegisteredTask {
  name: string;
  attributes: Record<string, string>;
}

/**
 * Client side: splits one `registered` line back into the name and the requested attributes.
 * Values are raw (a docstring may contain spaces, `=` and newlines), so the split relies on the
 * attribute names the client asked for, which appear in that order.
 */
export function parseRegisteredTask(line: string, taskinfoitems: readonly string[]): ParsedRegisteredTask {
  const open = line.indexOf(' [');
  if (open === -1 || !line.endsWith(']')) return { name: line, attributes: {} };
  const name = line.slice(0, open);
  const inner = line.slice(open + 2, -1);

  // Locate each requested attribute, in order, at the start or after a space.
  const found: { item: string; start: number; valueStart: number }[] = [];
  let searchFrom = 0;
  for (const item of taskinfoitems) {
    const marker = `${item}=`;
    let at = inner.indexOf(marker, searchFrom);
    while (at > 0 && inner.charAt(at - 1) !== ' ') at = inner.indexOf(marker, at + 1);
    if (at === -1) continue;
    found.push({ item, start: at, valueStart: at + marker.length });
    searchFrom = at + marker.length;
  }
  if (found.length === 0) return { name: line, attributes: {} };

  const attributes: Record<string, string> = {};
  found.forEach((entry, index) => {
    const next = found[index + 1];
    attributes[entry.item] = next ? inner.slice(entry.valueStart, next.start - 1) : inner.slice(entry.valueStart);
  });
  return { name, attributes };
}
