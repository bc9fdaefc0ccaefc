// An ACP agent that uses the MCP servers the client offers at session/new, as a real agent does:
// it spawns each stdio server with the MCP SDK's client and calls its tools. A prompt
// `call <tool> <json arguments>` calls that tool on the server named "parley" and answers with the
// tool's result (`tool ok: …` or `tool error: …`); `servers` lists what it was offered; anything
// else is echoed as `echo: <text>`.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { say, serve } from "./lib.mjs";

/** sessionId -> the mcpServers offered with it. */
const offered = new Map();
/** sessionId -> a connected MCP client for "parley". */
const clients = new Map();
let nextSession = 1;

async function parleyClient(sessionId) {
  const existing = clients.get(sessionId);
  if (existing) return existing;
  const server = (offered.get(sessionId) ?? []).find((s) => s.name === "parley");
  if (!server) throw new Error("no parley MCP server was offered");
  const client = new Client({ name: "tool-agent", version: "0.0.1" });
  await client.connect(
    new StdioClientTransport({
      command: server.command,
      args: server.args,
      env: Object.fromEntries(server.env.map((e) => [e.name, e.value])),
      stderr: "inherit",
    }),
  );
  clients.set(sessionId, client);
  return client;
}

serve({
  "session/new": async ({ mcpServers }) => {
    const sessionId = `tool-session-${nextSession++}`;
    offered.set(sessionId, mcpServers ?? []);
    return { sessionId };
  },
  "session/prompt": async ({ sessionId, prompt }) => {
    const text = prompt
      .filter((b) => b.type === "text")
      .map((b) => b.text)
      .join("\n")
      .trim();
    const call = /^call (\S+) (.*)$/s.exec(text);
    if (text === "servers") {
      say(sessionId, `servers: ${(offered.get(sessionId) ?? []).map((s) => s.name).join(", ") || "none"}`);
    } else if (call) {
      try {
        const client = await parleyClient(sessionId);
        const result = await client.callTool({ name: call[1], arguments: JSON.parse(call[2]) });
        const body = result.content.map((c) => c.text ?? "").join(" ");
        say(sessionId, `tool ${result.isError ? "error" : "ok"}: ${body}`);
      } catch (error) {
        say(sessionId, `tool failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    } else {
      say(sessionId, `echo: ${text}`);
    }
    return { stopReason: "end_turn" };
  },
});
