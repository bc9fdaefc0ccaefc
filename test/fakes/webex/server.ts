/**
 * A loopback fake of Webex at the wire, written from the official SDK's sources (webex/webex-js-sdk)
 * and the REST reference, never from parley's client. The REST API under /v1 (people/me, messages
 * with the 7,439 byte cap and the 10-edit cap, no edit of a message carrying an attachment, rooms,
 * attachment actions, contents with scan states, 429 injection); the U2C catalog as the SDK asks for
 * it (`/catalog?format=hostmap`: service links and the host map naming each host's cluster); WDM
 * device registration; and the Mercury socket (authorization, then `mercury.buffer_state`, then
 * `conversation.activity` frames as the SDK receives them: the activity's own `id` is the message or
 * action uuid, `object` only describes it, `target` is the conversation with a `url` on its
 * cluster's conversation host, a press names its message in `parent`), with ack tracking and
 * redelivery. Hydra ids are built as @webex/common builds them: unpadded base64url of
 * `ciscospark://<cluster>/<KIND>/<uuid>`, the original US cluster spelled `us`, people always `us`.
 * Every request is recorded with the host it came to and whether it carried the token, so a test can
 * prove where the token went. Faults a test may inject: 429s, an organization policy refusing a send
 * or edit (403 in Webex's error shape), WDM registration outages, sockets closed right after
 * authorization, a catalog that forgets a cluster, and raw frames of any shape.
 *
 * What a Webex user would see is kept per message: its markdown after every edit, its edit count and
 * its card. Bounded: calls past `maxCalls` are refused and it stops itself after `lifetimeMs`.
 * Every field it emits is listed with its source in docs/channels/webex.md ("Wire").
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { Server as TlsServer } from "node:https";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { WebSocket } from "ws";
import { WebSocketServer } from "ws";

/** The original US cluster: Hydra spells it `us` (@webex/common constants INTERNAL_US_CLUSTER_NAME). */
export const US_CLUSTER = "urn:TEAM:us-east-2_a";
/** A European cluster, as the host map names it (`urn:TEAM:<region>_<letter>`). */
export const EU_CLUSTER = "urn:TEAM:eu-central-1_k";

/** The Hydra segment of a cluster (@webex/common uuid-utils getHydraClusterString). */
export function hydraSegment(cluster: string): string {
  return cluster.startsWith(US_CLUSTER) ? "us" : cluster.split(":").slice(0, 3).join(":");
}

/** A Hydra id (@webex/common uuid-utils constructHydraId): people and orgs always name `us`. */
export function sparkId(
  cluster: string,
  kind: "MESSAGE" | "ROOM" | "ATTACHMENT_ACTION" | "PEOPLE",
  uuid: string,
) {
  const segment = kind === "PEOPLE" ? "us" : hydraSegment(cluster);
  return Buffer.from(`ciscospark://${segment}/${kind}/${uuid}`).toString("base64url");
}

export const FAKE_MAX_BYTES = 7439;
export const FAKE_MAX_EDITS = 10;

export interface FakeWebexMessage {
  id: string;
  roomId: string;
  roomType: string;
  personId: string;
  personEmail: string;
  markdown: string;
  attachments: unknown[];
  files: string[];
  /** Files the bot uploaded with this message (one per message on Webex). */
  uploads?: FakeUpload[];
  edits: number;
  /** Every version a reader saw, first to last. */
  versions: string[];
  fromBot: boolean;
}

export interface FakeUpload {
  name: string;
  type: string;
  bytes: Uint8Array;
}

export interface RecordedCall {
  method: string;
  path: string;
  host: string;
  authorized: boolean;
  status: number;
  body: unknown;
}

export interface FakeFile {
  name: string;
  type: string;
  bytes: Uint8Array;
  /** 423 while scanning (then clean after `scanningFor` HEADs), 410 infected, 428 unscannable. */
  state: "clean" | "scanning" | "infected" | "unscannable";
  scanningFor?: number;
}

interface Frame {
  id: string;
  data: unknown;
  acked: boolean;
}

