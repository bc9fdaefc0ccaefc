/**
 * Intake journal throughput and latency, through the storage port on the default SQLite store.
 *
 * - acceptPerSec / acceptP50Ms / acceptP99Ms: one message at a time, each accept awaited (the
 *   durable write a channel waits for before acknowledging the platform). Durable = survives a
 *   SIGKILL right after accept returns (WAL, synchronous=NORMAL; test/store/kill-durability).
 * - lifecyclePerSec / lifecycleP99Ms: accept + claim + complete per message, the journal's whole
 *   cost per answered message.
 * - concurrentPerSec: 16 producers accepting at once (several chats arriving together).
 * - fullSyncPerSec / fullSyncP99Ms: the same single-message accepts with synchronous=FULL (fsync
 *   per commit), for comparison: the reason NORMAL is the default.
 * - kitPerSec / kitAddedP50Ms / kitAddedP99Ms: what the kit adds to a message before its turn runs
 *   (the hub's ChannelJournal: encode and journal it at receive, claim it when its turn starts), one
 *   message at a time: the latency the journal adds to every message. kitFinishP99Ms: completing
 *   it when its work ends (off the reply's path).
 * Targets (issue 16): >= 2,000 messages/s and p99 < 5 ms.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryLogger } from "../src/messaging/base/logger.js";
import { InboundDropLedger } from "../src/messaging/channel/inbound-drops.js";
import { ChannelJournal } from "../src/messaging/channel/journal.js";
import type { ChannelSurface } from "../src/messaging/channel/surface.js";
import { MemoryAuditSink } from "../src/messaging/security/audit.js";
import type { InboundMessage, ParleyStore } from "../src/messaging/store/port.js";
import { openStore } from "../src/store/index.js";

const N = 5000;
const FULL_N = 500;

function message(i: number): InboundMessage {
  return {
    channel: "telegram",
    platformMessageId: String(100_000 + i),
    conversationKey: `telegram:${i % 50}`,
    payload: {
      chatId: 4000 + (i % 50),
      from: { id: 9000 + (i % 50), name: "Ada" },
      text: `message ${i}: could you look at the failing deploy and tell me which step broke and why? `.repeat(
        2,
      ),
      attachments: i % 10 === 0 ? [{ name: "log.txt", size: 2048 }] : [],
    },
    receivedAtMs: Date.now(),
  };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number;
}

const round = (x: number, digits = 3) => Number(x.toFixed(digits));

async function withStore<T>(
  synchronous: "NORMAL" | "FULL",
  fn: (store: ParleyStore) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "parley-bench-"));
  const store = await openStore(dir, { synchronous });
  try {
    return await fn(store);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function sequential(store: ParleyStore, n: number, offset: number, lifecycle: boolean) {
  const latencies: number[] = [];
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const result = await store.intake.accept(message(offset + i));
    if (lifecycle && result.kind === "accepted") {
      await store.intake.claim(result.id);
      await store.intake.complete(result.id, "answered");
    }
    latencies.push(performance.now() - t);
  }
  const elapsed = performance.now() - start;
  latencies.sort((a, b) => a - b);
  return {
    perSec: Math.round((n / elapsed) * 1000),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    p999: percentile(latencies, 0.999),
    max: latencies[latencies.length - 1] as number,
  };
}

/** Through the kit: the ChannelJournal a hub holds, as `receive` and the end of a turn use it. */
async function throughKit(store: ParleyStore, n: number) {
  // The journal reads only the conversation of a surface (for its conversation key).
  const surface = {
    conversation: (chat: string) => ({
      route: chat,
      direct: true,
      link: { channelType: "telegram", conversationId: chat },
    }),
  } as unknown as ChannelSurface<string, undefined>;
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const journal = new ChannelJournal<string, undefined>({
    channel: "telegram",
    durable: { state: store, staleAfterMs: 15 * 60_000, maxAttempts: 3 },
    surface,
    audit,
    drops: new InboundDropLedger({ audit, logger }).forChannel("telegram"),
    logger,
    now: Date.now,
  });
  const added: number[] = [];
  const finish: number[] = [];
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const m = message(200_000 + i);
    const t = performance.now();
    const ticket = await journal.accept(
      { address: String(4000 + (i % 50)), userId: "9000", text: (m.payload as { text: string }).text },
      { platformId: m.platformMessageId },
    );
    if (ticket) await journal.claim([ticket]); // its turn starts
    added.push(performance.now() - t);
    const f = performance.now();
    if (ticket) await journal.finish([ticket], "answered");
    finish.push(performance.now() - f);
  }
  const elapsed = performance.now() - start;
  added.sort((a, b) => a - b);
  finish.sort((a, b) => a - b);
  return {
    perSec: Math.round((n / elapsed) * 1000),
    p50: percentile(added, 0.5),
    p99: percentile(added, 0.99),
    finishP99: percentile(finish, 0.99),
  };
}

export default async (): Promise<Record<string, number>> => {
  const normal = await withStore("NORMAL", async (store) => {
    await sequential(store, 500, 0, false); // warm up
    const accept = await sequential(store, N, 1000, false);
    const lifecycle = await sequential(store, N, 10_000, true);
    const producers = 16;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: producers }, async (_, p) => {
        for (let i = 0; i < N / producers; i++) await store.intake.accept(message(100_000 + p * N + i));
      }),
    );
    const concurrentPerSec = Math.round((N / (performance.now() - start)) * 1000);
    const kit = await throughKit(store, N);
    return { accept, lifecycle, concurrentPerSec, kit };
  });
  const full = await withStore("FULL", (store) => sequential(store, FULL_N, 0, false));
  return {
    acceptPerSec: normal.accept.perSec,
    acceptP50Ms: round(normal.accept.p50),
    acceptP99Ms: round(normal.accept.p99),
    acceptP999Ms: round(normal.accept.p999),
    acceptMaxMs: round(normal.accept.max),
    lifecyclePerSec: normal.lifecycle.perSec,
    lifecycleP99Ms: round(normal.lifecycle.p99),
    concurrentPerSec: normal.concurrentPerSec,
    kitPerSec: normal.kit.perSec,
    kitAddedP50Ms: round(normal.kit.p50),
    kitAddedP99Ms: round(normal.kit.p99),
    kitFinishP99Ms: round(normal.kit.finishP99),
    fullSyncPerSec: full.perSec,
    fullSyncP50Ms: round(full.p50),
    fullSyncP99Ms: round(full.p99),
  };
};
