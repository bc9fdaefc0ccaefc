/**
 * A fake WhatsApp for parley's WhatsApp channel: the world behind the `WaSocket` port (socket.ts).
 *
 * - Sockets: `createSocket` is a SocketFactory. A linked auth state logs in (`creds.update` with the
 *   account's LID, then `open`, lib/Socket/socket.js `CB:success`). Creds with `me` but no account
 *   (an unfinished pairing) would make baileys log in (validateConnection); what WhatsApp answers is
 *   documented nowhere, so the fake refuses to be handed such creds rather than invent an answer.
 *   An unlinked one gets QR codes in rotation (the first at once, the next after 60 s, then every
 *   20 s, one per `ref` of the server's pair-device iq, six by default, until they run out: 408 "QR
 *   refs attempts ended"; lib/Socket/socket.js `CB:iq,type:set,pair-device`) until `scan()`
 *   (or `enterCode()`) links it: the signed identity into the creds, `isNewLogin: true`, then
 *   WhatsApp's "restart required" (515) close, as on a real pairing (`CB:iq,,pair-success`). A
 *   version older than `minVersion` is refused at connect with a 405 `failure`. `disconnect(code)`
 *   closes the live socket with any reason; `removeDevice`, `replaceSession` and `restrict` send
 *   the stanzas of those endings.
 * - Inbound: `receive()` builds a WebMessageInfo, takes it through baileys' protobuf encoder and
 *   decoder and delivers it as `notify` or `append`; a sender may write from a LID, with or without
 *   the alternate phone JID a real message carries. `media()` encrypts bytes with baileys' own media
 *   crypto (`encryptedStream`) and serves the ciphertext on this fake's loopback HTTP server, where
 *   parley's download fetches it; the declared length may be honest, understated, or absent.
 * - Outbound: every message parley sends is stored as a user would see it: its text in its final
 *   state after edits, its reactions, its images. An edit past the 15-minute window is sent (baileys
 *   refuses none) and ignored by the recipient: recorded, not shown. A message carrying
 *   `mentionedJid` is recorded as such (parley must never send one). `retry(id)` is a recipient's
 *   retry receipt for one of parley's messages, answered the way baileys answers it.
 * - People: each phone number has ONE LID (`person`), the same on every message and in the mapping.
 * - The socket URL: the same HTTP server accepts a WebSocket upgrade at any path and records it
 *   (and the client's first frame: baileys' Noise intro), so the REAL baileys socket can be pointed
 *   at it through `whatsapp.webSocketUrl`; it then closes (it is no WhatsApp server).
 *
 * Loopback only, bounded (records, media, bodies), and it stops itself after `lifetimeMs`.
 */
import { randomBytes } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { AuthenticationState, WAMessage, WAVersion } from "@whiskeysockets/baileys";
import { encryptedStream, proto } from "@whiskeysockets/baileys";
import { WebSocketServer } from "ws";
import type { GroupMetadata, WaSocket, WaSocketOptions } from "../../../src/whatsapp/wire.js";
import { closedWith, FakeSocket } from "./socket.js";

export interface FakeAccount {
  /** `4917000000001@s.whatsapp.net` */
  pn: string;
  /** `90000000001@lid` */
  lid: string;
}

export interface StoredMessage {
  id: string;
  chat: string;
  kind: "text" | "image" | "other";
  /** What the recipient sees now: the text after every edit, or the image's caption. */
  text: string;
  createdAt: number;
  edits: number;
  mentions: number;
}

export interface Reaction {
  chat: string;
  target: string;
  emoji: string;
  at: number;
}

export type Recorded =
  | { kind: "presence"; type: string; chat: string }
  | { kind: "lid_lookup"; lid: string }
  | { kind: "pn_lookup"; pn: string }
  | { kind: "group_list" }
  | { kind: "group_metadata"; jid: string }
  | { kind: "pairing_code"; phone: string; code: string }
  | { kind: "qr"; n: number }
  | { kind: "retry"; id: string; answered: boolean }
  | { kind: "edit_ignored"; chat: string; id: string; at: number }
  | { kind: "logout" }
  | { kind: "send"; chat: string; id: string; text: string; at: number }
  | { kind: "edit"; chat: string; id: string; text: string; at: number }
  | { kind: "react"; chat: string; target: string; emoji: string; at: number }
  | { kind: "refused"; what: string; reason: string; at: number };