export interface FakeWebexOptions {
  maxCalls?: number;
  lifetimeMs?: number;
  maxMessages?: number;
  /** Serve HTTPS/WSS with this key pair (a proxy test needs a name that is not loopback). */
  tls?: { key: string; cert: string };
  /** The host name the fake puts in the URLs it hands out (default 127.0.0.1). */
  hostname?: string;
}

/** What an organization's compliance policy sees of a send or an edit. */
export interface PolicyInput {
  method: "POST" | "PUT";
  markdown: string;
  attachments: unknown[];
}

/** Webex's error body: a message, per-error descriptions and the tracking id support asks for. */
export interface WebexErrorBody {
  message: string;
  errors: { description: string }[];
  trackingId: string;
}

export class FakeWebex {
  readonly token = `fake-webex-token-${randomUUID()}`;
  readonly botUuid = randomUUID();
  readonly botEmail = "parley@webex.bot";
  private readonly server: Server | TlsServer;
  private wss = new WebSocketServer({ noServer: true });
  private sockets = new Set<WebSocket>();
  private authorized = new WeakSet<WebSocket>();
  private origin = "";
  readonly calls: RecordedCall[] = [];
  readonly messages = new Map<string, FakeWebexMessage>();
  readonly rooms = new Map<string, string>();
  readonly actions = new Map<string, Record<string, unknown>>();
  readonly files = new Map<string, FakeFile & { heads: number }>();
  readonly devices = new Set<string>();
  /** Each message's activity uuid (a press names it as its parent), by Hydra message id. */
  private readonly activityOf = new Map<string, string>();
  /** Each room's conversation: its uuid and its cluster. */
  private readonly conversations = new Map<string, { uuid: string; cluster: string }>();
  /** Each person's uuid, by e-mail (stable, as a person's is). */
  private readonly people = new Map<string, string>();
  /** Each cluster's conversation host, as the host map lists it. */
  readonly clusterHosts = new Map<string, string>([
    [US_CLUSTER, "conv-a.wbx2.com"],
    [EU_CLUSTER, "conv-k.wbx2.com"],
  ]);
  /** Clusters the catalog leaves out of its host map from now on (a stale or partial catalog). */
  readonly forgottenClusters = new Set<string>();
  private sequence = 0;
  readonly frames: Frame[] = [];
  private pending: Frame[] = [];
  private throttle: { count: number; retryAfter: string } = { count: 0, retryAfter: "0" };
  /** An organization policy: true refuses the send or edit with a 403 (every refusal is kept). */
  policy: ((m: PolicyInput) => boolean) | null = null;
  readonly policyRefusals: (PolicyInput & WebexErrorBody)[] = [];
  private deviceFailures = 0;
  /** What the U2C catalog names as the WDM service (default: this fake's own /wdm). */
  catalogWdmUrl: string | null = null;
  private closesAfterAuth = 0;
  private lifetime: NodeJS.Timeout | null = null;
  private readonly o: Required<Omit<FakeWebexOptions, "tls">> & Pick<FakeWebexOptions, "tls">;

