/**
 * The IPC messages of a gather under the cluster: an API process asks the primary for every API
 * process's answer to a question (a topic, e.g. "metrics"); the primary puts the question to
 * every ready API process (the asker included), collects their answers and sends the list back.
 */

/** API process → primary: "every process's answer to `topic`, please". */
export const GATHER_REQUEST = 'cybercom:gather-request';
/** Primary → the API process that asked: the answers, or why there are none. */
export const GATHER_RESULT = 'cybercom:gather-result';
/** Primary → every API process: "your answer to `topic`, please". */
export const PEER_QUESTION = 'cybercom:peer-question';
/** API process → primary: its own answer (any value IPC can carry), or why it has none. */
export const PEER_ANSWER = 'cybercom:peer-answer';

export interface GatherRequest {
  type: typeof GATHER_REQUEST;
  id: number;
  topic: string;
}
export interface GatherResult {
  type: typeof GATHER_RESULT;
  id: number;
  answers?: unknown[];
  error?: string;
}
export interface PeerQuestion {
  type: typeof PEER_QUESTION;
  id: number;
  topic: string;
}
export interface PeerAnswer {
  type: typeof PEER_ANSWER;
  id: number;
  value?: unknown;
  error?: string;
}

function typed<T extends { type: string }>(type: T['type']) {
  return (message: unknown): message is T =>
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === type &&
    typeof (message as { id?: unknown }).id === 'number';
}

const withTopic =
  <T extends { topic: string }>(is: (m: unknown) => m is T) =>
  (message: unknown): message is T =>
    is(message) && typeof message.topic === 'string';

export const isGatherRequest = withTopic(typed<GatherRequest>(GATHER_REQUEST));
export const isGatherResult = typed<GatherResult>(GATHER_RESULT);
export const isPeerQuestion = withTopic(typed<PeerQuestion>(PEER_QUESTION));
export const isPeerAnswer = typed<PeerAnswer>(PEER_ANSWER);
