#!/usr/bin/env node
/**
 * A fake `imsg` executable for tests, written from steipete/imsg's sources at commit
 * c7ae79c1b195f942e3cf0a84c5eef6df778adb1a (docs/channels/imessage.md "## Wire" names the file of
 * every frame and field it emits). Two modes, as the real binary has:
 *   `imsg status --json`: one JSON line of Sources/imsg/Commands/StatusCommand.swift's StatusPayload.
 *   `imsg rpc [--db PATH]`: newline-delimited JSON-RPC 2.0 on stdio (Sources/imsg/RPCServer.swift):
 *   chats.list, watch.subscribe/unsubscribe (since_rowid, an exclusive cursor; batches of 100 per
 *   poll, Sources/IMsgCore/MessageWatcher.swift), `message` and `error` notifications, send,
 *   typing, read; an unknown method is -32601 with the method in `data`.
 * Its state lives in the folder named by PARLEY_FAKE_IMSG_DIR, which the per-folder wrapper script
 * sets (the status mode has no --db; the channel's child env carries nothing of the test's):
 * scenario.json (behaviour), rows.jsonl (the "Messages database", kept across restarts),
 * requests.jsonl (every request and answer, bounded), starts.jsonl (one line per rpc start).
 * Tests drive it through a Unix socket, ctl.sock, in that folder (local only, no network). It exits
 * when stdin closes, after an idle spell, and at a hard lifetime cap.
 */
