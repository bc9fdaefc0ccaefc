/**
 * A loopback fake of Microsoft Teams at the wire, HTTPS with the run's own CA (ca.ts), in two halves
 * the real botbuilder SDK is pointed at:
 *
 * - identity: the Bot Framework OpenID metadata and a JWKS whose keys carry endorsements (one for
 *   `msteams`, one for Web Chat and Direct Line), and a Microsoft-identity-platform token endpoint
 *   (`/<tenant>/oauth2/v2.0/token`, client credentials) that issues the bearer tokens the bot's
 *   Connector calls must carry. Every token request is recorded with whether its secret was right.
 * - the Bot Connector under `/amer/` (the serviceUrl): send, reply, update and delete activities,
 *   typing, member lookup, and attachment views; every call must carry a token this fake issued.
 *   Errors are injected per route (403/404/412/429/502/...), with Retry-After when asked.
 *
 * It records what a Teams user would see: per conversation, the bot's messages in order in their
 * current state (text, cards, images) after every edit. It also serves files users "send"
 * (`/files/<id>`, as SharePoint would: no credential needed) and counts who asked with a token.
 * A decoy server (another port, not a Connector host) records anything sent where it should not be.
 * Loopback only, bounded (calls and recorded bodies capped) and self-stopping (`lifetimeMs`).
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { FileBody, ServedRecord } from "../file-body.js";
import { serveFileBody } from "../file-body.js";
import { trustTestCa } from "./ca.js";
import type { FakeKeys } from "./keys.js";
import { fakeKeys } from "./keys.js";

export type Json = Record<string, unknown>;

export interface FakeTeamsUser {
  /** The Teams account id (`29:…`): `from.id` on activities. */
  accountId: string;
  aadObjectId: string;
  upn: string;
  email: string;
  name: string;
}

export interface RecordedCall {
  method: string;
  path: string;
  status: number;
  /** "issued": a token this fake issued; "none": no Authorization; "other": anything else. */
  auth: "issued" | "none" | "other";
  body: unknown;
}

/** One message of the bot's as a user sees it now. */
export interface ShownMessage {
  id: string;
  conversationId: string;
  text: string;
  /** Adaptive Cards and images, as last sent. */
  attachments: Json[];
  /** How many times it was edited after it was posted. */
  edits: number;
  /** Every text it had, in order (the posted one first). */
  history: string[];
  replyToId?: string;
}

export interface TokenRequest {
  path: string;
  clientId: string;
  secretOk: boolean;
  scope: string;
}

export interface FileRequest {
  path: string;
  authorization: string | undefined;
  rec: ServedRecord;
}

interface Injected {
  match: (method: string, path: string, body: string) => boolean;
  status: number;
  retryAfter?: string;
}

export interface FakeTeamsOptions {
  lifetimeMs?: number;
  maxCalls?: number;
  /** Text over this many UTF-8 bytes is refused (Teams documents about 28 KB per message). */
  maxTextBytes?: number;
  /** Token lifetime in seconds. */
  tokenTtlSeconds?: number;
}