export interface InboundSpec {
  /** The chat: a person's JID (theirs, or the operator's for the self-chat) or a group. */
  chat: string;
  /** In a group: the member writing (a phone JID or a LID). */
  from?: string;
  /** The alternate address a real message carries for a LID sender (participantAlt/remoteJidAlt). */
  alt?: string;
  fromMe?: boolean;
  text?: string;
  /** A media message built with `media()`, or any raw message content. */
  message?: proto.IMessage;
  mentions?: string[];
  /** Reply to this message id. */
  quoted?: string;
  type?: "notify" | "append";
  /** When it was sent (default: now). */
  at?: number;
  id?: string;
}

export interface MediaSpec {
  kind: "image" | "document" | "audio" | "video" | "sticker";
  bytes: Uint8Array;
  mimetype: string;
  fileName?: string;
  caption?: string;
  /** The declared length: the real one by default, any other number to lie, null to declare none. */
  declared?: number | null;
  ptt?: boolean;
}

export interface FakeWhatsAppOptions {
  operator?: FakeAccount;
  now?: () => number;
  editWindowMs?: number;
  lifetimeMs?: number;
  maxRecords?: number;
  /** WhatsApp refuses an older announced version with a 405 at connect. */
  minVersion?: WAVersion;
  /** The QR rotation: how long the first and each later code lives, and how many the server offers. */
  qrFirstMs?: number;
  qrNextMs?: number;
  qrRefs?: number;
}

const MAX_MEDIA_BYTES = 8 * 1024 * 1024;
const MAX_TEXT = 4096;

export class FakeWhatsApp {
  readonly operator: FakeAccount;
  readonly lidToPn = new Map<string, string>();
  readonly groups = new Set<string>();
  readonly records: Recorded[] = [];
  readonly messages: StoredMessage[] = [];
  readonly reactionLog: Reaction[] = [];
  readonly wsConnections: { path: string; origin: string | undefined; firstFrame: Buffer | null }[] = [];
  readonly downloads: string[] = [];
  /** Every message parley sent, as it crossed the wire (what a redelivery would carry again). */
  readonly outbox: WAMessage[] = [];
  readonly now: () => number;
  private readonly media = new Map<string, Buffer>();
  private readonly sockets = new Set<FakeSocket>();
  private readonly editWindowMs: number;
  private readonly maxRecords: number;
  private readonly failures: { what: "send" | "edit"; remaining: number }[] = [];
  private readonly minVersion: WAVersion | undefined;
  private readonly qr: { firstMs: number; nextMs: number; refs: number };
  /** Each phone JID's one LID. */
  readonly people = new Map<string, string>();
  private server = createServer((req, res) => void this.serve(req, res));
  private wss = new WebSocketServer({ noServer: true });
  private lifetime: NodeJS.Timeout | null = null;
  private nextId = 1;
  origin = "";

  private constructor(o: FakeWhatsAppOptions) {
    this.operator = o.operator ?? { pn: "4917000000001@s.whatsapp.net", lid: "90000000001@lid" };
    this.now = o.now ?? (() => Date.now());
    this.editWindowMs = o.editWindowMs ?? 15 * 60_000;
    this.maxRecords = o.maxRecords ?? 20_000;
    this.minVersion = o.minVersion;
    // baileys: 60 s for the first code, 20 s for each later one (socket.js genPairQR); one code per
    // `ref` the server sends, six a socket (WhiskeySockets/Baileys issue #1161).
    this.qr = { firstMs: o.qrFirstMs ?? 60_000, nextMs: o.qrNextMs ?? 20_000, refs: o.qrRefs ?? 6 };
    this.person(this.operator.pn, this.operator.lid);
  }

  /** A person: their phone JID and their one LID (mapped, as baileys' store learns it). */
  person(pn: string, lid: string): void {
    const known = this.people.get(pn);
    if (known && known !== lid) throw new Error(`fake whatsapp: ${pn} already has the LID ${known}`);
    this.people.set(pn, lid);
  }

