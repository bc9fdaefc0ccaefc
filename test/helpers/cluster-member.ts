/**
 * One gateway's membership for the several-gateways tests: its own store on the shared PostgreSQL
 * and its ClusterMember, joined as the gateway joins (signals, takeover refresh), with a memory
 * logger and the fences it was told of.
 */
import type { ClusterOptions } from "../../src/gateway/cluster.js";
import { ClusterMember, signalsOf } from "../../src/gateway/cluster.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { openStore } from "../../src/store/index.js";
import type { SqlParleyStore } from "../../src/store/sql/store.js";
import type { ManualClock } from "./manual-clock.js";

export interface TestMember {
  store: SqlParleyStore;
  member: ClusterMember;
  logger: MemoryLogger;
  fenced: string[];
  /** Leave the cluster, then close the store. */
  close(): Promise<void>;
}

export async function joinTestMember(
  url: string,
  clock: ManualClock | ClusterOptions["clock"],
  name: string,
  extra: Partial<Pick<ClusterOptions, "forwardTimeoutMs" | "incarnation">> = {},
): Promise<TestMember> {
  const store = (await openStore("/nonexistent-home", { url })) as SqlParleyStore;
  const logger = new MemoryLogger();
  const fenced: string[] = [];
  const member = await ClusterMember.join({
    registry: store.cluster,
    signals: signalsOf(store),
    clock,
    logger,
    name,
    onFenced: (reason) => fenced.push(reason),
    onTakeover: async () => void (await store.sessions.refresh()),
    ...extra,
  });
  return {
    store,
    member,
    logger,
    fenced,
    close: async () => {
      await member.leave();
      await store.close();
    },
  };
}
