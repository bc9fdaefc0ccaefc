/**
 * A loopback fake of the Anthropic Messages API, at the wire, for driving a real Claude Code based
 * agent (claude-agent-acp) in tests: `HEAD /` (the connectivity check), `POST /v1/messages` with
 * server-sent events (message_start, content_block_start / delta / stop with text_delta and
 * input_json_delta, message_delta with stop_reason, message_stop) or one JSON message when the
 * request does not stream, and `POST /v1/messages/count_tokens`. What it answers is a pure function
 * of the request (`respond`), so a test scripts the model; every request is recorded with its
 * parsed body so a test can assert what the agent sent (e.g. that earlier turns were restored).
 * Bounded: it stops itself after `lifetimeMs` and refuses requests past `maxRequests`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export type Json = Record<string, unknown>;

/** One block the fake "model" answers with. */
export type ReplyBlock = { type: "text"; text: string } | { type: "tool_use"; name: string; input: Json };

export interface Reply {
  blocks: ReplyBlock[];
  /** Default: "tool_use" when a tool_use block is present, else "end_turn". */
  stopReason?: string;
  /** Milliseconds between streamed events (default 0). */
  delayMs?: number;
}

/** An HTTP error instead of an answer (e.g. 401 for a missing key, 529 overloaded). */
export interface ErrorReply {
  status: number;
  type: string;
  message: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Json | undefined;
  at: number;
}

/** A request as the responder sees it: the messages and the text of the last user message. */
export interface ModelRequest {
  body: Json;
  messages: { role: string; content: unknown }[];
  /** The last text block of the last user message that has one (what the user typed). */
  lastUserText: string;
  /** tool_result blocks of the last message (the answer to the previous tool_use), in order. */
  toolResults: { toolUseId: string; text: string; isError: boolean }[];
  /** The last message carries text of its own (a new user turn), not only tool results. */
  lastMessageHasText: boolean;
}

export interface FakeAnthropicOptions {
  respond?: (request: ModelRequest) => Reply | ErrorReply | Promise<Reply | ErrorReply>;
  lifetimeMs?: number;
  maxRequests?: number;
}

const MODEL = "claude-fake-1";

/** The default script: "ECHO: <last user text>", and "TOOL <cmd>" runs Bash with <cmd>. */
export function echoModel(request: ModelRequest): Reply {
  // A tool result without new user text continues the tool call; with text, the text is answered.
  if (request.toolResults.length > 0 && !request.lastMessageHasText) {
    const first = request.toolResults[0];
    return { blocks: [{ type: "text", text: `TOOL DONE: ${first?.text.trim().slice(0, 80) ?? ""}` }] };
  }
  const tool = /^TOOL (.+)$/m.exec(request.lastUserText);
  if (tool?.[1]) {
    return {
      blocks: [
        { type: "text", text: "Running it." },
        { type: "tool_use", name: "Bash", input: { command: tool[1], description: "Run the command" } },
      ],
    };
  }
  return { blocks: [{ type: "text", text: `ECHO: ${request.lastUserText.trim()}` }] };
}

export class FakeAnthropic {
  readonly requests: RecordedRequest[] = [];
  private readonly server = createServer((req, res) => void this.handle(req, res));
  private readonly opts: FakeAnthropicOptions;
  private lifetime: NodeJS.Timeout | undefined;
  private nextId = 0;
  port = 0;