  /** A group's metadata as baileys answers it (participants: every member, by phone JID). */
  groupMeta(id: string): GroupMetadata {
    return {
      id,
      subject: `Group ${id.split("@")[0]?.slice(-4)}`,
      participants: [{ id: this.operator.pn, admin: null }],
    } as GroupMetadata;
  }

  static async start(o: FakeWhatsAppOptions = {}): Promise<FakeWhatsApp> {
    const fake = new FakeWhatsApp(o);
    fake.server.on("upgrade", (req, socket, head) => {
      fake.wss.handleUpgrade(req, socket, head, (ws) => {
        const rec = { path: req.url ?? "", origin: req.headers.origin, firstFrame: null as Buffer | null };
        fake.wsConnections.push(rec);
        ws.once("message", (data) => {
          rec.firstFrame = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
          // No WhatsApp server here: the handshake ends with the connection.
          ws.close(1011, "fake whatsapp speaks no Noise");
        });
      });
    });
    await new Promise<void>((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
    fake.origin = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    fake.lifetime = setTimeout(() => void fake.stop(), o.lifetimeMs ?? 60_000);
    fake.lifetime.unref();
    return fake;
  }

  /** The socket URL to configure as `whatsapp.webSocketUrl`. */
  get webSocketUrl(): string {
    return `${this.origin.replace(/^http/, "ws")}/ws/chat`;
  }

  // ── sockets ───────────────────────────────────────────────────────────────────────────────

  /** A SocketFactory: what the channel calls instead of makeWASocket. */
  readonly createSocket = (auth: AuthenticationState, options: WaSocketOptions): WaSocket => {
    // No source says how WhatsApp answers a login from an unfinished pairing: fail the test loudly.
    if (auth.creds.me?.id && !auth.creds.account)
      throw new Error(
        "fake whatsapp: creds of an unfinished pairing; WhatsApp's answer to them is not modelled",
      );
    const sock = new FakeSocket(this, auth, options);
    this.nextSocketSerial += 1;
    this.sockets.add(sock);
    this.announced.push(options.version);
    setImmediate(() => {
      sock.emit("connection.update", { connection: "connecting" });
      if (this.minVersion && older(options.version, this.minVersion)) {
        // The server's `failure` with reason 405 (socket.js CB:failure passes it through).
        this.disconnect(405, sock, { reason: "405" });
        return;
      }
      const me = auth.creds.me;
      if (me?.id && auth.creds.account) {
        sock.emit("creds.update", { me: { ...me, lid: this.operator.lid } });
        sock.emit("connection.update", { connection: "open" });
      } else this.offerQr(sock, 1);
    });
    return sock;
  };

  /** The versions every socket announced, in order. */
  readonly announced: WAVersion[] = [];

  private offerQr(sock: FakeSocket, n: number): void {
    if (sock.ended) return;
    if (n > this.qr.refs) {
      this.disconnect(408, sock);
      return;
    }
    this.record({ kind: "qr", n });
    sock.emit("connection.update", { qr: `2@fake-qr-${this.nextId++},${randomBytes(8).toString("base64")}` });
    sock.qrTimer = setTimeout(() => this.offerQr(sock, n + 1), n === 1 ? this.qr.firstMs : this.qr.nextMs);
    sock.qrTimer.unref();
  }

  /** The operator scans the QR code: the device is linked, then WhatsApp asks for a restart. */
  scan(): void {
    const sock = this.live();
    if (!sock || sock.auth.creds.me?.id) throw new Error("fake whatsapp: no socket waiting for a scan");
    this.paired(sock);
  }

  /** The operator types the pairing code on the phone: linked if it is the live socket's code. */
  enterCode(code: string): void {
    const sock = this.live();
    if (!sock || sock.auth.creds.pairingCode !== code)
      throw new Error("fake whatsapp: that code links nothing");
    this.paired(sock);
  }

  /** pair-success: the signed identity and the account into the creds, a new login, the 515. */
  private paired(sock: FakeSocket): void {
    sock.stopQr();
    const me = {
      id: `${this.operator.pn.split("@")[0]}:12@s.whatsapp.net`,
      lid: this.operator.lid,
      name: "Operator",
    };
    const account = { details: Buffer.from("fake-adv-details"), accountSignatureKey: Buffer.alloc(32) };
    Object.assign(sock.auth.creds, { me, account, platform: "android" });
    sock.emit("creds.update", { me, account, platform: "android" } as never);
    sock.emit("connection.update", { isNewLogin: true, qr: undefined });
    this.disconnect(515, sock);
  }

  /** The phone removed this device while connected: a 401 stream error with a device_removed conflict. */
  removeDevice(): void {
    this.disconnect(401, this.live(), { tag: "conflict", attrs: { type: "device_removed" } });
  }

  /** Another client took the session: a `conflict` stream error (440 by baileys' CODE_MAP). */
  replaceSession(): void {
    this.disconnect(440, this.live(), { tag: "conflict", attrs: { type: "replaced" } });
  }

  /** WhatsApp refuses the account: a `failure` with reason 403. */
  restrict(): void {
    this.disconnect(403, this.live(), { reason: "403" });
  }

  /** A recipient's retry receipt for one of parley's messages in `chat`. */
  retry(chat: string, id: string): Promise<boolean> {
    const sock = this.live();
    if (!sock) throw new Error("fake whatsapp: nobody is connected");
    return sock.retryRequest(chat, id);
  }

  /** Close the live socket (or `sock`) with a baileys disconnect reason. */
  disconnect(code: number, sock = this.live(), data?: unknown): void {
    if (!sock) return;
    sock.stopQr();
    sock.emit("connection.update", {
      connection: "close",
      lastDisconnect: { error: closedWith(code, "connection closed", data), date: new Date(this.now()) },
    });
    sock.ended = true;
    this.forget(sock);
  }

  forget(sock: FakeSocket): void {
    this.sockets.delete(sock);
  }

  /** How many sockets were ever made, and the live one. */
  get socketCount(): number {
    return this.nextSocketSerial;
  }
  private nextSocketSerial = 0;

  live(): FakeSocket | undefined {
    return [...this.sockets].filter((s) => !s.ended).at(-1);
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  /** A message arriving for parley now (`notify` unless said otherwise). */
  receive(spec: InboundSpec): WAMessage {
    const wire = this.build(spec);
    this.deliver([wire], spec.type ?? "notify");
    return wire;
  }

  /** A message as it would arrive, without delivering it (a reconnect's `append` batch). */
  build(spec: InboundSpec): WAMessage {
    const id = spec.id ?? `IN${(this.nextId++).toString(16).toUpperCase().padStart(8, "0")}`;
    const group = spec.chat.endsWith("@g.us");
    const context =
      spec.mentions || spec.quoted
        ? {
            ...(spec.mentions ? { mentionedJid: spec.mentions } : {}),
            ...(spec.quoted ? { stanzaId: spec.quoted, participant: this.operator.pn } : {}),
          }
        : undefined;
    const message: proto.IMessage =
      spec.message ??
      (context
        ? { extendedTextMessage: { text: spec.text ?? "", contextInfo: context } }
        : { conversation: spec.text ?? "" });
    const info = proto.WebMessageInfo.fromObject({
      key: {
        remoteJid: spec.chat,
        fromMe: spec.fromMe === true,
        id,
        ...(group ? { participant: spec.from } : {}),
      },
      message,
      messageTimestamp: Math.floor((spec.at ?? this.now()) / 1000),
    });
    const wire = proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(info).finish()) as WAMessage;
    // One LID per person: a message may not name a phone number with a LID that is not theirs.
    const lid = group ? spec.from : spec.chat;
    if (spec.alt && lid?.endsWith("@lid")) this.person(spec.alt, lid.replace(/:\d+@/, "@"));
    // baileys adds the alternate address of a LID sender beside the protobuf key.
    if (spec.alt) Object.assign(wire.key, group ? { participantAlt: spec.alt } : { remoteJidAlt: spec.alt });
    return wire;
  }

  /** Deliver a batch as one upsert (a reconnect's offline messages come as one `append`). */
  deliver(messages: WAMessage[], type: "notify" | "append"): void {
    const sock = this.live();
    if (!sock) throw new Error("fake whatsapp: nobody is connected");
    sock.emit("messages.upsert", { messages, type });
  }

  /** baileys learned who a LID is. */
  mapLid(lid: string, pn: string, announce = true): void {
    this.person(pn, lid);
    this.lidToPn.set(lid, pn);
    if (announce) this.live()?.emit("lid-mapping.update", { lid, pn });
  }

  /** A media message: encrypted by baileys, its ciphertext served here. */
  async mediaMessage(spec: MediaSpec): Promise<proto.IMessage> {
    const enc = await encryptedStream(Buffer.from(spec.bytes), spec.kind);
    const ciphertext = await readFile(enc.encFilePath);
    await rm(enc.encFilePath, { force: true });
    const directPath = `/v/t62.7118-24/${randomBytes(6).toString("hex")}.enc?ccb=11-4&oh=fake`;
    this.host(directPath, ciphertext);
    const declared = spec.declared === undefined ? spec.bytes.length : spec.declared;
    const body = {
      url: `https://mmg.whatsapp.net${directPath}`,
      directPath,
      mediaKey: enc.mediaKey,
      fileEncSha256: enc.fileEncSha256,
      fileSha256: enc.fileSha256,
      mimetype: spec.mimetype,
      ...(declared === null ? {} : { fileLength: declared }),
      ...(spec.caption ? { caption: spec.caption } : {}),
      ...(spec.fileName ? { fileName: spec.fileName } : {}),
      ...(spec.ptt ? { ptt: true } : {}),
    };
    return { [`${spec.kind}Message`]: body } as proto.IMessage;
  }

  host(path: string, bytes: Buffer): void {
    if (bytes.length > MAX_MEDIA_BYTES) throw new Error("fake whatsapp: media too large to host");
    this.media.set(path.split("?")[0] ?? path, bytes);
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  /** The next `n` sends (or edits) fail, as a refused call would. */
  failNext(what: "send" | "edit", n = 1): void {
    this.failures.push({ what, remaining: n });
  }

  /** What WhatsApp's server does with a message parley sent. */
  relay(chat: string, wire: WAMessage): void {
    const m = wire.message ?? {};
    const at = this.now();
    const id = wire.key.id ?? "";
    const mentions = countMentions(m);
    if (m.reactionMessage) {
      const target = m.reactionMessage.key?.id ?? "";
      const emoji = m.reactionMessage.text ?? "";
      this.reactionLog.push({ chat, target, emoji, at });
      this.record({ kind: "react", chat, target, emoji, at });
      return;
    }
    const edit =
      m.protocolMessage?.type === proto.Message.ProtocolMessage.Type.MESSAGE_EDIT ? m.protocolMessage : null;
    if (edit) {
      this.failIf("edit");
      const target = this.messages.find((s) => s.id === edit.key?.id && s.chat === chat);
      const text = textOf(edit.editedMessage ?? {});
      // baileys sends any edit; a recipient ignores one of a message it lacks, or past the window.
      if (!target || at - target.createdAt >= this.editWindowMs) {
        this.record({ kind: "edit_ignored", chat, id: edit.key?.id ?? "", at });
        return;
      }
      target.text = text;
      target.edits += 1;
      target.mentions += countMentions(edit.editedMessage ?? {});
      this.record({ kind: "edit", chat, id: target.id, text, at });
      return;
    }
    this.failIf("send");
    // A message id the chat already has is a retry of that message: recipients keep one per id.
    if (this.messages.some((s) => s.id === id && s.chat === chat)) {
      this.record({ kind: "refused", what: "send", reason: "duplicate id", at });
      return;
    }
    const text = textOf(m);
    if (Array.from(text).length > MAX_TEXT) this.refuse("send", "message is too long");
    if (this.messages.length >= this.maxRecords) throw new Error("fake whatsapp: too many messages");
    const kind = m.imageMessage
      ? "image"
      : Object.hasOwn(m, "conversation") || m.extendedTextMessage
        ? "text"
        : "other";
    this.messages.push({ id, chat, kind, text, createdAt: at, edits: 0, mentions });
    this.record({ kind: "send", chat, id, text, at });
  }

  /** baileys' upload function, into this fake (the encrypted file, as baileys prepared it). */
  async upload(path: string, mediaType: string): Promise<{ mediaUrl: string; directPath: string }> {
    const bytes = await readFile(path);
    const directPath = `/mms/${mediaType}/${randomBytes(6).toString("hex")}`;
    const res = await fetch(`${this.origin}${directPath}`, { method: "POST", body: bytes });
    if (!res.ok) throw new Error(`fake upload answered ${res.status}`);
    return { mediaUrl: `${this.origin}${directPath}`, directPath };
  }

  record(entry: Recorded): void {
    if (this.records.length >= this.maxRecords) throw new Error("fake whatsapp: too many records");
    this.records.push(entry);
  }

  /** Everything parley showed in `chat` (or everywhere), in the order it was sent, as it reads now. */
  visible(chat?: string): string[] {
    return this.messages.filter((m) => chat === undefined || m.chat === chat).map((m) => m.text);
  }

  reactions(chat?: string): Reaction[] {
    return this.reactionLog.filter((r) => chat === undefined || r.chat === chat);
  }

  /** The last reaction parley left on a message (what the user sees). */
  reactionOn(target: string): string | undefined {
    return this.reactionLog.filter((r) => r.target === target).at(-1)?.emoji;
  }

  presence(): { type: string; chat: string }[] {
    return this.records.flatMap((r) => (r.kind === "presence" ? [{ type: r.type, chat: r.chat }] : []));
  }

  waitFor(predicate: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const tick = setInterval(() => {
        if (predicate()) {
          clearInterval(tick);
          resolve();
        } else if (Date.now() - started > timeoutMs) {
          clearInterval(tick);
          reject(
            new Error(`fake whatsapp: timed out waiting for ${what}\n${this.visible().join("\n---\n")}`),
          );
        }
      }, 5);
    });
  }

  async stop(): Promise<void> {
    if (this.lifetime) clearTimeout(this.lifetime);
    this.lifetime = null;
    for (const s of this.sockets) {
      s.stopQr();
      s.ended = true;
    }
    this.sockets.clear();
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────────

  private failIf(what: "send" | "edit"): void {
    const f = this.failures.find((x) => x.what === what && x.remaining > 0);
    if (!f) return;
    f.remaining -= 1;
    this.record({ kind: "refused", what, reason: "injected", at: this.now() });
    throw closedWith(500, `fake whatsapp refused the ${what}`);
  }

  private refuse(what: string, reason: string): never {
    this.record({ kind: "refused", what, reason, at: this.now() });
    throw closedWith(406, `fake whatsapp refused the ${what}: ${reason}`);
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (req.method === "POST" && path.startsWith("/mms/")) {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > MAX_MEDIA_BYTES) {
          res.writeHead(413).end();
          return;
        }
        chunks.push(chunk as Buffer);
      }
      this.host(path, Buffer.concat(chunks));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ direct_path: path }));
      return;
    }
    if (req.method === "GET") {
      this.downloads.push(req.url ?? "");
      const bytes = this.media.get(path);
      if (!bytes) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length });
      res.end(bytes);
      return;
    }
    res.writeHead(405).end();
  }
}

/** a < b, WhatsApp's way: part by part. */
function older(a: WAVersion, b: WAVersion): boolean {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  return false;
}

/** The text a recipient reads (decoded protobufs answer "" for an absent string: ask what is set). */
function textOf(m: proto.IMessage): string {
  if (Object.hasOwn(m, "conversation")) return m.conversation ?? "";
  if (m.extendedTextMessage) return m.extendedTextMessage.text ?? "";
  if (m.imageMessage) return m.imageMessage.caption ?? "";
  return "";
}

/** Every `mentionedJid` anywhere in a message. */
function countMentions(m: unknown): number {
  let n = 0;
  const visit = (v: unknown) => {
    if (!v || typeof v !== "object") return;
    if (Array.isArray(v)) return v.forEach(visit);
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === "mentionedJid" && Array.isArray(x)) n += x.length;
      else if (!(x instanceof Uint8Array)) visit(x);
    }
  };
  visit(m);
  return n;
}
