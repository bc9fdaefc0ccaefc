/**
 * A loopback fake of Slack at the wire. The real @slack/web-api and @slack/bolt are pointed at it
 * (slack.apiUrl), so everything parley does to Slack crosses a real HTTP or WebSocket boundary:
 * - the Web API under /api/<method>: form or JSON bodies, bearer tokens checked, the `{ok:false,
 *   error}` envelope, injected failures and 429s with Retry-After (a call that comes back before the
 *   wait is over is recorded as a violation), auth.test's x-oauth-scopes header, the streaming
 *   methods, reactions, assistant status and title, ephemeral messages, the external upload flow
 *   (an upload URL on this origin that must be sent no token), and authenticated downloads of
 *   shared files (served only to the bot token; a file may answer with a redirect instead);
 * - Socket Mode (deliver.ts): apps.connections.open hands out a WebSocket URL here; the socket
 *   says hello, sends event, interactive and slash-command envelopes, demands an ack per
 *   envelope_id, redelivers what is not acked, and can send `disconnect`;
 * - the Events API driver (deliver.ts) signs requests with the signing secret and retries.
 * It records what a user would see: messages per thread in order, mrkdwn rendered, a stream's
 * appends joined, blocks, buttons, tasks, reactions, the thread status, uploaded files. Bounded:
 * it stops itself after `lifetimeMs` and refuses calls past `maxCalls`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { serveFileBody } from "../file-body.js";
import type { Delivery } from "./deliver.js";
import { SlackDelivery } from "./deliver.js";
import { controlSequences, renderMarkdown, renderMrkdwn } from "./render.js";

export type Json = Record<string, unknown>;

export interface RecordedCall {
  method: string;
  args: Json;
  /** The Authorization header's token ("" when none). */
  token: string;
  status: number;
  error?: string;
  at: number;
}

export interface FakeTask {
  id: string;
  title: string;
  status: string;
}

export interface FakeMessage {
  ts: string;
  channel: string;
  /** The thread root it is a reply in (undefined: a top-level message). */
  threadTs?: string;
  user: string;
  bot: boolean;
  /** "mrkdwn" for posted text, "markdown" for a stream. */
  format: "mrkdwn" | "markdown";
  text: string;
  /** Every markdown_text a stream received, in order (start, appends, stop). */
  appends: string[];
  blocks: Json[];
  tasks: Map<string, FakeTask>;
  streaming: boolean;
  edits: number;
  reactions: Set<string>;
  files: { id: string; title: string; name: string; bytes: number }[];
  /** Only this user sees it (chat.postEphemeral). */
  ephemeralFor?: string;
}

export interface FakeFileSpec {
  name: string;
  mimetype?: string;
  bytes?: Uint8Array;
  /** Answered with 302 to this location (which must never be followed). */
  redirectTo?: string;
  /** The URL in the descriptor, when it should point somewhere other than this fake. */
  url?: string;
}

export interface FileRequest {
  path: string;
  authorization: string | undefined;
}

interface Injected {
  method: string;
  error?: string;
  status?: number;
  retryAfterSec?: number;
}

export interface FakeSlackOptions {
  botToken?: string;
  appToken?: string;
  signingSecret?: string;
  teamId?: string;
  scopes?: readonly string[];
  lifetimeMs?: number;
  maxCalls?: number;
}

/**
 * parley's own per-message cap (Slack advises under 4,000 characters, chat.postMessage "Truncating
 * content") and Slack's documented 12,000-character limit on one markdown_text (chat.startStream,
 * chat.appendStream). Slack documents no refusal for either, so the fake refuses neither: going
 * over is recorded in `violations`, a test-side check that is no part of the wire.
 */
export const MAX_TEXT = 3900;
export const MAX_APPEND = 12_000;
const SECTION_MAX = 3000;

const ALL_SCOPES = [
  "app_mentions:read",
  "assistant:write",
  "channels:history",
  "chat:write",
  "commands",
  "files:read",
  "files:write",
  "groups:history",
  "im:history",
  "reactions:write",
];

