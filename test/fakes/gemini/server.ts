/**
 * A loopback fake of the Gemini API (generativelanguage, v1beta), at the wire, for driving the real
 * Gemini CLI in ACP mode in tests: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
 * (server-sent `data:` lines, each a GenerateContentResponse; the last carries finishReason),
 * `:generateContent` (one JSON response) and `:countTokens`. What it answers is a pure function of
 * the request (`respond`), so a test scripts the model; a function call part is answered by the
 * agent with a functionResponse part in the next request. Every request is recorded with its
 * parsed body. Bounded: it stops itself after `lifetimeMs` and refuses requests past `maxRequests`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export type Json = Record<string, unknown>;

export type GeminiPart = { text: string } | { functionCall: { name: string; args: Json } };

export interface GeminiReply {
  parts: GeminiPart[];
  /** Default "STOP". */
  finishReason?: string;
}

export interface GeminiErrorReply {
  status: number;
  message: string;
}

export interface RecordedGeminiRequest {
  method: string;
  path: string;
  body: Json | undefined;
}

export interface GeminiModelRequest {
  /** "streamGenerateContent", "generateContent" or "countTokens". */
  action: string;
  model: string;
  body: Json;
  contents: { role: string; parts: Json[] }[];
  /** What the user typed: the last text part of the last user content that has text, else "". */
  lastUserText: string;
  /** functionResponse parts of the last content, in order. */
  functionResponses: { name: string; response: unknown }[];
  /** Whether the request asked for JSON output (the CLI's internal classifier calls do). */
  wantsJson: boolean;
}

export interface FakeGeminiOptions {
  respond?: (request: GeminiModelRequest) => GeminiReply | GeminiErrorReply;
  lifetimeMs?: number;
  maxRequests?: number;
}

/**
 * The default script: "ECHO: <last user text>"; "TOOL <cmd>" calls the CLI's shell tool with <cmd>
 * and answers its result with "TOOL DONE: …"; a JSON request (the CLI's own model router) gets {}.
 */
export function echoGemini(request: GeminiModelRequest): GeminiReply {
  if (request.wantsJson) return { parts: [{ text: "{}" }] };
  const tool = /^TOOL (.+)$/.exec(request.lastUserText.trim());
  if (tool?.[1] && request.functionResponses.length === 0) {
    return {
      parts: [
        { text: "Running it." },
        {
          functionCall: {
            name: "run_shell_command",
            args: { command: tool[1], description: "Run the command" },
          },
        },
      ],
    };
  }
  if (request.functionResponses.length > 0) {
    return {
      parts: [{ text: `TOOL DONE: ${JSON.stringify(request.functionResponses[0]?.response).slice(0, 80)}` }],
    };
  }
  return { parts: [{ text: `ECHO: ${request.lastUserText.trim()}` }] };
}

export class FakeGemini {
  readonly requests: RecordedGeminiRequest[] = [];
  private readonly server = createServer((req, res) => void this.handle(req, res));
  private readonly opts: FakeGeminiOptions;
  private lifetime: NodeJS.Timeout | undefined;
  port = 0;

  constructor(opts: FakeGeminiOptions = {}) {
    this.opts = opts;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Content generation requests (not countTokens), in arrival order. */
  get modelRequests(): GeminiModelRequest[] {
    return this.requests.flatMap((r) => {
      const parsed = parsePath(r.path);
      if (!parsed || !r.body || parsed.action === "countTokens") return [];
      return [toModelRequest(parsed.action, parsed.model, r.body)];
    });
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
    this.requests.push({ method: req.method ?? "", path: url.pathname, body });
    if (this.requests.length > (this.opts.maxRequests ?? 500)) {
      return sendError(res, { status: 429, message: "fake: request budget spent" });
    }
    const parsed = parsePath(url.pathname);
    if (req.method !== "POST" || !parsed || !body) {
      return sendError(res, { status: 404, message: `fake: no ${req.method} ${url.pathname}` });
    }
    if (parsed.action === "countTokens") {
      return sendJson(res, 200, { totalTokens: Math.ceil(raw.length / 4) });
    }
    const request = toModelRequest(parsed.action, parsed.model, body);
    const reply = (this.opts.respond ?? echoGemini)(request);
    if ("status" in reply) return sendError(res, reply);
    const usageMetadata = {
      promptTokenCount: Math.ceil(raw.length / 4),
      candidatesTokenCount: 10,
      totalTokenCount: Math.ceil(raw.length / 4) + 10,
    };
    const chunk = (parts: GeminiPart[], finishReason?: string): Json => ({
      candidates: [{ content: { role: "model", parts }, index: 0, ...(finishReason && { finishReason }) }],
      usageMetadata,
      modelVersion: parsed.model,
    });
    const finishReason = reply.finishReason ?? "STOP";
    if (parsed.action === "generateContent") return sendJson(res, 200, chunk(reply.parts, finishReason));
    res.writeHead(200, { "content-type": "text/event-stream" });
    // Each text is sent in two halves so the client must join a streamed answer.
    const pieces: GeminiPart[] = reply.parts.flatMap((p) => {
      if (!("text" in p) || p.text.length < 2) return [p];
      const cut = Math.ceil(p.text.length / 2);
      return [{ text: p.text.slice(0, cut) }, { text: p.text.slice(cut) }];
    });
    for (const [i, part] of pieces.entries()) {
      const last = i === pieces.length - 1;
      res.write(`data: ${JSON.stringify(chunk([part], last ? finishReason : undefined))}\r\n\r\n`);
    }
    res.end();
  }
}

function parsePath(path: string): { model: string; action: string } | undefined {
  const m =
    /^\/v1(?:beta|alpha)?\/models\/([^:/]+):(streamGenerateContent|generateContent|countTokens)$/.exec(path);
  return m ? { model: m[1] as string, action: m[2] as string } : undefined;
}

function toModelRequest(action: string, model: string, body: Json): GeminiModelRequest {
  const contents = Array.isArray(body.contents) ? (body.contents as GeminiModelRequest["contents"]) : [];
  // The last text part, without the session context the CLI prepends to a session's first prompt.
  const textOf = (c: { parts: Json[] } | undefined): string =>
    String((c?.parts ?? []).filter((p) => typeof p.text === "string").at(-1)?.text ?? "").replace(
      /^<session_context>[\s\S]*?<\/session_context>\s*/,
      "",
    );
  const lastUser = [...contents].reverse().find((c) => c.role === "user" && textOf(c) !== "");
  const last = contents.at(-1);
  const functionResponses = (last?.parts ?? [])
    .filter((p) => typeof p.functionResponse === "object" && p.functionResponse !== null)
    .map((p) => {
      const fr = p.functionResponse as Json;
      return { name: String(fr.name), response: fr.response };
    });
  const config = (body.generationConfig ?? {}) as Json;
  const wantsJson =
    config.responseMimeType === "application/json" ||
    config.responseJsonSchema !== undefined ||
    config.responseSchema !== undefined;
  return { action, model, body, contents, lastUserText: textOf(lastUser), functionResponses, wantsJson };
}

function sendJson(res: ServerResponse, status: number, body: Json): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function sendError(res: ServerResponse, e: GeminiErrorReply): void {
  sendJson(res, e.status, { error: { code: e.status, message: e.message, status: "UNAVAILABLE" } });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= 16 * 1024 * 1024) chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
