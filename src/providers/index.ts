export { AcpProvider } from "./acp.js";
export type { AcpProviderOptions, LogLevel, ProviderLogger } from "./acp-types.js";
export { type AgentCommand, demoAgentCommand } from "./demo-command.js";
export type { PromptContent, Provider } from "./provider.js";
