/**
 * Every test file runs with the built-in kinds registered (src/kinds), as the CLI entry registers them before any
 * command parses a protocol. A test that adds a kind of its own registers it and removes it again (the returned
 * unregister function).
 */
import { registerBuiltinKinds } from '../../src/kinds/index.js';

registerBuiltinKinds();
