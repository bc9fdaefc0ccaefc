/**
 * The web chat's socket limits, as plain data: the entry's schema reads the defaults without loading
 * the server (and with it the WebSocket library).
 */

export interface WebChatLimits {
  /** Origins besides the page's own a socket may come from (e.g. behind a proxy). */
  allowedOrigins: readonly string[];
  maxSockets: number;
  maxSocketsPerConversation: number;
  /** Frames one socket may send in a burst, and how many it earns back per second. */
  frameBurst: number;
  framesPerSecond: number;
}

export const DEFAULT_WEBCHAT_LIMITS: WebChatLimits = {
  allowedOrigins: [],
  // A person has a few tabs open; hundreds of sockets are a runaway script or an attack.
  maxSockets: 64,
  maxSocketsPerConversation: 8,
  // Typing is a frame every few seconds; a burst of 20 covers pasting and pressing quickly.
  frameBurst: 20,
  framesPerSecond: 2,
};