  constructor(o: FakeWebexOptions = {}) {
    this.o = { maxCalls: 5000, lifetimeMs: 60_000, maxMessages: 2000, hostname: "", ...o };
    const handler = (req: IncomingMessage, res: ServerResponse) => void this.route(req, res);
    this.server = this.o.tls ? createTlsServer(this.o.tls, handler) : createServer(handler);
    this.server.on("upgrade", (req, socket, head) => {
      if (!req.url?.startsWith("/socket/")) return socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    this.origin = `${this.o.tls ? "https" : "http"}://${this.o.hostname || "127.0.0.1"}:${port}`;
    this.lifetime = setTimeout(() => void this.close(), this.o.lifetimeMs);
    this.lifetime.unref();
    return this;
  }

  get apiUrl(): string {
    return `${this.origin}/v1`;
  }
  get u2cUrl(): string {
    return `${this.origin}/u2c`;
  }
  get wdmUrl(): string {
    return `${this.origin}/wdm`;
  }
  get botPersonId(): string {
    return sparkId(US_CLUSTER, "PEOPLE", this.botUuid);
  }

  /** A room (its REST id as the test names it) and its conversation on a cluster (US unless said). */
  addRoom(roomId: string, type: "direct" | "group", cluster = US_CLUSTER): void {
    this.rooms.set(roomId, type);
    this.conversationOf(roomId, cluster);
  }

  /** A room's conversation, made on first use; a cluster given moves it there (a test's choice). */
  private conversationOf(roomId: string, cluster?: string): { uuid: string; cluster: string } {
    const known = this.conversations.get(roomId);
    if (known && (cluster === undefined || known.cluster === cluster)) return known;
    const made = { uuid: known?.uuid ?? randomUUID(), cluster: cluster ?? US_CLUSTER };
    this.conversations.set(roomId, made);
    return made;
  }

  private personUuid(email: string): string {
    const known = this.people.get(email);
    if (known) return known;
    const made = email === this.botEmail ? this.botUuid : randomUUID();
    this.people.set(email, made);
    return made;
  }

  /** The conversation an activity targets (conversation.js prepareConversation: id, url, objectType). */
  private target(roomId: string): Record<string, unknown> {
    const { uuid, cluster } = this.conversationOf(roomId);
    const host = this.clusterHosts.get(cluster) ?? "conv-a.wbx2.com";
    return {
      id: uuid,
      objectType: "conversation",
      url: `https://${host}/conversation/api/v1/conversations/${uuid}`,
      tags: this.rooms.get(roomId) === "group" ? [] : ["ONE_ON_ONE"],
    };
  }

  /** Who did it, as the activity names them (messages.js reads entryUUID and emailAddress). */
  private actor(email: string): Record<string, unknown> {
    const uuid = this.personUuid(email);
    return { id: uuid, objectType: "person", entryUUID: uuid, emailAddress: email };
  }

  /** The next `count` REST calls answer 429 with this Retry-After (seconds). */
  throttleNext(count: number, retryAfterSeconds: number): void {
    this.throttle = { count, retryAfter: String(retryAfterSeconds) };
  }

  /** The next `count` device registrations fail (a WDM outage): the client must back off. */
  failDeviceRegistrations(count: number): void {
    this.deviceFailures = count;
  }

  /** The next `count` sockets are closed right after they authorize (an accept-then-close peer). */
  closeSocketsAfterAuth(count: number): void {
    this.closesAfterAuth = count;
  }

  addFile(file: FakeFile): string {
    const id = randomUUID();
    this.files.set(id, { ...file, heads: 0 });
    return `${this.apiUrl}/contents/${id}`;
  }

  /** A user posts: the message is stored under its cluster's Hydra id and an activity is pushed. */
  userMessage(m: {
    email: string;
    roomId: string;
    roomType?: "direct" | "group";
    text: string;
    /** The room's cluster (an internal cluster id); the room keeps the one it has when absent. */
    cluster?: string;
    files?: string[];
    mentions?: string[];
  }): { frameId: string; messageId: string } {
    const uuid = randomUUID();
    const { cluster } = this.conversationOf(m.roomId, m.cluster);
    const id = sparkId(cluster, "MESSAGE", uuid);
    this.store({
      id,
      roomId: m.roomId,
      roomType: m.roomType ?? this.rooms.get(m.roomId) ?? "direct",
      personId: sparkId(cluster, "PEOPLE", this.personUuid(m.email)),
      personEmail: m.email,
      markdown: m.text,
      attachments: [],
      files: m.files ?? [],
      edits: 0,
      versions: [m.text],
      fromBot: false,
      ...(m.mentions ? { mentionedPeople: m.mentions } : {}),
    });
    this.activityOf.set(id, uuid);
    const share = (m.files?.length ?? 0) > 0;
    const frameId = this.push({
      id: uuid,
      objectType: "activity",
      verb: share ? "share" : "post",
      published: new Date().toISOString(),
      actor: this.actor(m.email),
      // The text is end-to-end encrypted on the wire: the object only describes the message.
      object: share
        ? {
            objectType: "content",
            displayName: CIPHERTEXT,
            files: { items: (m.files ?? []).map(() => ({ objectType: "file", displayName: CIPHERTEXT })) },
          }
        : { objectType: "comment", displayName: CIPHERTEXT },
      target: this.target(m.roomId),
    });
    return { frameId, messageId: id };
  }

  /** A user presses a card's submit: the action is stored and a cardAction activity is pushed. */
  pressCard(p: { email: string; messageId: string; inputs: Record<string, unknown> }): string {
    const uuid = randomUUID();
    const message = this.messages.get(p.messageId);
    const roomId = message?.roomId ?? "";
    const { cluster } = this.conversationOf(roomId);
    const id = sparkId(cluster, "ATTACHMENT_ACTION", uuid);
    this.actions.set(id, {
      id,
      type: "submit",
      messageId: p.messageId,
      personId: sparkId(cluster, "PEOPLE", this.personUuid(p.email)),
      roomId,
      inputs: p.inputs,
    });
    return this.push({
      id: uuid,
      objectType: "activity",
      verb: "cardAction",
      published: new Date().toISOString(),
      actor: this.actor(p.email),
      object: { objectType: "submit", inputs: p.inputs },
      target: this.target(roomId),
      parent: { id: this.activityOf.get(p.messageId) ?? randomUUID(), type: "cardAction" },
    });
  }

  /** A raw frame as a test writes it (a shape Webex may send that parley does not know, a bad id). */
  sendRaw(frame: string | { id?: string; data?: unknown }): void {
    // Kept with the others when it has an id, so `acked()` tells whether it was acked.
    if (typeof frame !== "string" && typeof frame.id === "string")
      this.frames.push({ id: frame.id, data: frame.data, acked: false });
    const text = typeof frame === "string" ? frame : JSON.stringify(frame);
    for (const ws of this.sockets) if (this.authorized.has(ws)) ws.send(text);
  }

  /** Every activity pushed so far, as the socket carried it (for the SDK parsing test). */
  get activities(): Record<string, unknown>[] {
    return this.frames.flatMap((f) => {
      const data = f.data as { eventType?: string; activity?: Record<string, unknown> } | undefined;
      return data?.eventType === "conversation.activity" && data.activity ? [data.activity] : [];
    });
  }

  /** The catalog as the fake serves it (`format=hostmap`). */
  catalog(): Record<string, unknown> {
    return this.hostmap();
  }

  /** Send an earlier frame again (Webex redelivers what it thinks was not acked). */
  redeliver(frameId: string): void {
    const frame = this.frames.find((f) => f.id === frameId);
    if (frame) this.broadcast(frame);
  }

  acked(frameId: string): boolean {
    return this.frames.find((f) => f.id === frameId)?.acked ?? false;
  }

  /** What users see: every message the bot posted, in order. */
  botMessages(roomId?: string): FakeWebexMessage[] {
    return [...this.messages.values()].filter(
      (m) => m.fromBot && (roomId === undefined || m.roomId === roomId),
    );
  }

  callsTo(method: string, pattern: RegExp): RecordedCall[] {
    return this.calls.filter((c) => c.method === method && pattern.test(c.path));
  }

  /** Open device sockets that have authorized: the connections a frame would reach. */
  get liveSockets(): number {
    return [...this.sockets].filter((ws) => this.authorized.has(ws)).length;
  }

  /** Drop the device sockets (a network blip): the client reconnects. */
  dropSockets(): void {
    for (const ws of this.sockets) ws.terminate();
  }

  async close(): Promise<void> {
    if (this.lifetime) clearTimeout(this.lifetime);
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
  }

  // ── internals ────────────────────────────────────────────────────────────────────────────────

  private store(m: FakeWebexMessage & { mentionedPeople?: string[] }): void {
    if (this.messages.size >= this.o.maxMessages) throw new Error("fake webex: message cap reached");
    this.messages.set(m.id, m);
  }

  private push(activity: Record<string, unknown>): string {
    const frame: Frame = {
      id: randomUUID(),
      data: { eventType: "conversation.activity", activity },
      acked: false,
    };
    if (this.frames.length < this.o.maxMessages) this.frames.push(frame);
    this.broadcast(frame);
    return frame.id;
  }

  private broadcast(frame: Frame): void {
    let sent = false;
    for (const ws of this.sockets)
      if (this.authorized.has(ws)) {
        ws.send(this.envelope(frame.id, frame.data));
        sent = true;
      }
    // Nobody connected yet (or between reconnects): held, and sent once a socket authorizes.
    if (!sent && this.pending.length < this.o.maxMessages) this.pending.push(frame);
  }

  /** Mercury's envelope (socket-base onmessage): the ack names `id`; the sequence number counts up. */
  private envelope(id: string, data: unknown): string {
    this.sequence += 1;
    return JSON.stringify({ id, data, sequenceNumber: this.sequence });
  }

  private onSocket(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on("close", () => this.sockets.delete(ws));
    ws.on("message", (raw) => {
      let msg: { type?: string; messageId?: string; data?: { token?: string } };
      try {
        msg = JSON.parse(String(raw));
      } catch {
        return ws.close(4400, "bad frame");
      }
      if (msg.type === "authorization") {
        if (msg.data?.token !== `Bearer ${this.token}`) return ws.close(4401, "unauthorized");
        if (this.closesAfterAuth > 0) {
          this.closesAfterAuth -= 1;
          return ws.close(1000, "bye");
        }
        this.authorized.add(ws);
        // What the SDK waits for after authorizing (socket-base _authorize): the socket is live.
        ws.send(this.envelope(randomUUID(), { eventType: "mercury.buffer_state" }));
        const held = this.pending;
        this.pending = [];
        for (const frame of held) this.broadcast(frame);
        return;
      }
      if (msg.type === "ack") {
        const frame = this.frames.find((f) => f.id === msg.messageId);
        if (frame) frame.acked = true;
      }
    });
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.origin);
    const path = url.pathname;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    const type = req.headers["content-type"] ?? "";
    if (chunks.length && type.startsWith("multipart/form-data")) {
      // An upload: the fields, and each file's name, type and bytes (as a Webex user would get them).
      const form = await new Response(Buffer.concat(chunks), {
        headers: { "content-type": type },
      }).formData();
      const uploads: FakeUpload[] = [];
      for (const value of form.getAll("files"))
        if (typeof value !== "string")
          uploads.push({
            name: value.name,
            type: value.type,
            bytes: new Uint8Array(await value.arrayBuffer()),
          });
      body = { roomId: form.get("roomId"), markdown: form.get("markdown") ?? "", uploads };
    } else if (chunks.length) {
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        body = {};
      }
    }
    const authorized = req.headers.authorization === `Bearer ${this.token}`;
    const call: RecordedCall = {
      method: req.method ?? "GET",
      path,
      host: req.headers.host ?? "",
      authorized,
      status: 0,
      body,
    };
    if (this.calls.length < this.o.maxCalls) this.calls.push(call);
    const send = (status: number, json?: unknown, headers: Record<string, string> = {}) => {
      call.status = status;
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(json === undefined ? "" : JSON.stringify(json));
    };
    if (this.calls.length >= this.o.maxCalls) return send(503, { message: "fake call cap" });
    if (!authorized) return send(401, { message: "unauthorized" });
    if (this.throttle.count > 0) {
      this.throttle.count -= 1;
      return send(429, { message: "slow down" }, { "retry-after": this.throttle.retryAfter });
    }
    const m = path.match(/^\/v1\/messages\/([^/]+)$/);
    if (path === "/v1/people/me" && req.method === "GET")
      return send(200, { id: this.botPersonId, emails: [this.botEmail], displayName: "parley" });
    if (path === "/u2c/catalog") {
      // Only the host map format is served: it is the one the SDK asks for (services _fetchNewServiceHostmap).
      if (url.searchParams.get("format") !== "hostmap")
        return send(400, errorBody("this fake serves the catalog with format=hostmap only"));
      return send(200, this.hostmap());
    }
    if (path === "/wdm/devices" && req.method === "POST") {
      if (this.deviceFailures > 0) {
        this.deviceFailures -= 1;
        return send(503, errorBody("Service Unavailable"));
      }
      const id = randomUUID();
      this.devices.add(id);
      return send(200, {
        url: `${this.origin}/wdm/devices/${id}`,
        webSocketUrl: `${this.origin.replace(/^http/, "ws")}/socket/${id}`,
      });
    }
    const dev = path.match(/^\/wdm\/devices\/([^/]+)$/);
    if (dev && req.method === "DELETE") {
      this.devices.delete(dev[1] ?? "");
      return send(204);
    }
    if (path === "/v1/messages" && req.method === "POST") return this.create(body, send);
    if (m && req.method === "PUT") return this.edit(decodeURIComponent(m[1] ?? ""), body, send);
    if (m && req.method === "GET") {
      const found = this.messages.get(decodeURIComponent(m[1] ?? ""));
      if (!found) return send(404, { message: "not found" });
      return send(200, {
        id: found.id,
        roomId: found.roomId,
        roomType: found.roomType,
        personId: found.personId,
        personEmail: found.personEmail,
        text: found.markdown,
        markdown: found.markdown,
        ...(found.files.length ? { files: found.files } : {}),
        ...((found as { mentionedPeople?: string[] }).mentionedPeople
          ? { mentionedPeople: (found as { mentionedPeople?: string[] }).mentionedPeople }
          : {}),
      });
    }
    const room = path.match(/^\/v1\/rooms\/([^/]+)$/);
    if (room) {
      const type = this.rooms.get(decodeURIComponent(room[1] ?? ""));
      return type ? send(200, { id: room[1], type }) : send(404, { message: "not found" });
    }
    const action = path.match(/^\/v1\/attachment\/actions\/([^/]+)$/);
    if (action) {
      const found = this.actions.get(decodeURIComponent(action[1] ?? ""));
      return found ? send(200, found) : send(404, { message: "not found" });
    }
    const content = path.match(/^\/v1\/contents\/([^/]+)$/);
    if (content) return this.content(content[1] ?? "", req.method ?? "GET", res, call);
    return send(404, { message: `no route ${req.method} ${path}` });
  }