import { appendFileSync, existsSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

const dir = process.env.PARLEY_FAKE_IMSG_DIR;
if (!dir) {
  process.stderr.write("the fake needs PARLEY_FAKE_IMSG_DIR (run it through its folder's wrapper)\n");
  process.exit(2);
}
const file = (name) => join(dir, name);
const readScenario = () =>
  existsSync(file("scenario.json")) ? JSON.parse(readFileSync(file("scenario.json"), "utf8")) : {};
let scenario = readScenario();

// kSupportedRPCMethods (Sources/imsg/RPCServer.swift): the static list `status --json` reports.
const RPC_METHODS = [
  "chats.list",
  "chats.create",
  "chats.delete",
  "chats.markUnread",
  "messages.history",
  "watch.subscribe",
  "watch.unsubscribe",
  "send",
  "send.rich",
  "send.attachment",
  "tapback",
  "typing",
  "read",
  "message.edit",
  "message.unsend",
  "message.delete",
  "message.notifyAnyways",
  "group.rename",
  "group.setIcon",
  "group.addParticipant",
  "group.removeParticipant",
  "group.leave",
];

const argv = process.argv.slice(2);
if (argv[0] === "status" && argv.includes("--json")) {
  // StatusPayload's CodingKeys (Sources/imsg/Commands/StatusCommand.swift); the three feature
  // flags are one availability check there, so they move together here.
  const advanced = scenario.advancedFeatures ?? true;
  process.stdout.write(
    `${JSON.stringify({
      version: scenario.version ?? "0.9.0",
      basic_features: true,
      advanced_features: advanced,
      typing_indicators: advanced,
      read_receipts: advanced,
      sip: advanced ? "disabled" : "enabled",
      message: advanced ? "IMCore bridge connected" : "IMCore bridge not available",
      bridge_version: advanced ? 2 : 0,
      v2_ready: advanced,
      selectors: {},
      rpc_methods: scenario.methods ?? RPC_METHODS,
    })}\n`,
  );
  process.exit(0);
}
if (argv[0] !== "rpc") {
  process.stderr.write("usage: imsg rpc [--db PATH] | imsg status --json\n");
  process.exit(2);
}
const MAX_LOG_LINES = 10_000;
const MAX_LOGGED_TEXT = 100_000;
const LIFETIME_MS = 5 * 60_000;
/** MessageWatcherConfiguration.batchLimit (Sources/IMsgCore/MessageWatcher.swift). */
const BATCH_LIMIT = 100;

const rows = existsSync(file("rows.jsonl"))
  ? readFileSync(file("rows.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : [];
let logLines = existsSync(file("requests.jsonl"))
  ? readFileSync(file("requests.jsonl"), "utf8").split("\n").length - 1
  : 0;
appendFileSync(file("starts.jsonl"), `${JSON.stringify({ pid: process.pid, at: Date.now() })}\n`);

function log(entry) {
  if (logLines >= MAX_LOG_LINES) return;
  logLines += 1;
  const clipped = JSON.stringify({ pid: process.pid, ...entry }, (_k, v) =>
    typeof v === "string" && v.length > MAX_LOGGED_TEXT ? v.slice(0, MAX_LOGGED_TEXT) : v,
  );
  appendFileSync(file("requests.jsonl"), `${clipped}\n`);
}

// RPCWriter (Sources/imsg/RPCServer+Support.swift): every frame carries jsonrpc "2.0".
const out = (frame) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...frame })}\n`);
const maxRowid = () => (rows.length === 0 ? 0 : rows[rows.length - 1].id);
const nextRowid = () => (rows.length === 0 ? (scenario.firstRowid ?? 100) : maxRowid() + 1);
let guidSeq = 0;
const newGuid = () => `FAKE-${process.pid}-${++guidSeq}-${Date.now()}`;

function storeRow(row) {
  rows.push(row);
  appendFileSync(file("rows.jsonl"), `${JSON.stringify(row)}\n`);
  // A write to chat.db wakes every watch after its debounce (MessageWatcher's file sources).
  for (const s of subs.values()) schedulePoll(s);
}

/**
 * A row as the rpc mode reports it: MessagePayload's CodingKeys (Sources/imsg/OutputModels.swift)
 * plus the chat fields messagePayload adds (Sources/imsg/RPCPayloads.swift). Optional fields that
 * are nil are absent (JSONEncoder skips them); attachments and reactions are [] unless asked for.
 */
function payload(row) {
  return {
    id: row.id,
    chat_id: row.chat_id,
    guid: row.guid,
    sender: row.sender,
    is_from_me: row.is_from_me,
    text: row.text,
    created_at: row.created_at,
    attachments: [],
    reactions: [],
    chat_identifier: row.chat_identifier,
    chat_guid: row.chat_guid,
    chat_name: row.chat_name,
    participants: row.participants,
    is_group: row.is_group,
  };
}

// ── the watch: a cursor over the rows, polled (Sources/IMsgCore/MessageWatcher.swift) ──
/** subscription id → { id, cursor, pending, timer } (SubscriptionStore hands out ids from 1). */
const subs = new Map();
let subSeq = 0;
// imsg's defaults are 500 ms (RPC debounce, RPCPayloads.swift) and a 5 s fallback poll; shortened
// here so tests run quickly. Timing only: no frame or field depends on them.
const debounceMs = () => scenario.debounceMs ?? 20;
const fallbackPollMs = () => scenario.fallbackPollMs ?? 150;

function schedulePoll(s) {
  if (s.pending) return;
  s.pending = true;
  setTimeout(() => {
    s.pending = false;
    poll(s);
  }, debounceMs());
}

function poll(s) {
  if (!subs.has(s.id)) return;
  const batch = rows.filter((r) => r.id > s.cursor).slice(0, BATCH_LIMIT);
  for (const row of batch) {
    emitMessage(s.id, row);
    if (row.id > s.cursor) s.cursor = row.id;
  }
}

function emitMessage(subscription, row) {
  out({ method: "message", params: { subscription, message: payload(row) } });
}

// ── requests ──
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// RPCError (Sources/imsg/RPCServer+Support.swift): a fixed message per code, details in `data`.
const rpcError = (code, data) => ({
  code,
  message: { [-32601]: "Method not found", [-32602]: "Invalid params", [-32603]: "Internal error" }[code],
  data,
});

async function handle(req) {
  const p = req.params ?? {};
  switch (req.method) {
    case "chats.list": {
      // chatPayload (Sources/imsg/RPCPayloads.swift), newest chat first, `limit` default 20.
      const byChat = new Map();
      for (const r of [...rows].reverse())
        if (!byChat.has(r.chat_id))
          byChat.set(r.chat_id, {
            id: r.chat_id,
            identifier: r.chat_identifier,
            guid: r.chat_guid,
            name: r.chat_name,
            service: "iMessage",
            last_message_at: r.created_at,
            participants: r.participants,
            is_group: r.is_group,
          });
      return { chats: [...byChat.values()].slice(0, Math.max(p.limit ?? 20, 1)) };
    }
    case "watch.subscribe": {
      // handleWatchSubscribe: since_rowid absent (or 0) starts at the newest row, i.e. from now.
      subSeq += 1;
      const since = typeof p.since_rowid === "number" && p.since_rowid !== 0 ? p.since_rowid : maxRowid();
      const s = { id: subSeq, cursor: since, pending: false, timer: null };
      subs.set(s.id, s);
      setTimeout(() => poll(s), 0);
      s.timer = setInterval(() => poll(s), fallbackPollMs());
      return { subscription: s.id };
    }
    case "watch.unsubscribe": {
      if (typeof p.subscription !== "number") throw rpcError(-32602, "subscription is required");
      endSub(p.subscription);
      return { ok: true };
    }
    case "send":
      return send(p);
    case "typing":
    case "read":
      if (scenario[req.method === "typing" ? "rejectTyping" : "rejectRead"])
        throw rpcError(-32603, `${req.method}: IMCore bridge not available`);
      return { ok: true };
    default:
      throw rpcError(-32601, req.method);
  }
}

function endSub(id) {
  const s = subs.get(id);
  if (!s) return;
  clearInterval(s.timer);
  subs.delete(id);
}

/** A row the Messages database would hold (the fields payload() reads). */
function dbRow({ to, sender, isFromMe, text, group }) {
  const chatIdentifier = group ? "chat000000000000000001" : to;
  return {
    id: nextRowid(),
    guid: newGuid(),
    chat_id: group ? 900 : 1,
    chat_identifier: chatIdentifier,
    chat_guid: group ? `iMessage;+;${chatIdentifier}` : `iMessage;-;${chatIdentifier}`,
    chat_name: "",
    sender,
    is_from_me: isFromMe,
    text,
    created_at: new Date().toISOString(),
    participants: group ? [sender, "+15550000001"] : [chatIdentifier],
    is_group: group,
  };
}

async function send(p) {
  if (scenario.sendDelayMs) await sleep(scenario.sendDelayMs);
  if ((scenario.failSends ?? 0) > 0) {
    scenario.failSends -= 1;
    writeFileSync(file("scenario.json"), JSON.stringify(scenario));
    throw rpcError(-32603, "send failed: AppleEvent not authorized (-1743)");
  }
  const self = scenario.selfHandle !== undefined && p.to === scenario.selfHandle;
  const row = dbRow({ to: p.to, sender: self ? p.to : "", isFromMe: true, text: p.text ?? "", group: false });
  storeRow(row);
  if (self && scenario.selfChatRace) {
    // Messages' self-chat, not imsg's wire: the account receives its own send as a second row,
    // unattributed (is_from_me false, from its own handle), a moment later.
    setTimeout(
      () => storeRow(dbRow({ to: p.to, sender: p.to, isFromMe: false, text: p.text ?? "", group: false })),
      scenario.correctAfterMs ?? 50,
    );
  }
  // handleSend's AppleScript path: ok, transport, and the ids once the sent row was found.
  const ids = scenario.sendIds ?? "both";
  return {
    ok: true,
    transport: "applescript",
    ...(ids === "both" || ids === "id" ? { id: row.id } : {}),
    ...(ids === "both" || ids === "guid" ? { guid: row.guid } : {}),
  };
}

// ── stdin ──
let idle = null;
const idleMs = scenario.idleMs ?? 60_000;
const touch = () => {
  if (idle) clearTimeout(idle);
  idle = setTimeout(() => shutdown(0), idleMs);
};
touch();
setTimeout(() => shutdown(0), LIFETIME_MS).unref();

let buffer = "";
process.stdin.on("data", (chunk) => {
  touch();
  buffer += chunk.toString("utf8");
  for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    if (!line.trim()) continue;
    let req;
    try {
      req = JSON.parse(line);
    } catch {
      out({ id: null, error: { code: -32700, message: "Parse error", data: "invalid JSON" } });
      continue;
    }
    const at = Date.now();
    log({ id: req.id, method: req.method, params: req.params ?? {}, at });
    handle(req).then(
      (result) => {
        log({ answered: req.id, method: req.method, at: Date.now(), result });
        out({ id: req.id, result });
      },
      (error) => {
        log({ answered: req.id, method: req.method, at: Date.now(), error });
        const e = error?.code ? error : rpcError(-32603, String(error));
        out({ id: req.id, error: { code: e.code, message: e.message, ...(e.data ? { data: e.data } : {}) } });
      },
    );
  }
});
process.stdin.on("end", () => shutdown(0));

// ── the control socket ──
const sockPath = file("ctl.sock");
if (existsSync(sockPath)) unlinkSync(sockPath);
const control = createServer((socket) => {
  let pending = "";
  socket.on("data", (chunk) => {
    pending += chunk.toString("utf8");
    for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      let reply;
      try {
        reply = command(JSON.parse(line));
      } catch (error) {
        reply = { ok: false, error: String(error) };
      }
      socket.write(`${JSON.stringify(reply)}\n`);
    }
  });
  socket.on("error", () => {});
});
control.listen(sockPath);

function incomingRow(c, text) {
  const group = c.group === true;
  const row = dbRow({ to: c.from, sender: c.from, isFromMe: c.fromMe === true, text, group });
  return c.guid ? { ...row, guid: c.guid } : row;
}

function command(c) {
  switch (c.op) {
    case "incoming": {
      const row = incomingRow(c, c.text);
      storeRow(row);
      return { ok: true, rowid: row.id, guid: row.guid };
    }
    case "burst": {
      const batch = c.texts.map((text) => {
        const row = incomingRow(c, text);
        storeRow(row);
        return row;
      });
      return { ok: true, rowids: batch.map((r) => r.id) };
    }
    case "replay": {
      // Test-only: rows the client already had, delivered again on the live subscription. imsg's
      // cursor never does this within one subscription; it stands for a second delivery the client
      // must absorb (a subscription that outlived its unsubscribe, a restart before the cursor moved).
      const s = [...subs.values()].at(-1);
      if (!s) return { ok: false, error: "no subscription" };
      for (const row of rows.filter((r) => c.rowids.includes(r.id))) emitMessage(s.id, row);
      return { ok: true };
    }
    case "watchError": {
      // handleWatchSubscribe's catch (Sources/imsg/RPCServer+Handlers.swift): the stream threw,
      // one `error` notification names the subscription, and it ends.
      const s = [...subs.values()].at(-1);
      if (!s) return { ok: false, error: "no subscription" };
      log({ event: "watchError", at: Date.now() });
      out({ method: "error", params: { subscription: s.id, error: { message: c.message ?? "boom" } } });
      endSub(s.id);
      return { ok: true };
    }
    case "garbage":
      // Test-only, not imsg frames: lines the client must survive and count.
      process.stdout.write("this is not json\n[1,2,3]\n");
      process.stdout.write(
        `${JSON.stringify({ jsonrpc: "2.0", method: "noise", params: { pad: "x".repeat(70 * 1024) } })}\n`,
      );
      process.stdout.write(`{"jsonrpc":"2.0","method":"noise","params":"${"y".repeat(c.hugeBytes ?? 0)}"}\n`);
      return { ok: true };
    case "scenario":
      scenario = { ...scenario, ...c.patch };
      writeFileSync(file("scenario.json"), JSON.stringify(scenario));
      return { ok: true };
    case "stderr":
      process.stderr.write(`${c.text}\n`);
      return { ok: true };
    case "die":
      setTimeout(() => process.exit(3), 5);
      return { ok: true };
    default:
      return { ok: false, error: `unknown op ${c.op}` };
  }
}

function shutdown(code) {
  try {
    control.close();
    if (existsSync(sockPath)) unlinkSync(sockPath);
  } catch (error) {
    // Leaving anyway: a stale socket file is the only cost, and the test's temp folder holds it.
    process.stderr.write(`fake imsg: cleanup failed: ${error}\n`);
  }
  process.exit(code);
}
process.on("exit", () => {
  try {
    if (existsSync(sockPath)) unlinkSync(sockPath);
  } catch (error) {
    process.stderr.write(`fake imsg: removing the control socket failed: ${error}\n`);
  }
});
