/**
 * The drop reporter a transport under test gets when the test builds it by hand: the real ledger
 * over the test's audit sink (counted in memory, audited), as the gateway wires it minus the store.
 */
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { InboundDrops } from "../../src/messaging/channel/inbound-drops.js";
import { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";

export function testDrops(
  audit: AuditSink,
  channel: string,
  logger = new MemoryLogger(),
): InboundDrops & { ledger: InboundDropLedger } {
  const ledger = new InboundDropLedger({ audit, logger });
  return { ...ledger.forChannel(channel), ledger };
}
