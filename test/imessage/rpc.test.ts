/**
 * The framing module alone: correlation, notifications, and lines that are bad or huge. A line far
 * above 64 KiB is read (one long message must not kill the reader); one above the limit is skipped
 * whole and the next line is read as usual; a line that is not a JSON-RPC object is skipped.
 */
import { describe, expect, it } from "vitest";
import { ImsgClosedError, ImsgRpcError, RpcLink } from "../../src/imessage/rpc.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { testDrops } from "../helpers/drops.js";

function link(maxLineBytes?: number) {
  const written: Record<string, unknown>[] = [];
  const notes: [string, unknown][] = [];
  const drops = testDrops(new MemoryAuditSink(), "imessage");
  const l = new RpcLink({
    write: (line) => written.push(JSON.parse(line) as Record<string, unknown>),
    onNotification: (method, params) => notes.push([method, params]),
    drops,
    clock: realClock,
    requestTimeoutMs: 2_000,
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
  });
  const feed = (text: string) => l.feed(Buffer.from(text, "utf8"));
  return { l, written, notes, feed, ledger: drops.ledger };
}

describe("imsg framing", () => {
  it("correlates answers by id, in any order and any chunking", async () => {
    const { l, written, feed } = link();
    const a = l.request("watch.subscribe", { since_rowid: 7 });
    const b = l.request("chats.list", { limit: 5 });
    expect(written.map((w) => [w.jsonrpc, w.method])).toEqual([
      ["2.0", "watch.subscribe"],
      ["2.0", "chats.list"],
    ]);
    const answer = `{"jsonrpc":"2.0","id":${written[1]?.id},"result":{"chats":[]}}\n{"jsonrpc":"2.0","id":${written[0]?.id},"result":{"subscription":1}}\n`;
    for (const ch of answer.match(/.{1,7}/gs) ?? []) feed(ch);
    await expect(a).resolves.toEqual({ subscription: 1 });
    await expect(b).resolves.toEqual({ chats: [] });
  });

  it("routes notifications and rejects a request imsg answered with an error", async () => {
    const { l, written, notes, feed } = link();
    const p = l.request("send", { to: "x" });
    feed(`{"jsonrpc":"2.0","method":"message","params":{"subscription":1}}\n`);
    // imsg's RPCError: the fixed JSON-RPC message, the reason in `data` (RPCServer+Support.swift).
    feed(
      `{"jsonrpc":"2.0","id":${written[0]?.id},"error":{"code":-32602,"message":"Invalid params","data":"to is required for direct sends"}}\n`,
    );
    expect(notes).toEqual([["message", { subscription: 1 }]]);
    const error = await p.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImsgRpcError);
    expect((error as ImsgRpcError).code).toBe(-32602);
    expect((error as ImsgRpcError).message).toBe(
      "imsg send failed (-32602): Invalid params: to is required for direct sends",
    );
  });

  it("skips and counts a line that is not JSON, not an object, or answers nobody, and reads on", async () => {
    const { l, written, feed, notes, ledger } = link();
    const p = l.request("chats.list", { limit: 1 });
    feed("this is not json\n[1,2,3]\n42\n\n");
    feed(`{"jsonrpc":"2.0","id":${written[0]?.id},"result":"ok"}\n`);
    await expect(p).resolves.toBe("ok");
    // The same answer again: its request is settled, nobody waits for it.
    feed(`{"jsonrpc":"2.0","id":${written[0]?.id},"result":"ok"}\n`);
    expect(notes).toEqual([]);
    expect(ledger.count("imessage", "unparseable")).toBe(1);
    expect(ledger.count("imessage", "unknown_shape")).toBe(2);
    expect(ledger.count("imessage", "orphan_answer")).toBe(1);
  });

  it("reads a line far above 64 KiB, and skips one above its limit whole", async () => {
    const { l, written, feed, notes, ledger } = link(200 * 1024);
    const big = "b".repeat(150 * 1024);
    feed(`{"jsonrpc":"2.0","method":"message","params":{"text":"${big}"}}\n`);
    expect((notes[0]?.[1] as { text?: string } | undefined)?.text?.length).toBe(150 * 1024);
    const p = l.request("chats.list", { limit: 1 });
    // Over the limit, in pieces, then the answer on the next line.
    const huge = `{"jsonrpc":"2.0","method":"message","params":{"text":"${"h".repeat(300 * 1024)}"}}`;
    for (let i = 0; i < huge.length; i += 64 * 1024) feed(huge.slice(i, i + 64 * 1024));
    feed(`\n{"jsonrpc":"2.0","id":${written[0]?.id},"result":1}\n`);
    await expect(p).resolves.toBe(1);
    expect(notes).toHaveLength(1);
    expect(ledger.count("imessage", "oversized")).toBe(1);
  });

  it("fails pending and later requests once closed", async () => {
    const { l } = link();
    const p = l.request("chats.list", { limit: 1 });
    l.close("exited (1)");
    await expect(p).rejects.toBeInstanceOf(ImsgClosedError);
    await expect(l.request("chats.list", { limit: 1 })).rejects.toBeInstanceOf(ImsgClosedError);
  });
});
