// A minimal raw JSON-RPC agent for deliberately broken ACP fakes: no SDK, so each fake can break
// the protocol exactly the way it wants to.
import { createInterface } from "node:readline";

/** Return from a handler to leave a request unanswered. */
export const NO_REPLY = Symbol("no reply");

class RpcError {
  constructor(code, message) {
    this.error = { code, message };
  }
}

/** Return from a handler to answer with a JSON-RPC error. */
export function rpcError(code, message) {
  return new RpcError(code, message);
}

export function send(message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
}

export function update(sessionId, u) {
  send({ method: "session/update", params: { sessionId, update: u } });
}

export function say(sessionId, text) {
  update(sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
}

let nextId = 1;
const waiting = new Map();

/** Sends a request to the client and resolves with its full response message. */
export function request(method, params) {
  const id = `fake-${nextId++}`;
  send({ id, method, params });
  return new Promise((resolve) => waiting.set(id, resolve));
}

/**
 * Serves `handlers` (method -> async (params) => result | NO_REPLY). initialize and session/new
 * have working defaults. With exitOnEof false the fake outlives its stdin (to test SIGKILL).
 */
export function serve(handlers, { protocolVersion = 1, exitOnEof = true } = {}) {
  const defaults = {
    initialize: async () => ({ protocolVersion, agentCapabilities: {}, authMethods: [] }),
    "session/new": async () => ({ sessionId: "fake-session" }),
  };
  const lines = createInterface({ input: process.stdin });
  lines.on("line", async (line) => {
    if (line.trim() === "") return;
    const msg = JSON.parse(line);
    if (!("method" in msg)) {
      waiting.get(msg.id)?.(msg);
      waiting.delete(msg.id);
      return;
    }
    const handler = handlers[msg.method] ?? defaults[msg.method];
    if (!handler) {
      if ("id" in msg) send({ id: msg.id, error: { code: -32601, message: `no ${msg.method}` } });
      return;
    }
    const result = await handler(msg.params ?? {});
    if (!("id" in msg) || result === NO_REPLY) return;
    send(result instanceof RpcError ? { id: msg.id, error: result.error } : { id: msg.id, result });
  });
  if (exitOnEof) lines.on("close", () => process.exit(0));
}