export class FakeSlack {
  readonly botToken: string;
  readonly appToken: string;
  readonly signingSecret: string;
  readonly teamId: string;
  readonly botUserId = "UBOT000001";
  readonly botId = "BBOT000001";
  scopes: string[];
  readonly calls: RecordedCall[] = [];
  readonly messages: FakeMessage[] = [];
  /** Thread root ts -> the assistant status line shown under it ("" = none). */
  readonly status = new Map<string, string>();
  readonly titles = new Map<string, string>();
  readonly violations: string[] = [];
  readonly fileRequests: FileRequest[] = [];
  readonly uploads: { id: string; authorization: string | undefined; bytes: number }[] = [];
  readonly delivery: SlackDelivery;
  private readonly files = new Map<string, FakeFileSpec>();
  private readonly pendingUploads = new Map<string, { name: string; bytes?: Uint8Array }>();
  private readonly injected: Injected[] = [];
  private readonly cooldown = new Map<string, number>();
  private clock = 1_700_000_000;
  private seq = 0;
  private readonly server = createServer((req, res) => void this.onRequest(req, res));
  private port = 0;
  private lifetime: NodeJS.Timeout | undefined;
  private readonly o: Required<Omit<FakeSlackOptions, "scopes">>;

  constructor(options: FakeSlackOptions = {}) {
    this.o = {
      botToken: "xoxb-fake-bot-token",
      appToken: "xapp-fake-app-token",
      signingSecret: "fake-signing-secret",
      teamId: "TFAKE00001",
      lifetimeMs: 60_000,
      maxCalls: 3_000,
      ...options,
    };
    this.botToken = this.o.botToken;
    this.appToken = this.o.appToken;
    this.signingSecret = this.o.signingSecret;
    this.teamId = this.o.teamId;
    this.scopes = [...(options.scopes ?? ALL_SCOPES)];
    this.delivery = new SlackDelivery(this, this.server);
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.lifetime = setTimeout(() => void this.close(), this.o.lifetimeMs);
    this.lifetime.unref();
    return this;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get apiUrl(): string {
    return `${this.origin}/api`;
  }

  /** A fresh message timestamp, as Slack mints them (seconds.micro, increasing). */
  nextTs(): string {
    this.seq += 1;
    return `${this.clock}.${String(this.seq).padStart(6, "0")}`;
  }

  // ── what a user sees ─────────────────────────────────────────────────────────────────────

  /** Messages of a conversation (a thread when `threadTs` is given: its root and replies), in order. */
  thread(channel: string, threadTs?: string, viewer?: string): FakeMessage[] {
    return this.messages.filter(
      (m) =>
        m.channel === channel &&
        (threadTs === undefined || m.threadTs === threadTs || m.ts === threadTs) &&
        (m.ephemeralFor === undefined || m.ephemeralFor === viewer),
    );
  }

  /** Messages the bot posted (ephemeral ones included), in order. */
  botMessages(channel?: string): FakeMessage[] {
    return this.messages.filter((m) => m.bot && (channel === undefined || m.channel === channel));
  }

  /** A message as rendered: its text (or its blocks' text) with markup shown the way Slack shows it. */
  visible(m: FakeMessage): string {
    const body =
      m.format === "markdown" ? renderMarkdown(m.text) : m.blocks.length ? "" : renderMrkdwn(m.text);
    const blockText = m.blocks.flatMap(blockTexts).map(renderMrkdwn);
    return [body, ...blockText].filter((s) => s !== "").join("\n");
  }

  /** Every text a user reads of a message, apart: its body, each button label, each task title. */
  visibleParts(m: FakeMessage): string[] {
    return [
      this.visible(m),
      ...buttonsOf(m).map((b) => b.label),
      ...[...m.tasks.values()].map((t) => `${t.status === "complete" ? "✓" : "…"} ${t.title}`),
      ...m.files.map((f) => `${f.name} ${f.title}`),
    ].filter((s) => s !== "");
  }

  /** Slack control sequences in everything the bot sent: pings and hidden-target links. */
  controlSequences(): string[] {
    return this.botMessages().flatMap((m) => [
      ...controlSequences(m.text),
      ...m.blocks.flatMap(blockTexts).flatMap(controlSequences),
    ]);
  }

  callsTo(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** The next call to `method` fails: a Slack error, an HTTP status, or a 429 with Retry-After. */
  failNext(method: string, failure: { error?: string; status?: number; retryAfterSec?: number }): void {
    this.injected.push({ method, ...failure });
  }

  // ── users ────────────────────────────────────────────────────────────────────────────────

  /** A file a user shares: its descriptor (Slack's field names) for a message event. */
  shareFile(spec: FakeFileSpec): Json {
    const id = `F${String(this.files.size + 1).padStart(9, "0")}`;
    this.files.set(id, spec);
    const url = spec.url ?? `${this.origin}/files-pri/${this.teamId}-${id}/${encodeURIComponent(spec.name)}`;
    return {
      id,
      name: spec.name,
      title: spec.name,
      mimetype: spec.mimetype ?? "application/octet-stream",
      size: spec.bytes?.length ?? 0,
      url_private: url,
      url_private_download: url,
    };
  }

  /**
   * A user posts `text` in `channel` (a DM when it starts with D), top-level or in `threadTs`.
   * Slack sends the message event, and an app_mention too when it mentions the bot in a channel.
   */
  userMessage(o: {
    channel: string;
    user: string;
    text: string;
    threadTs?: string;
    ts?: string;
    team?: string;
    files?: Json[];
    bot?: boolean;
    subtype?: string;
  }): { ts: string; deliveries: Delivery[] } {
    const ts = o.ts ?? this.nextTs();
    this.messages.push({
      ts,
      channel: o.channel,
      ...(o.threadTs ? { threadTs: o.threadTs } : {}),
      user: o.user,
      bot: false,
      format: "mrkdwn",
      text: o.text,
      appends: [],
      blocks: [],
      tasks: new Map(),
      streaming: false,
      edits: 0,
      reactions: new Set(),
      files: [],
    });
    const dm = o.channel.startsWith("D");
    const event: Json = {
      type: "message",
      ...(o.subtype ? { subtype: o.subtype } : {}),
      channel: o.channel,
      channel_type: dm ? "im" : "channel",
      // A bot_message carries bot_id and no team fields (@slack/types BotMessageEvent).
      ...(o.bot
        ? { bot_id: "BOTHER0001", subtype: "bot_message" }
        : { user: o.user, team: o.team ?? this.teamId, user_team: o.team ?? this.teamId }),
      text: o.text,
      ts,
      ...(o.threadTs ? { thread_ts: o.threadTs } : {}),
      ...(o.files ? { files: o.files } : {}),
    };
    const deliveries = [this.delivery.event(event)];
    if (!dm && o.text.includes(`<@${this.botUserId}>`))
      deliveries.push(this.delivery.event({ ...event, type: "app_mention", channel_type: undefined }));
    return { ts, deliveries };
  }

  /** A user presses the button `actionId` on the bot's message `ts`. */
  press(o: { ts: string; actionId: string; user: string; team?: string }): Delivery {
    const m = this.messages.find((x) => x.ts === o.ts);
    if (!m) throw new Error(`no message ${o.ts}`);
    const button = buttonsOf(m).find((b) => b.actionId === o.actionId);
    const label = button?.label ?? "";
    return this.delivery.interactive({
      type: "block_actions",
      user: { id: o.user, team_id: o.team ?? this.teamId },
      team: { id: o.team ?? this.teamId },
      channel: { id: m.channel },
      container: { type: "message", message_ts: m.ts },
      message: { ts: m.ts, ...(m.threadTs ? { thread_ts: m.threadTs } : {}), text: m.text, blocks: m.blocks },
      actions: [
        {
          action_id: o.actionId,
          // The id of the block holding the button, as the app sent it (Slack generates one if none).
          block_id: button?.blockId ?? "",
          type: "button",
          text: { type: "plain_text", text: label },
          action_ts: this.nextTs(),
        },
      ],
    });
  }

  /** A user runs the slash command (Slack sends it from the conversation, never from a thread). */
  slash(o: { channel: string; user: string; text: string; command?: string; team?: string }): Delivery {
    return this.delivery.command({
      command: o.command ?? "/parley",
      text: o.text,
      user_id: o.user,
      team_id: o.team ?? this.teamId,
      channel_id: o.channel,
      channel_name: o.channel.startsWith("D") ? "directmessage" : "general",
      trigger_id: `trigger-${this.nextTs()}`,
    });
  }

  // ── HTTP ─────────────────────────────────────────────────────────────────────────────────

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    if (req.method === "GET" && url.pathname.startsWith("/files-pri/"))
      return this.serveFile(req, res, url.pathname);
    const raw = await readBody(req);
    if (url.pathname.startsWith("/upload/")) {
      const id = url.pathname.slice("/upload/".length);
      this.uploads.push({ id, authorization: req.headers.authorization, bytes: raw.length });
      const pending = this.pendingUploads.get(id);
      if (pending) pending.bytes = new Uint8Array(raw);
      res.writeHead(pending ? 200 : 404).end("OK");
      return;
    }
    if (!url.pathname.startsWith("/api/")) return void res.writeHead(404).end();
    const method = url.pathname.slice("/api/".length);
    const args = parseArgs(raw, req.headers["content-type"] ?? "");
    const token = (req.headers.authorization ?? "").replace(/^Bearer /, "") || String(args.token ?? "");
    const call: RecordedCall = { method, args, token, status: 200, at: Date.now() };
    this.calls.push(call);
    const send = (status: number, body: Json, headers: Record<string, string> = {}) => {
      call.status = status;
      if (body.ok === false) call.error = String(body.error);
      res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
    };
    if (this.calls.length > this.o.maxCalls) return send(503, { ok: false, error: "fake_call_budget_spent" });
    const until = this.cooldown.get(method) ?? 0;
    if (Date.now() < until)
      this.violations.push(`${method} sent ${until - Date.now()} ms before its Retry-After ended`);
    const injected = this.injected.findIndex((i) => i.method === method);
    if (injected >= 0) {
      const failure = this.injected.splice(injected, 1)[0] as Injected;
      if (failure.retryAfterSec !== undefined) {
        this.cooldown.set(method, Date.now() + failure.retryAfterSec * 1000);
        return send(
          429,
          { ok: false, error: "ratelimited" },
          { "retry-after": String(failure.retryAfterSec) },
        );
      }
      if (failure.status) return send(failure.status, { ok: false, error: "http_error" });
      return send(200, { ok: false, error: failure.error ?? "fatal_error" });
    }
    const wanted = method === "apps.connections.open" ? this.appToken : this.botToken;
    if (token !== wanted) return send(200, { ok: false, error: "invalid_auth" });
    const [body, headers] = this.route(method, args);
    send(200, body, headers);
  }

  private route(method: string, a: Json): [Json, Record<string, string>?] {
    const ok = (extra: Json = {}): [Json] => [{ ok: true, ...extra }];
    const fail = (error: string): [Json] => [{ ok: false, error }];
    switch (method) {
      case "auth.test":
        return [
          {
            ok: true,
            url: "https://fake.slack.test/",
            team: "Fake Team",
            user: "parley",
            team_id: this.teamId,
            user_id: this.botUserId,
            bot_id: this.botId,
          },
          { "x-oauth-scopes": this.scopes.join(",") },
        ];
      case "apps.connections.open":
        return ok({ url: this.delivery.socketUrl() });
      case "chat.postMessage":
      case "chat.postEphemeral": {
        const text = String(a.text ?? a.markdown_text ?? "");
        const blocks = jsonArray(a.blocks);
        const problem = this.checkText(text) ?? checkBlocks(blocks);
        if (problem) return fail(problem);
        const m = this.create(
          String(a.channel),
          stringOr(a.thread_ts),
          a.markdown_text ? "markdown" : "mrkdwn",
          text,
        );
        m.blocks = blocks;
        if (method === "chat.postEphemeral") {
          m.ephemeralFor = String(a.user);
          return ok({ message_ts: m.ts });
        }
        this.status.set(m.threadTs ?? m.ts, "");
        return ok({ channel: m.channel, ts: m.ts });
      }
      case "chat.update": {
        const m = this.find(a);
        if (!m) return fail("message_not_found");
        const text = a.text === undefined ? m.text : String(a.text);
        const blocks = a.blocks === undefined ? m.blocks : jsonArray(a.blocks);
        const problem = this.checkText(text) ?? checkBlocks(blocks);
        if (problem) return fail(problem);
        // An edit of a stream (a restarted turn taking over its earlier part) ends the stream; new
        // text is mrkdwn, and an edit of the blocks alone keeps the text as it was.
        const format = a.text === undefined ? m.format : "mrkdwn";
        Object.assign(m, { text, blocks, format, streaming: false, edits: m.edits + 1 });
        return ok({ channel: m.channel, ts: m.ts });
      }
      case "chat.delete": {
        const m = this.find(a);
        if (!m) return fail("message_not_found");
        this.messages.splice(this.messages.indexOf(m), 1);
        return ok({ channel: m.channel, ts: m.ts });
      }
      case "chat.startStream": {
        const channel = String(a.channel);
        if (!a.thread_ts) return fail("invalid_arguments");
        if (!channel.startsWith("D") && !a.recipient_user_id) return fail("missing_recipient_user_id");
        if (!channel.startsWith("D") && !a.recipient_team_id) return fail("missing_recipient_team_id");
        const m = this.create(channel, String(a.thread_ts), "markdown", "");
        m.streaming = true;
        const problem = this.appendChunks(m, a);
        if (problem) return fail(problem);
        this.status.set(String(a.thread_ts), "");
        return ok({ channel, ts: m.ts });
      }
      case "chat.appendStream":
      case "chat.stopStream": {
        const m = this.find(a);
        if (!m) return fail("message_not_found");
        if (!m.streaming) return fail("message_not_in_streaming_state");
        const problem = this.appendChunks(m, a);
        if (problem) return fail(problem);
        if (method === "chat.stopStream") {
          m.streaming = false;
          m.blocks = jsonArray(a.blocks);
        }
        return ok({ channel: m.channel, ts: m.ts });
      }
      case "reactions.add":
      case "reactions.remove": {
        const m = this.messages.find((x) => x.channel === a.channel && x.ts === a.timestamp);
        if (!m) return fail("message_not_found");
        if (method === "reactions.add") m.reactions.add(String(a.name));
        else m.reactions.delete(String(a.name));
        return ok();
      }
      case "assistant.threads.setStatus":
        this.status.set(String(a.thread_ts), String(a.status ?? ""));
        return ok();
      case "assistant.threads.setTitle":
        this.titles.set(String(a.thread_ts), String(a.title ?? ""));
        return ok();
      case "files.getUploadURLExternal": {
        const id = `FUP${String(this.pendingUploads.size + 1).padStart(7, "0")}`;
        this.pendingUploads.set(id, { name: String(a.filename) });
        return ok({ upload_url: `${this.origin}/upload/${id}`, file_id: id });
      }
      case "files.completeUploadExternal": {
        const files = jsonArray(a.files) as { id: string; title?: string }[];
        const m = this.create(String(a.channel_id), stringOr(a.thread_ts), "mrkdwn", "");
        for (const f of files) {
          const up = this.pendingUploads.get(f.id);
          if (!up?.bytes) return fail("file_not_found");
          m.files.push({ id: f.id, title: String(f.title ?? ""), name: up.name, bytes: up.bytes.length });
        }
        return ok({ files: files.map((f) => ({ id: f.id })) });
      }
      default:
        return fail("unknown_method");
    }
  }

  private create(channel: string, threadTs: string | undefined, format: FakeMessage["format"], text: string) {
    const m: FakeMessage = {
      ts: this.nextTs(),
      channel,
      ...(threadTs ? { threadTs } : {}),
      user: this.botUserId,
      bot: true,
      format,
      text,
      appends: text ? [text] : [],
      blocks: [],
      tasks: new Map(),
      streaming: false,
      edits: 0,
      reactions: new Set(),
      files: [],
    };
    this.messages.push(m);
    return m;
  }

  private find(a: Json): FakeMessage | undefined {
    return this.messages.find((m) => m.bot && m.channel === a.channel && m.ts === a.ts);
  }

  /** parley's cap, in code points: a message over it is recorded (Slack itself documents no refusal). */
  private checkText(text: string): string | undefined {
    if (Array.from(text).length > MAX_TEXT)
      this.violations.push(`message over ${MAX_TEXT} code points (${Array.from(text).length})`);
    return undefined;
  }

  private appendChunks(m: FakeMessage, a: Json): string | undefined {
    const chunks = [
      ...(a.markdown_text ? [{ type: "markdown_text", text: String(a.markdown_text) }] : []),
      ...(jsonArray(a.chunks) as Json[]),
    ];
    for (const c of chunks) {
      if (c.type === "markdown_text") {
        const text = String(c.text ?? "");
        // Over the documented 12,000: recorded; what Slack answers then is not documented.
        if (Array.from(text).length > MAX_APPEND)
          this.violations.push(`append over ${MAX_APPEND} code points`);
        m.appends.push(text);
        m.text += text;
        if (Array.from(m.text).length > MAX_TEXT) this.violations.push(`stream over ${MAX_TEXT} code points`);
      } else if (c.type === "task_update") {
        m.tasks.set(String(c.id), {
          id: String(c.id),
          title: String(c.title ?? ""),
          status: String(c.status ?? ""),
        });
      } else return "invalid_chunks";
    }
    return undefined;
  }

  private async serveFile(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    this.fileRequests.push({ path, authorization: req.headers.authorization });
    const id = /^\/files-pri\/[^/]+-(F\d+)\//.exec(path)?.[1] ?? "";
    const spec = this.files.get(id);
    if (req.headers.authorization !== `Bearer ${this.botToken}`) return void res.writeHead(403).end();
    if (!spec) return void res.writeHead(404).end();
    if (spec.redirectTo) return void res.writeHead(302, { location: spec.redirectTo }).end();
    await serveFileBody(
      res,
      { bytes: spec.bytes ?? new Uint8Array(), contentType: spec.mimetype ?? "" },
      {
        served: 0,
        closedEarly: false,
      },
    );
  }

  async close(): Promise<void> {
    clearTimeout(this.lifetime);
    await this.delivery.close();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/** Every button on a message: its label and action_id. */
export function buttonsOf(
  m: Pick<FakeMessage, "blocks">,
): { label: string; actionId: string; blockId: string }[] {
  return m.blocks.flatMap((b, i) =>
    Array.isArray(b.elements)
      ? (b.elements as Json[])
          .filter((e) => e.type === "button")
          .map((e) => ({
            label: String((e.text as Json | undefined)?.text ?? ""),
            actionId: String(e.action_id),
            // Block Kit: "If not specified, block_id will be generated."
            blockId: typeof b.block_id === "string" ? b.block_id : `gen${i}`,
          }))
      : [],
  );
}

/** The mrkdwn texts of a message's blocks (sections and contexts). */
function blockTexts(b: Json): string[] {
  if (b.type === "section") return [String((b.text as Json | undefined)?.text ?? "")];
  if (b.type === "context")
    return (Array.isArray(b.elements) ? (b.elements as Json[]) : []).map((e) => String(e.text ?? ""));
  return [];
}

function checkBlocks(blocks: Json[]): string | undefined {
  for (const b of blocks) {
    if (
      b.type === "section" &&
      Array.from(String((b.text as Json | undefined)?.text ?? "")).length > SECTION_MAX
    )
      return "invalid_blocks";
    if (b.type === "actions" && Array.isArray(b.elements) && (b.elements as Json[]).length > 25)
      return "invalid_blocks";
  }
  return undefined;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The WebClient sends form fields, nested values JSON-encoded; JSON bodies are read as they are. */
function parseArgs(raw: Buffer, type: string): Json {
  if (raw.length === 0) return {};
  if (type.startsWith("application/json")) return JSON.parse(raw.toString("utf8")) as Json;
  const out: Json = {};
  for (const [k, v] of new URLSearchParams(raw.toString("utf8"))) out[k] = v;
  return out;
}

function jsonArray(value: unknown): Json[] {
  if (Array.isArray(value)) return value as Json[];
  if (typeof value !== "string" || value === "") return [];
  try {
    const parsed = JSON.parse(value) as unknown;
    return Array.isArray(parsed) ? (parsed as Json[]) : [];
  } catch {
    return [];
  }
}

function stringOr(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