  /**
   * The U2C catalog in the host map format (webex-core services _formatReceivedHostmap reads
   * `serviceLinks` and `hostCatalog`; each host entry is `{host, id: "urn:TEAM:<cluster>:<service>",
   * priority, ttl}`): WDM here, and the conversation service on each cluster's host.
   */
  private hostmap(): Record<string, unknown> {
    const own = new URL(this.origin);
    const entry = (host: string, id: string) => ({ host, id, priority: 1, ttl: -1 });
    const hostCatalog: Record<string, unknown[]> = {
      [own.host]: [entry(own.hostname, `${US_CLUSTER}:wdm`)],
    };
    for (const [cluster, host] of this.clusterHosts)
      if (!this.forgottenClusters.has(cluster)) hostCatalog[host] = [entry(host, `${cluster}:conversation`)];
    return {
      serviceLinks: {
        wdm: this.catalogWdmUrl ?? `${this.origin}/wdm`,
        conversation: `https://${this.clusterHosts.get(US_CLUSTER)}/conversation/api/v1`,
      },
      hostCatalog,
      format: "hostmap",
    };
  }

  private create(body: Record<string, unknown>, send: (s: number, j?: unknown) => void): void {
    const markdown = String(body.markdown ?? body.text ?? "");
    const roomId = String(body.roomId ?? "");
    if (Buffer.byteLength(markdown, "utf8") > FAKE_MAX_BYTES) {
      send(400, { message: "message too long" });
      return;
    }
    const uuid = randomUUID();
    const id = sparkId(this.conversationOf(roomId).cluster, "MESSAGE", uuid);
    const attachments = Array.isArray(body.attachments) ? body.attachments : [];
    const uploads = Array.isArray(body.uploads) ? (body.uploads as FakeUpload[]) : [];
    if (uploads.length > 1) {
      send(400, { message: "one file per message" });
      return;
    }
    if (this.refusedByPolicy({ method: "POST", markdown, attachments }, send)) return;
    this.store({
      id,
      roomId,
      roomType: this.rooms.get(roomId) ?? "direct",
      personId: this.botPersonId,
      personEmail: this.botEmail,
      markdown,
      attachments,
      files: [],
      uploads,
      edits: 0,
      versions: [markdown],
      fromBot: true,
    });
    this.activityOf.set(id, uuid);
    // Webex tells the bot about its own messages too: the channel must drop them.
    this.push({
      id: uuid,
      objectType: "activity",
      verb: uploads.length > 0 ? "share" : "post",
      published: new Date().toISOString(),
      actor: this.actor(this.botEmail),
      object: { objectType: uploads.length > 0 ? "content" : "comment", displayName: CIPHERTEXT },
      target: this.target(roomId),
    });
    send(200, { id, roomId, personId: this.botPersonId, personEmail: this.botEmail, markdown });
  }

