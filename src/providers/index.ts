export { AcpProvider } from "./acp.js";
export type { AgentSpec } from "./acp-connection.js";
export { type AgentProbeResult, probeAgent } from "./acp-probe.js";
export type { AcpProviderOptions, LogLevel, ProviderLogger } from "./acp-types.js";
export { AGENT_POOL_DEFAULTS, AgentPool, type AgentPoolOptions, type AgentPoolStats } from "./agent-pool.js";
export { type AgentCommand, demoAgentCommand } from "./demo-command.js";
export type { PromptContent, Provider } from "./provider.js";
