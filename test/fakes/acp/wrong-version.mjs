// Answers initialize with protocol version 2, which parley does not speak.
import { serve } from "./lib.mjs";

serve({}, { protocolVersion: 2 });