  constructor(opts: FakeAnthropicOptions = {}) {
    this.opts = opts;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Model requests only (POST /v1/messages), in arrival order. */
  get messageRequests(): ModelRequest[] {
    return this.requests
      .filter((r) => r.method === "POST" && r.path === "/v1/messages" && r.body)
      .map((r) => toModelRequest(r.body as Json));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.lifetime = setTimeout(() => void this.close(), this.opts.lifetimeMs ?? 120_000);
    this.lifetime.unref();
    return this;
  }

  async close(): Promise<void> {
    clearTimeout(this.lifetime);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const raw = await readBody(req);
    let body: Json | undefined;
    try {
      body = raw ? (JSON.parse(raw) as Json) : undefined;
    } catch {
      body = undefined;
    }
    this.requests.push({
      method: req.method ?? "",
      path: url.pathname,
      headers: req.headers,
      body,
      at: Date.now(),
    });
    if (this.requests.length > (this.opts.maxRequests ?? 500)) {
      return sendError(res, { status: 429, type: "rate_limit_error", message: "fake: request budget spent" });
    }
    if (req.method === "HEAD" || (req.method === "GET" && url.pathname === "/")) {
      res.writeHead(200).end();
      return;
    }
    if (req.method === "POST" && url.pathname === "/v1/messages/count_tokens") {
      return sendJson(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
    }
    if (req.method !== "POST" || url.pathname !== "/v1/messages" || !body) {
      return sendError(res, {
        status: 404,
        type: "not_found_error",
        message: `fake: no ${req.method} ${url.pathname}`,
      });
    }
    const request = toModelRequest(body);
    const reply = await (this.opts.respond ?? echoModel)(request);
    if ("status" in reply) return sendError(res, reply);
    const id = `msg_fake_${++this.nextId}`;
    const stopReason =
      reply.stopReason ?? (reply.blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
    if (body.stream === true) return streamReply(res, id, reply, stopReason);
    sendJson(res, 200, {
      id,
      type: "message",
      role: "assistant",
      model: MODEL,
      content: reply.blocks.map((b, i) => (b.type === "text" ? b : { ...b, id: toolUseId(id, i) })),
      stop_reason: stopReason,
      stop_sequence: null,
      usage: usage(request),
    });
  }
}

function toModelRequest(body: Json): ModelRequest {
  const messages = Array.isArray(body.messages) ? (body.messages as ModelRequest["messages"]) : [];
  const last = messages.at(-1);
  const blocks = (m: { content: unknown } | undefined): Json[] =>
    typeof m?.content === "string"
      ? [{ type: "text", text: m.content }]
      : Array.isArray(m?.content)
        ? (m.content as Json[])
        : [];
  const toolResults = blocks(last)
    .filter((b) => b.type === "tool_result")
    .map((b) => ({
      toolUseId: String(b.tool_use_id),
      text:
        typeof b.content === "string"
          ? b.content
          : blocks({ content: b.content })
              .map((c) => String(c.text ?? ""))
              .join(""),
      isError: b.is_error === true,
    }));
  const lastUser = [...messages]
    .reverse()
    .find((m) => m.role === "user" && blocks(m).some((b) => b.type === "text"));
  // The last text block: Claude Code puts reminders and command caveats in blocks before it.
  const lastUserText = String(
    blocks(lastUser)
      .filter((b) => b.type === "text")
      .at(-1)?.text ?? "",
  );
  const lastMessageHasText = last?.role === "user" && blocks(last).some((b) => b.type === "text");
  return { body, messages, lastUserText, toolResults, lastMessageHasText };
}

function usage(request: ModelRequest): Json {
  return {
    input_tokens: Math.ceil(JSON.stringify(request.messages).length / 4),
    output_tokens: 10,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

function toolUseId(messageId: string, index: number): string {
  return `toolu_${messageId.slice(4)}_${index}`;
}

async function streamReply(res: ServerResponse, id: string, reply: Reply, stopReason: string): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const send = async (event: string, data: Json): Promise<void> => {
    if (res.destroyed) return;
    res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
  };
  await send("message_start", {
    message: {
      id,
      type: "message",
      role: "assistant",
      model: MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 10,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    },
  });
  for (const [index, block] of reply.blocks.entries()) {
    if (block.type === "text") {
      await send("content_block_start", { index, content_block: { type: "text", text: "" } });
      // Two deltas, so the client must join a streamed block.
      const cut = Math.ceil(block.text.length / 2);
      for (const part of [block.text.slice(0, cut), block.text.slice(cut)]) {
        if (part) await send("content_block_delta", { index, delta: { type: "text_delta", text: part } });
      }
    } else {
      await send("content_block_start", {
        index,
        content_block: { type: "tool_use", id: toolUseId(id, index), name: block.name, input: {} },
      });
      const json = JSON.stringify(block.input);
      const cut = Math.ceil(json.length / 2);
      for (const part of [json.slice(0, cut), json.slice(cut)]) {
        await send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part } });
      }
    }
    await send("content_block_stop", { index });
  }
  await send("message_delta", {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 10 },
  });
  await send("message_stop", {});
  res.end();
}

function sendJson(res: ServerResponse, status: number, body: Json): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function sendError(res: ServerResponse, e: ErrorReply): void {
  sendJson(res, e.status, { type: "error", error: { type: e.type, message: e.message } });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      // Bounded: a runaway client cannot fill memory (Claude Code's requests are ~100 KB).
      if (size <= 16 * 1024 * 1024) chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