  private edit(id: string, body: Record<string, unknown>, send: (s: number, j?: unknown) => void): void {
    const found = this.messages.get(id);
    if (!found?.fromBot) {
      send(404, { message: "not found" });
      return;
    }
    if (found.attachments.length > 0 || (found.uploads?.length ?? 0) > 0) {
      send(400, { message: "a message with attachments cannot be edited" });
      return;
    }
    if (found.edits >= FAKE_MAX_EDITS) {
      send(400, { message: "edit limit reached" });
      return;
    }
    const markdown = String(body.markdown ?? "");
    if (Buffer.byteLength(markdown, "utf8") > FAKE_MAX_BYTES) {
      send(400, { message: "message too long" });
      return;
    }
    if (this.refusedByPolicy({ method: "PUT", markdown, attachments: [] }, send)) return;
    found.edits += 1;
    found.markdown = markdown;
    found.versions.push(markdown);
    send(200, { id, roomId: found.roomId, personId: found.personId, markdown });
  }

  /** The organization's policy refuses: 403 in Webex's error shape, nothing stored. */
  private refusedByPolicy(input: PolicyInput, send: (s: number, j?: unknown) => void): boolean {
    if (!this.policy?.(input)) return false;
    const body = errorBody("The message was blocked by your organization's compliance policy.");
    if (this.policyRefusals.length < this.o.maxMessages) this.policyRefusals.push({ ...input, ...body });
    send(403, body);
    return true;
  }

  private content(id: string, method: string, res: ServerResponse, call: RecordedCall): void {
    const file = this.files.get(id);
    const status = (s: number, headers: Record<string, string> = {}) => {
      call.status = s;
      res.writeHead(s, headers);
    };
    if (!file) {
      status(404);
      return void res.end();
    }
    if (method === "HEAD") file.heads += 1;
    if (file.state === "scanning" && file.heads > (file.scanningFor ?? 1)) file.state = "clean";
    const code = { clean: 200, scanning: 423, infected: 410, unscannable: 428 }[file.state];
    if (code !== 200) {
      status(code, file.state === "scanning" ? { "retry-after": "0" } : {});
      return void res.end();
    }
    status(200, {
      "content-type": file.type,
      "content-length": String(file.bytes.length),
      "content-disposition": `attachment; filename="${file.name}"`,
    });
    res.end(method === "HEAD" ? undefined : Buffer.from(file.bytes));
  }
}

/** Stands for an encrypted field (a JWE): parley never reads message text off the socket. */
const CIPHERTEXT = "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..ciphertext.tag";

function errorBody(message: string): WebexErrorBody {
  return { message, errors: [{ description: message }], trackingId: `ROUTER_${randomUUID()}` };
}
