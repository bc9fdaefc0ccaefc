/**
 * Agent-initiated messages in gateway mode: at session/new (and session/load) the ACP agent is
 * offered an MCP server, `parley`, with `send_message` and `send_file`. The agent spawns it as a
 * stdio command (the one MCP transport every ACP agent takes): `parley agent-tools`, a small bridge
 * that connects back to this gateway over a Unix socket in the data home (owner-only) and presents
 * a per-session token. The tools themselves run here, in the gateway, where the session's own
 * conversation is known from the store: the agent never names a conversation, only (optionally)
 * an operator-configured target by name. Every message goes through the one egress (re-authorized,
 * redacted, split, audited), and a refusal is returned to the agent as an error it reads.
 * Layer: mcp.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import type { Server as NetServer, Socket } from "node:net";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import type { McpServer } from "@agentclientprotocol/sdk";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Logger } from "../messaging/base/logger.js";
import type { Egress, EgressDestination } from "../messaging/channel/egress.js";
import { describeEgress } from "../messaging/channel/egress.js";
import { extractLocalRefs } from "../messaging/files/outbound-files.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { SessionStore } from "../messaging/session/session-store.js";
import { uploadsRestricted } from "../messaging/session/upload-gate.js";
import type { ToolDef } from "./tool-kit.js";
import { callTool, listed, ok, PARLEY_MCP_VERSION, refused, tool } from "./tool-kit.js";

export const AGENT_TOOLS_SOCKET_ENV = "PARLEY_AGENT_TOOLS_SOCKET";
export const AGENT_TOOLS_TOKEN_ENV = "PARLEY_AGENT_TOOLS_TOKEN";
/** The first line a bridge sends (its token) must arrive within this and be at most this long. */
const HELLO_TIMEOUT_MS = 10_000;
const HELLO_MAX_BYTES = 256;
/** A Unix socket path longer than this does not bind (sun_path is ~108 bytes on Linux). */
const MAX_SOCKET_PATH = 100;

export interface AgentToolsOptions {
  home: string;
  egress: Egress;
  store: SessionStore;
  audit: AuditSink;
  logger: Logger;
  /** The agent's working folder: the only place send_file reads from. */
  agentCwd: string;
  /** How the agent starts the bridge: the executable and its arguments before `agent-tools`. */
  bridge: { command: string; args: string[] };
}

/** Where the socket lives: the data home when the path fits, else a private directory under /tmp. */
function socketDir(home: string): string {
  const inHome = join(home, "run");
  if (join(inHome, "agent-tools.sock").length <= MAX_SOCKET_PATH) return inHome;
  return join("/tmp", `parley-${process.getuid?.() ?? "user"}-${randomBytes(6).toString("hex")}`);
}

