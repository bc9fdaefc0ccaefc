/**
 * The tables as Kysely sees them. Portable on purpose (the same schema runs on PostgreSQL): text,
 * integer and bigint only; booleans are 0/1 integers and times are epoch milliseconds in bigint,
 * because SQLite has neither a boolean nor a timestamp type and a single schema must read the same
 * on both; JSON is stored as text for the same reason. Layer: store.
 */
import type { Generated } from "kysely";

export interface SessionTable {
  session_key: string;
  origin_channel: string | null;
  origin_conversation: string | null;
  origin_thread: string | null;
  mirror_channel: string | null;
  mirror_conversation: string | null;
  mirror_thread: string | null;
  mirror_opt_out: number;
  /** JSON array of the names of the flags that are on. */
  flags: string;
  generation: number;
  title: string | null;
  title_kind: string | null;
  cwd: string | null;
  muted_origin: number;
  muted_mirror: number;
  approval_policy: string | null;
  last_active_ms: number | null;
}

export interface AgentSessionTable {
  session_key: string;
  agent: string;
  agent_session_id: string;
  updated_at_ms: number;
}

export interface ResumeExpectationTable {
  channel: string;
  conversation: string;
  session_key: string;
  title: string;
  version: number;
  retired: number;
}

export interface IntakeTable {
  id: Generated<number>;
  channel: string;
  platform_message_id: string | null;
  conversation_key: string;
  payload: string;
  payload_digest: string;
  received_at_ms: number;
  accepted_at_ms: number;
  state: string;
  attempts: number;
  claimed_at_ms: number | null;
  completed_at_ms: number | null;
  outcome: string | null;
  /** The gateway that has the row in hand (several gateways on one database); null: none yet. */
  handler: Generated<string | null>;
}

export interface GatewayMemberTable {
  gateway_id: string;
  host: string;
  pid: number;
  started_at_ms: number;
  expires_at_ms: number;
}

export interface OwnershipTable {
  resource: string;
  gateway_id: string;
  epoch: number;
  since_ms: number;
}

export interface DeliveryTable {
  turn_id: string;
  part_index: number;
  state: string;
  platform_message_id: string | null;
  text_digest: string;
  updated_at_ms: number;
}

export interface TranscriptTable {
  id: Generated<number>;
  session_key: string;
  turn_id: string | null;
  entry_key: string | null;
  kind: string;
  at_ms: number;
  text: string;
  /** JSON object with the kind's other fields (attachment names, tool status, approval outcome). */
  data: string | null;
}

export interface CursorTable {
  name: string;
  value: number;
  updated_at_ms: number;
}

export interface ChannelRouteTable {
  channel: string;
  conversation: string;
  /** JSON: the channel's own form of the address. */
  address: string;
  owner: string;
  updated_at_ms: number;
}

export interface InboundDropTable {
  channel: string;
  reason: string;
  count: number;
  last_at_ms: number;
}

export interface AuditTable {
  id: Generated<number>;
  ts: string;
  operation: string;
  outcome: string;
  /** JSON object of the sanitized fields. */
  fields: string;
}

export interface ScheduledJobTable {
  id: string;
  channel: string;
  conversation_key: string;
  session_key: string;
  user_id: string;
  /** JSON: the JobDestination. */
  deliver_to: string;
  /** JSON: the conversation's address. */
  address: string;
  prompt: string;
  schedule_kind: string;
  every_ms: number | null;
  at_ms: number | null;
  next_run_ms: number;
  created_ms: number;
  runs: number;
  running: number | null;
}

export interface InboxTable {
  id: Generated<number>;
  conversation_key: string;
  channel: string;
  /** JSON: the conversation's address. */
  address: string;
  direction: string;
  user_id: string;
  text: string;
  /** JSON array of file names. */
  attachments: string;
  platform_message_id: string | null;
  turn_id: string | null;
  at_ms: number;
  handled: number;
}

export interface ParleyDatabase {
  session: SessionTable;
  agent_session: AgentSessionTable;
  resume_expectation: ResumeExpectationTable;
  intake: IntakeTable;
  delivery: DeliveryTable;
  transcript: TranscriptTable;
  cursor: CursorTable;
  channel_route: ChannelRouteTable;
  audit: AuditTable;
  inbound_drop: InboundDropTable;
  scheduled_job: ScheduledJobTable;
  inbox: InboxTable;
  gateway_member: GatewayMemberTable;
  ownership: OwnershipTable;
}
