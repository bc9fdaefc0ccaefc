#!/usr/bin/env node
/**
 * A fake `imsg` executable for tests: `imsg rpc --db <dir>/chat.db` speaks newline-delimited
 * JSON-RPC 2.0 on stdio as imsg's rpc mode does (status, chats.list, watch.subscribe/unsubscribe
 * with since_rowid and buffer_limit, message and watch.overflow notifications, send, typing, read).
 * Its state lives in the folder of the --db path (the channel passes it; the child sees no other
 * environment): scenario.json (behaviour), rows.jsonl (the "Messages database", kept across
 * restarts), requests.jsonl (every request and answer, bounded), starts.jsonl (one line per start).
 * Tests drive it through a Unix socket, ctl.sock, in that folder (local only, no network). It exits
 * when stdin closes, after an idle spell, and at a hard lifetime cap.
 */
import { appendFileSync, existsSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";

const argv = process.argv.slice(2);
if (argv[0] !== "rpc") {
  process.stderr.write("usage: imsg rpc [--db PATH]\n");
  process.exit(2);
}
const dbIndex = argv.indexOf("--db");
if (dbIndex === -1 || !argv[dbIndex + 1]) {
  process.stderr.write("the fake needs --db <dir>/chat.db\n");
  process.exit(2);
}
const dir = dirname(argv[dbIndex + 1]);
const file = (name) => join(dir, name);
const MAX_LOG_LINES = 10_000;
const MAX_LOGGED_TEXT = 100_000;
const LIFETIME_MS = 5 * 60_000;

const readScenario = () =>
  existsSync(file("scenario.json")) ? JSON.parse(readFileSync(file("scenario.json"), "utf8")) : {};
let scenario = readScenario();
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

const out = (frame) => process.stdout.write(`${JSON.stringify(frame)}\n`);
const nextRowid = () => (rows.length === 0 ? (scenario.firstRowid ?? 100) : rows[rows.length - 1].id + 1);
let guidSeq = 0;
const newGuid = () => `FAKE-${process.pid}-${++guidSeq}-${Date.now()}`;

function storeRow(row) {
  rows.push(row);
  appendFileSync(file("rows.jsonl"), `${JSON.stringify(row)}\n`);
}

// ── the watch ──
let sub = null; // { id, bufferLimit }
let subSeq = 0;

function deliver(batch) {
  if (!sub) return;
  const limit = sub.bufferLimit;
  if (batch.length <= limit) {
    for (const row of batch)
      out({ jsonrpc: "2.0", method: "message", params: { subscription: sub.id, message: row } });
    return;
  }
  // The buffer fills: what fits goes out, then the one terminal overflow, and the subscription ends.
  const sent = batch.slice(0, limit);
  for (const row of sent)
    out({ jsonrpc: "2.0", method: "message", params: { subscription: sub.id, message: row } });
  overflow(sent[sent.length - 1].id - (scenario.overflowReplay ?? 0));
}

function overflow(resumeAfter) {
  if (!sub) return;
  log({ event: "overflow", resume_after_rowid: resumeAfter, at: Date.now() });
  out({
    jsonrpc: "2.0",
    method: "watch.overflow",
    params: { subscription: sub.id, resume_after_rowid: resumeAfter },
  });
  sub = null;
}

// ── requests ──
const DEFAULT_METHODS = [
  "status",
  "chats.list",
  "watch.subscribe",
  "watch.unsubscribe",
  "send",
  "typing",
  "read",
];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function handle(req) {
  const p = req.params ?? {};
  switch (req.method) {
    case "status":
      return {
        version: scenario.version ?? "0.4.0-fake",
        methods: scenario.methods ?? DEFAULT_METHODS,
        bridge: { ready: scenario.bridgeReady ?? false },
      };
    case "chats.list": {
      const byHandle = new Map();
      for (const r of rows)
        byHandle.set(r.chat_identifier, {
          id: r.chat_id,
          identifier: r.chat_identifier,
          service: "iMessage",
          is_group: r.is_group,
        });
      return { chats: [...byHandle.values()].slice(0, p.limit ?? 20) };
    }
    case "watch.subscribe": {
      subSeq += 1;
      sub = { id: subSeq, bufferLimit: p.buffer_limit ?? 256 };
      const since =
        typeof p.since_rowid === "number" ? p.since_rowid : rows.length ? rows[rows.length - 1].id : 0;
      const backlog = rows.filter((r) => r.id > since);
      setTimeout(() => deliver(backlog), 5);
      return { subscription: sub.id };
    }
    case "watch.unsubscribe":
      sub = null;
      return { ok: true };
    case "send":
      return send(p);
    case "typing":
    case "read":
      if (scenario[req.method === "typing" ? "rejectTyping" : "rejectRead"])
        throw { code: -32601, message: `${req.method} rejected` };
      return { ok: true };
    default:
      throw { code: -32601, message: `method not found: ${req.method}` };
  }
}

async function send(p) {
  if (scenario.sendDelayMs) await sleep(scenario.sendDelayMs);
  if ((scenario.failSends ?? 0) > 0) {
    scenario.failSends -= 1;
    writeFileSync(file("scenario.json"), JSON.stringify(scenario));
    throw { code: -32010, message: "send failed: AppleEvent not authorized (-1743)" };
  }
  const guid = newGuid();
  const self = scenario.selfHandle !== undefined && p.to === scenario.selfHandle;
  const row = {
    id: nextRowid(),
    guid,
    chat_id: 1,
    chat_identifier: p.to,
    sender: self ? p.to : "",
    is_from_me: true,
    text: p.text ?? "",
    is_group: false,
  };
  storeRow(row);
  if (self && scenario.selfChatRace) {
    // The race: the echo first arrives unattributed; the attribution lands later.
    deliver([{ ...row, is_from_me: false }]);
    setTimeout(() => deliver([row]), scenario.correctAfterMs ?? 50);
  } else deliver([row]);
  const ids = scenario.sendIds ?? "both";
  return {
    ok: true,
    ...(ids === "both" || ids === "id" ? { id: row.id } : {}),
    ...(ids === "both" || ids === "guid" ? { guid } : {}),
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
      out({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
      continue;
    }
    const at = Date.now();
    log({ id: req.id, method: req.method, params: req.params ?? {}, at });
    handle(req).then(
      (result) => {
        log({ answered: req.id, method: req.method, at: Date.now(), result });
        out({ jsonrpc: "2.0", id: req.id, result });
      },
      (error) => {
        log({ answered: req.id, method: req.method, at: Date.now(), error });
        out({
          jsonrpc: "2.0",
          id: req.id,
          error: { code: error?.code ?? -32000, message: error?.message ?? String(error) },
        });
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
  return {
    id: nextRowid(),
    guid: c.guid ?? newGuid(),
    chat_id: group ? 900 : 1,
    chat_identifier: group ? "chat000000000000000001" : c.from,
    sender: c.from,
    is_from_me: c.fromMe === true,
    text,
    is_group: group,
    ...(group ? { participants: [c.from, "+15550000001"] } : {}),
  };
}

function command(c) {
  switch (c.op) {
    case "incoming": {
      const row = incomingRow(c, c.text);
      storeRow(row);
      deliver([row]);
      return { ok: true, rowid: row.id, guid: row.guid };
    }
    case "burst": {
      const batch = c.texts.map((text) => {
        const row = incomingRow(c, text);
        storeRow(row);
        return row;
      });
      deliver(batch);
      return { ok: true, rowids: batch.map((r) => r.id) };
    }
    case "replay": {
      // The same rows again (a duplicate delivery of what the database already holds).
      deliver(rows.filter((r) => c.rowids.includes(r.id)));
      return { ok: true };
    }
    case "overflow":
      overflow(c.resumeAfterRowid ?? (rows.length ? rows[rows.length - 1].id : 0));
      return { ok: true };
    case "watchError": {
      // As imsg ends a subscription whose stream threw (RPCServer+Handlers.swift handleWatchSubscribe).
      if (!sub) return { ok: false, error: "no subscription" };
      log({ event: "watchError", at: Date.now() });
      out({
        jsonrpc: "2.0",
        method: "error",
        params: { subscription: sub.id, error: { message: c.message ?? "boom" } },
      });
      sub = null;
      return { ok: true };
    }
    case "garbage":
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