export class AgentTools {
  /** token -> session key; a token is minted per session key and lives as long as this process. */
  private readonly sessions = new Map<string, string>();
  private readonly tokens = new Map<string, string>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly o: AgentToolsOptions,
    private readonly server: NetServer,
    readonly socketPath: string,
    private readonly dir: string,
  ) {}

  static async start(o: AgentToolsOptions): Promise<AgentTools> {
    const dir = socketDir(o.home);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Owner-only whoever created it: the socket is a way to post into every conversation.
    chmodSync(dir, 0o700);
    const socketPath = join(dir, "agent-tools.sock");
    // A socket left by a killed gateway (the home lock says no other one runs here).
    rmSync(socketPath, { force: true });
    const server = createServer();
    const tools = new AgentTools(o, server, socketPath, dir);
    server.on("connection", (socket) => tools.accept(socket));
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(socketPath, () => done());
    });
    chmodSync(socketPath, 0o600);
    return tools;
  }

  /** The MCP server entry offered to the agent for one conversation's session. */
  serversFor(sessionKey: string): McpServer[] {
    let token = this.tokens.get(sessionKey);
    if (!token) {
      token = randomBytes(24).toString("base64url");
      this.tokens.set(sessionKey, token);
      this.sessions.set(token, sessionKey);
    }
    return [
      {
        name: "parley",
        command: this.o.bridge.command,
        args: [...this.o.bridge.args, "agent-tools"],
        env: [
          { name: AGENT_TOOLS_SOCKET_ENV, value: this.socketPath },
          { name: AGENT_TOOLS_TOKEN_ENV, value: token },
        ],
      },
    ];
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
    rmSync(this.socketPath, { force: true });
    if (this.dir.startsWith("/tmp/")) rmSync(this.dir, { recursive: true, force: true });
  }

  /** A bridge connected: its first line is its token; then the socket carries MCP both ways. */
  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => this.reject(socket, "timeout"), HELLO_TIMEOUT_MS);
    timer.unref();
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const nl = head.indexOf(0x0a);
      if (nl < 0) {
        if (head.length > HELLO_MAX_BYTES) this.reject(socket, "oversized");
        return;
      }
      socket.off("data", onData);
      clearTimeout(timer);
      const key = this.sessions.get(head.subarray(0, nl).toString("utf8").trim());
      if (key === undefined) return this.reject(socket, "unknown_token");
      const rest = head.subarray(nl + 1);
      if (rest.length > 0) socket.unshift(rest);
      void this.serve(socket, key);
    };
    socket.on("data", onData);
    socket.on("error", () => socket.destroy());
  }

  private reject(socket: Socket, reason: string): void {
    this.o.audit.log("agent_tools.connect", "refused", { reason });
    socket.destroy();
  }

  private async serve(socket: Socket, sessionKey: string): Promise<void> {
    const defs = this.toolsFor(sessionKey);
    const server = new Server(
      { name: "parley", version: PARLEY_MCP_VERSION },
      {
        capabilities: { tools: {} },
        instructions:
          "parley connects this session to a chat conversation. Use send_message to tell the person something on your own (a result, a question, a heads-up); send_file to send them an image from your working folder. Your normal answers already reach them: do not repeat them here.",
      },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: defs.map(listed) }));
    server.setRequestHandler(CallToolRequestSchema, async (req) =>
      callTool(defs, req.params.name, req.params.arguments),
    );
    socket.once("close", () => void server.close().catch(() => undefined));
    await server.connect(new StdioServerTransport(socket, socket));
  }

  private toolsFor(sessionKey: string): ToolDef[] {
    const targets = this.o.egress.targetNames();
    const targetField = z
      .string()
      .optional()
      .describe(
        targets.length
          ? `Send to a configured target instead of this conversation: one of ${targets.join(", ")}.`
          : "No other targets are configured; leave this out.",
      );
    const destination = (target: string | undefined): EgressDestination =>
      target ? { kind: "target", name: target } : { kind: "session", sessionKey };
    return [
      tool({
        name: "send_message",
        description:
          "Send a message to the person you are talking with, in their chat app, now (or to a configured target). Markdown is fine; long messages are split.",
        schema: z.strictObject({ text: z.string().min(1).max(32_000), target: targetField }),
        run: async ({ text, target }) => {
          const result = await this.o.egress.send({
            purpose: "agent",
            destination: destination(target),
            text,
          });
          const line = describeEgress(result);
          return result.status === "sent"
            ? ok(`Message ${line}.`)
            : refused(`Message not delivered: ${line}.`);
        },
      }),
      tool({
        name: "send_file",
        description:
          "Send an image file from your working folder to the person's chat (PNG, JPEG, GIF, WebP or BMP), with an optional caption.",
        schema: z.strictObject({
          path: z
            .string()
            .min(1)
            .max(2048)
            .describe("The file's path, absolute or relative to your working folder."),
          caption: z.string().max(4000).optional(),
          target: targetField,
        }),
        run: async ({ path, caption, target }) => {
          // A temporary or incognito conversation ships no bytes anywhere.
          if (
            uploadsRestricted(this.o.store, sessionKey, "agent_tools", {
              audit: this.o.audit,
              logger: this.o.logger,
            })
          )
            return refused("File not sent: this conversation is temporary or incognito.");
          // The path goes into image markup for the one file gate: characters that would end it are refused.
          if (/[<>\r\n]/.test(path))
            return refused("File not sent: that path contains characters a file path here may not.");
          const extracted = await extractLocalRefs(`![file](<${path}>)`, {
            root: resolve(this.o.agentCwd),
          });
          const file = extracted.files[0];
          if (!file)
            return refused(`File not sent: ${extracted.rejections[0]?.message ?? "it could not be read"}.`);
          const dest = destination(target);
          if (caption?.trim()) {
            const sent = await this.o.egress.send({ purpose: "agent", destination: dest, text: caption });
            if (sent.status !== "sent") return refused(`File not sent: ${describeEgress(sent)}.`);
          }
          const result = await this.o.egress.sendFiles({
            purpose: "agent",
            destination: dest,
            files: [file],
          });
          const line = describeEgress(result);
          return result.status === "sent" ? ok(`File ${line}.`) : refused(`File not sent: ${line}.`);
        },
      }),
    ];
  }
}
