/**
 * One auto-approve grant across the gateways sharing a store (docs/scale-out.md). The grant is
 * "every conversation, on every channel": with several gateways, a /yolo (or an Approve +
 * auto-approve press) on one must cover the turns the others run, and a /yolo off on any must end
 * it everywhere. Each arm or disarm made on a gateway is written to one reserved row; every gateway
 * reads it at each heartbeat tick and adopts a later change (so the others follow within a tick).
 * The gateway where a grant was armed alone audits its lapse and tells its holder. Layer: gateway.
 */
import { z } from "zod";
import type { AutoApproveGrant, GrantChange } from "../messaging/approval/grant.js";
import type { Logger } from "../messaging/base/logger.js";
import type { JsonValue, RouteStore } from "../messaging/store/port.js";

/** The reserved row: no channel is named this, and the route table needs no migration for it. */
export const GRANT_ROW = { channel: "parley.cluster", conversation: "auto-approve" } as const;

const storedChange = z.object({
  atMs: z.number(),
  state: z.object({ expiresAtMs: z.number(), source: z.string(), caller: z.string() }).nullable(),
});

export interface SharedGrantOptions {
  grant: AutoApproveGrant;
  routes: RouteStore;
  logger: Logger;
  /** Called at every heartbeat tick (the membership's), until the returned function is called. */
  onTick(read: () => Promise<void>): () => void;
  /** False once this gateway left or lost its lease: its changes are no longer shared. */
  serving(): boolean;
}

/** Follow the shared grant from now on, taking the one in force now first; ends with `serving`. */
export async function shareGrant(o: SharedGrantOptions): Promise<void> {
  let writing: Promise<void> = Promise.resolve();
  const read = async () => {
    const row = await o.routes.get(GRANT_ROW.channel, GRANT_ROW.conversation);
    if (!row) return;
    const parsed = storedChange.safeParse(row.address);
    if (!parsed.success) {
      o.logger.warn("cluster: the shared auto-approve row is malformed; ignored");
      return;
    }
    o.grant.adopt(parsed.data);
  };
  const write = (change: GrantChange) => {
    if (!o.serving()) return;
    // One write after another, so an older change never lands over a newer one.
    writing = writing.then(() =>
      o.routes
        .put({
          ...GRANT_ROW,
          address: change as unknown as JsonValue,
          owner: change.state?.caller ?? "",
        })
        .catch((error: unknown) =>
          o.logger.error("cluster: sharing an auto-approve change failed; it holds on this gateway only", {
            error: String(error),
          }),
        ),
    );
  };
  await read();
  o.grant.onChange(write);
  o.onTick(read);
}
