/**
 * Intake throughput on PostgreSQL (issue 26), through the same storage port as the SQLite bench,
 * on a throwaway local server with durability as shipped (fsync on, synchronous_commit on: every
 * accept is fsynced before it returns), or on PARLEY_TEST_DATABASE_URL when set.
 *
 * - acceptPerSec / acceptP50Ms / acceptP99Ms: one message at a time, each accept awaited.
 * - concurrentPerSec: 16 producers accepting at once (group commit helps here).
 * - pickUpPerSec: messages journaled by one gateway and taken in hand by the conversation's owner
 *   on another (the cross-gateway path: FOR UPDATE SKIP LOCKED), in batches as the owner's tick does.
 * - forwardP50Ms / forwardP99Ms: a press forwarded from one gateway to the conversation's owner and
 *   its answer back (LISTEN/NOTIFY round trip, plus the owner's lookup), one at a time.
 */

import { ClusterMember, signalsOf } from "../src/gateway/cluster.js";
import { realClock } from "../src/messaging/base/clock.js";
import { silentLogger } from "../src/messaging/base/logger.js";
import type { InboundMessage } from "../src/messaging/store/port.js";
import { openStore } from "../src/store/index.js";
import type { SqlParleyStore } from "../src/store/sql/store.js";
import { startTestPostgres } from "../test/helpers/postgres.js";

const N = 2000;
const FORWARDS = 500;

function message(i: number, conversations = 50): InboundMessage {
  return {
    channel: "telegram",
    platformMessageId: String(100_000 + i),
    conversationKey: `telegram:${i % conversations}`,
    payload: { chatId: 4000 + (i % 50), text: `message ${i}: which deploy step broke and why? `.repeat(2) },
    receivedAtMs: Date.now(),
  };
}

const round = (x: number, digits = 3) => Number(x.toFixed(digits));
const pct = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number;

export default async function run(): Promise<Record<string, number>> {
  const server = await startTestPostgres({ durable: true });
  try {
    const open = async () =>
      (await openStore("/nonexistent", { url: await server.createDatabase() })) as SqlParleyStore;
    const store = await open();
    const latencies: number[] = [];
    const start = performance.now();
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await store.intake.accept(message(i));
      latencies.push(performance.now() - t);
    }
    const sequentialMs = performance.now() - start;
    latencies.sort((a, b) => a - b);

    const cStart = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async (_, p) => {
        for (let i = 0; i < N / 16; i++) await store.intake.accept(message(N + p * 10_000 + i));
      }),
    );
    const concurrentMs = performance.now() - cStart;
    await store.close();

    // Two gateways on one database: B journals, A owns the conversations and picks them up.
    const url = await server.createDatabase();
    const a = (await openStore("/nonexistent", { url })) as SqlParleyStore;
    const b = (await openStore("/nonexistent", { url })) as SqlParleyStore;
    const join = (s: SqlParleyStore, name: string) =>
      ClusterMember.join({
        registry: s.cluster,
        signals: signalsOf(s),
        clock: realClock,
        logger: silentLogger,
        name,
        onFenced: () => {},
      });
    const owner = await join(a, "bench-a");
    const receiver = await join(b, "bench-b");
    for (let c = 0; c < 50; c++) await owner.acquire(`telegram:${c}`);
    for (let i = 0; i < N; i++) await b.intake.accept(message(i));
    const pStart = performance.now();
    let picked = 0;
    while (picked < N) picked += (await owner.pickUp("telegram")).length;
    const pickUpMs = performance.now() - pStart;
    owner.onForwarded("telegram", async (request) => ({ ok: true, label: String(request) }));
    const forwards: number[] = [];
    for (let i = 0; i < FORWARDS; i++) {
      const t = performance.now();
      const to = await receiver.servedElsewhere(`telegram:${i % 50}`);
      if (to === undefined || (await receiver.forward(to, "telegram", i)) === undefined)
        throw new Error("a forwarded press went unanswered");
      forwards.push(performance.now() - t);
    }
    forwards.sort((x, y) => x - y);
    await owner.leave();
    await receiver.leave();
    await a.close();
    await b.close();

    return {
      acceptPerSec: Math.round(N / (sequentialMs / 1000)),
      acceptP50Ms: round(pct(latencies, 0.5)),
      acceptP99Ms: round(pct(latencies, 0.99)),
      concurrentPerSec: Math.round(N / (concurrentMs / 1000)),
      pickUpPerSec: Math.round(N / (pickUpMs / 1000)),
      forwardP50Ms: round(pct(forwards, 0.5)),
      forwardP99Ms: round(pct(forwards, 0.99)),
    };
  } finally {
    await server.stop();
  }
}
