/** Where a folder a protocol names lies (moved to src/runtime/protocol-folder.ts: simulator kinds resolve theirs too). */
export { findProtocolFolder, lookedIn } from '../runtime/index.js';