/** Recorded bodies are kept up to this many characters (the rest is dropped, the length noted). */
const MAX_RECORDED_BODY = 64 * 1024;
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export class FakeTeams {
  /** A fresh app per fake: the SDK caches tokens process-wide by app id. */
  readonly appId = randomUUID();
  readonly password = `pw-${randomBytes(12).toString("hex")}`;
  readonly tenantId = randomUUID();
  readonly keys: FakeKeys = fakeKeys();
  readonly users = new Map<string, FakeTeamsUser>();
  readonly calls: RecordedCall[] = [];
  readonly tokenRequests: TokenRequest[] = [];
  readonly fileRequests: FileRequest[] = [];
  readonly decoyRequests: { method: string; path: string; authorization: string | undefined }[] = [];
  /** Conversation id -> the bot's messages in order. */
  readonly conversations = new Map<string, ShownMessage[]>();
  readonly typing = new Map<string, number>();
  metadataFetches = 0;
  jwksFetches = 0;
  /** Keys published in the JWKS (the rogue key never is). */
  published = [this.keys.teams.jwk, this.keys.webchat.jwk];
  private readonly issued = new Map<string, number>();
  private readonly files = new Map<string, FileBody & { redirectTo?: string }>();
  private readonly injected: Injected[] = [];
  private readonly o: Required<FakeTeamsOptions>;
  private readonly server;
  private decoy: ReturnType<typeof createServer> | undefined;
  private decoyPort = 0;
  private port = 0;
  private seq = 0;
  private lifetime: NodeJS.Timeout | undefined;

  constructor(options: FakeTeamsOptions = {}) {
    this.o = { lifetimeMs: 60_000, maxCalls: 4_000, maxTextBytes: 28_000, tokenTtlSeconds: 3600, ...options };
    const ca = trustTestCa();
    this.server = createServer({ key: ca.key, cert: ca.cert }, (req, res) => void this.onRequest(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.lifetime = setTimeout(() => void this.close(), this.o.lifetimeMs);
    this.lifetime.unref();
    return this;
  }

  get origin(): string {
    return `https://127.0.0.1:${this.port}`;
  }
  /** The host:port parley must list in teams.connectorHosts. */
  get connectorHost(): string {
    return `127.0.0.1:${this.port}`;
  }
  get serviceUrl(): string {
    return `${this.origin}/amer/`;
  }
  get openIdMetadataUrl(): string {
    return `${this.origin}/botframework/v1/.well-known/openidconfiguration`;
  }
  /** The login origin (teams.loginUrl); the tenant path is parley's to add. */
  get loginUrl(): string {
    return this.origin;
  }
  readonly tokenIssuer = "https://api.botframework.com";

  addUser(name: string, o: Partial<FakeTeamsUser> = {}): FakeTeamsUser {
    const aad = o.aadObjectId ?? randomUUID();
    const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, ".");
    const user: FakeTeamsUser = {
      accountId: o.accountId ?? `29:${randomBytes(16).toString("base64url")}`,
      aadObjectId: aad,
      upn: o.upn ?? `${slug}@contoso.example`,
      email: o.email ?? o.upn ?? `${slug}@contoso.example`,
      name,
    };
    this.users.set(user.accountId, user);
    return user;
  }

  /** The personal conversation the bot has with a user. */
  personalConversation(user: FakeTeamsUser): string {
    return `a:personal-${user.aadObjectId}`;
  }

  /** The bot's messages in a conversation, in order, as shown now. */
  shown(conversationId: string): ShownMessage[] {
    return this.conversations.get(conversationId) ?? [];
  }

  /** Every bot message across conversations. */
  allShown(): ShownMessage[] {
    return [...this.conversations.values()].flat();
  }

  callsTo(method: string, pattern: RegExp): RecordedCall[] {
    return this.calls.filter((c) => c.method === method && pattern.test(c.path));
  }

  /** Fail the next call matching `path` (and `method`, `body`, when given) with `status`. */
  failNext(o: {
    method?: string;
    path: RegExp;
    body?: RegExp;
    status: number;
    retryAfter?: string;
    times?: number;
  }): void {
    for (let i = 0; i < (o.times ?? 1); i += 1)
      this.injected.push({
        match: (method, path, body) =>
          (o.method === undefined || o.method === method) &&
          o.path.test(path) &&
          (o.body?.test(body) ?? true),
        status: o.status,
        ...(o.retryAfter !== undefined ? { retryAfter: o.retryAfter } : {}),
      });
  }

  /** Host a file; `url` is where Teams would say it is (a download URL, or a Connector attachment view). */
  hostFile(body: FileBody & { redirectTo?: string }, kind: "download" | "inline" = "download"): string {
    const id = `f${++this.seq}`;
    this.files.set(id, body);
    return kind === "download"
      ? `${this.origin}/files/${id}`
      : `${this.serviceUrl}v3/attachments/${id}/views/original`;
  }

  /** A second server (not a Connector host) that records whatever reaches it. */
  async decoyOrigin(): Promise<string> {
    if (!this.decoy) {
      const ca = trustTestCa();
      this.decoy = createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
        this.decoyRequests.push({
          method: req.method ?? "",
          path: req.url ?? "",
          authorization: req.headers.authorization,
        });
        req.resume();
        res.writeHead(200, { "content-type": "application/json" }).end('{"id":"decoy"}');
      });
      await new Promise<void>((resolve) => this.decoy?.listen(0, "127.0.0.1", resolve));
      this.decoyPort = (this.decoy.address() as AddressInfo).port;
    }
    return `https://127.0.0.1:${this.decoyPort}`;
  }

  /** A token as the token endpoint would issue it (tests that call the Connector directly). */
  issueToken(): string {
    const token = `fake-access-${randomBytes(18).toString("base64url")}`;
    this.issued.set(token, Date.now() + this.o.tokenTtlSeconds * 1000);
    return token;
  }

  // ── HTTP ─────────────────────────────────────────────────────────────────────────────────

  private async readBody(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY_BYTES) throw new Error("body too large");
      chunks.push(c as Buffer);
    }
    return Buffer.concat(chunks).toString("utf8");
  }

  private authOf(req: IncomingMessage): RecordedCall["auth"] {
    const header = req.headers.authorization;
    if (!header) return "none";
    const token = /^Bearer (.+)$/.exec(header)?.[1] ?? "";
    const expires = this.issued.get(token);
    return expires !== undefined && expires > Date.now() ? "issued" : "other";
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", this.origin);
    const path = url.pathname.replace(/\/{2,}/g, "/");
    const send = (status: number, data?: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, {
        ...(data === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      });
      res.end(data === undefined ? undefined : JSON.stringify(data));
      return status;
    };
    let raw = "";
    try {
      raw = await this.readBody(req);
    } catch {
      send(413, { error: "too large" });
      return;
    }
    if (path === "/botframework/v1/.well-known/openidconfiguration") {
      this.metadataFetches += 1;
      send(200, {
        issuer: this.tokenIssuer,
        authorization_endpoint: `${this.origin}/botframework/v1/authorize`,
        jwks_uri: `${this.origin}/botframework/v1/keys`,
        id_token_signing_alg_values_supported: ["RS256"],
        token_endpoint_auth_methods_supported: ["private_key_jwt"],
      });
      return;
    }
    if (path === "/botframework/v1/keys") {
      this.jwksFetches += 1;
      send(200, { keys: this.published });
      return;
    }
    const tokenPath = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path);
    if (tokenPath && method === "POST") return this.onToken(path, raw, send);
    if (path.startsWith("/files/")) return this.onFile(req, res, path);
    if (path.startsWith("/amer/")) {
      const call: RecordedCall = { method, path, status: 0, auth: this.authOf(req), body: recordable(raw) };
      this.calls.push(call);
      if (this.calls.length > this.o.maxCalls) {
        call.status = send(503, { error: { code: "FakeBudget", message: "fake call budget spent" } });
        return;
      }
      if (call.auth !== "issued") {
        call.status = send(401, { message: "Authorization has been denied for this request." });
        return;
      }
      const attachment = /^\/amer\/v3\/attachments\/([^/]+)\/views\/original$/.exec(path);
      if (attachment && method === "GET") {
        call.status = 200;
        return this.serveFile(req, res, attachment[1] as string);
      }
      const at = this.injected.findIndex((e) => e.match(method, path, raw));
      if (at >= 0) {
        const e = this.injected.splice(at, 1)[0] as Injected;
        call.status = send(
          e.status,
          { error: { code: "Injected", message: `injected ${e.status}` } },
          e.retryAfter !== undefined ? { "retry-after": e.retryAfter } : {},
        );
        return;
      }
      const [status, data] = this.connector(method, path, raw);
      call.status = send(status, data);
      return;
    }
    send(404, { error: `no route ${method} ${path}` });
  }

  private onToken(path: string, raw: string, send: (s: number, d?: unknown) => number): void {
    const form = new URLSearchParams(raw);
    const clientId = form.get("client_id") ?? "";
    const secretOk = clientId === this.appId && form.get("client_secret") === this.password;
    const scope = form.get("scope") ?? "";
    this.tokenRequests.push({ path, clientId, secretOk, scope });
    if (form.get("grant_type") !== "client_credentials" || !secretOk) {
      send(401, { error: "invalid_client", error_description: "AADSTS7000215: Invalid client secret." });
      return;
    }
    send(200, {
      token_type: "Bearer",
      expires_in: this.o.tokenTtlSeconds,
      ext_expires_in: this.o.tokenTtlSeconds,
      access_token: this.issueToken(),
    });
  }

  private onFile(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    return this.serveFile(req, res, path.slice("/files/".length));
  }

  private async serveFile(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const rec: ServedRecord = { served: 0, closedEarly: false };
    this.fileRequests.push({ path: req.url ?? "", authorization: req.headers.authorization, rec });
    const body = this.files.get(id);
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    if (body.redirectTo) {
      res.writeHead(302, { location: body.redirectTo }).end();
      return;
    }
    await serveFileBody(res, body, rec);
  }

  /** The Connector's REST routes (after auth and injection). */
  private connector(method: string, path: string, raw: string): [number, unknown] {
    const base = /^\/amer\/v3\/conversations\/([^/]+)(\/.*)?$/.exec(path);
    if (!base) return [404, { error: { code: "NotFound", message: `no route ${method} ${path}` } }];
    const conversationId = decodeURIComponent(base[1] as string);
    const rest = base[2] ?? "";
    const member = /^\/members\/([^/]+)$/.exec(rest);
    if (member && method === "GET") {
      const user = this.users.get(decodeURIComponent(member[1] as string));
      if (!user) return [404, { error: { code: "MemberNotFoundInConversation", message: "no such member" } }];
      return [
        200,
        {
          id: user.accountId,
          name: user.name,
          aadObjectId: user.aadObjectId,
          email: user.email,
          userPrincipalName: user.upn,
          tenantId: this.tenantId,
          userRole: "user",
        },
      ];
    }
    const activities = /^\/activities(?:\/([^/]+))?$/.exec(rest);
    if (!activities) return [404, { error: { code: "NotFound", message: `no route ${method} ${path}` } }];
    const target = activities[1] ? decodeURIComponent(activities[1]) : undefined;
    let body: Json = {};
    try {
      body = raw ? (JSON.parse(raw) as Json) : {};
    } catch {
      return [400, { error: { code: "BadSyntax", message: "not JSON" } }];
    }
    const list = this.conversations.get(conversationId) ?? [];
    this.conversations.set(conversationId, list);
    if (method === "DELETE" && target) {
      const i = list.findIndex((m) => m.id === target);
      if (i < 0) return [404, { error: { code: "ActivityNotFoundInConversation", message: "gone" } }];
      list.splice(i, 1);
      return [200, {}];
    }
    if (body.type === "typing") {
      this.typing.set(conversationId, (this.typing.get(conversationId) ?? 0) + 1);
      return [200, { id: "" }];
    }
    const text = typeof body.text === "string" ? body.text : "";
    if (Buffer.byteLength(text) > this.o.maxTextBytes)
      return [413, { error: { code: "MessageSizeTooBig", message: "Message size too big" } }];
    const attachments = Array.isArray(body.attachments) ? (body.attachments as Json[]) : [];
    if (method === "PUT" && target) {
      const shown = list.find((m) => m.id === target);
      if (!shown) return [404, { error: { code: "ActivityNotFoundInConversation", message: "gone" } }];
      shown.text = text;
      shown.attachments = attachments;
      shown.edits += 1;
      shown.history.push(text);
      return [200, { id: shown.id }];
    }
    if (method === "POST") {
      if (!text && attachments.length === 0)
        return [400, { error: { code: "BadArgument", message: "empty" } }];
      const id = `1:${++this.seq}${randomBytes(4).toString("hex")}`;
      list.push({
        id,
        conversationId,
        text,
        attachments,
        edits: 0,
        history: [text],
        ...(target ? { replyToId: target } : {}),
      });
      return [201, { id }];
    }
    return [405, { error: { code: "MethodNotAllowed", message: method } }];
  }

  async close(): Promise<void> {
    clearTimeout(this.lifetime);
    const stop = (s: ReturnType<typeof createServer>) =>
      new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
    await Promise.all([stop(this.server), ...(this.decoy ? [stop(this.decoy)] : [])]);
  }
}

function recordable(raw: string): unknown {
  if (raw === "") return undefined;
  const kept = raw.length > MAX_RECORDED_BODY ? raw.slice(0, MAX_RECORDED_BODY) : raw;
  try {
    return JSON.parse(kept);
  } catch {
    return { truncated: raw.length };
  }
}
