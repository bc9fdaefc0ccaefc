/**
 * `parley agent-tools`: the stdio MCP server an ACP agent spawns. It holds no tools itself: it
 * connects to the gateway's socket (path and token from its environment, as the gateway offered
 * them at session/new), says its token, and then copies bytes both ways, so the MCP conversation
 * runs in the gateway where the session's conversation is known. Nothing but protocol on stdout.
 * Layer: mcp.
 */
import { connect } from "node:net";
import type { Readable, Writable } from "node:stream";
import { AGENT_TOOLS_SOCKET_ENV, AGENT_TOOLS_TOKEN_ENV } from "./agent-tools.js";

export async function runAgentToolsBridge(io: {
  env: Readonly<Record<string, string | undefined>>;
  stdin: Readable;
  stdout: Writable;
  err: (line: string) => void;
}): Promise<number> {
  const path = io.env[AGENT_TOOLS_SOCKET_ENV] ?? "";
  const token = io.env[AGENT_TOOLS_TOKEN_ENV] ?? "";
  if (!path || !token) {
    io.err(
      `parley agent-tools: ${AGENT_TOOLS_SOCKET_ENV} and ${AGENT_TOOLS_TOKEN_ENV} must be set (parley sets them when it offers this server to an agent)`,
    );
    return 2;
  }
  return new Promise<number>((done) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.write(`${token}\n`);
      io.stdin.pipe(socket);
      socket.pipe(io.stdout);
    });
    socket.once("error", (error) => {
      io.err(`parley agent-tools: cannot reach parley (${error.message})`);
      done(1);
    });
    socket.once("close", () => done(0));
    // The agent closing our stdin ends the session.
    io.stdin.once("end", () => socket.end());
  });
}
