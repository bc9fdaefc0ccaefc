export {
  ENCODED_REDACTION_MARKER,
  EXFILTRATION_MARKER_PREFIX,
  type ExfiltrationOptions,
  REDACTION_MARKER,
  type RedactionResult,
  redactAll,
  redactCredentials,
  redactExfiltrationUrls,
  scanExfiltrationUrls,
} from "./redact.js";
export { StreamRedactor } from "./stream-redactor.js";
