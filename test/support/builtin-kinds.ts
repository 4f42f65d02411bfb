// Every test file runs with the built-in kinds registered, as the CLI does (src/kinds).
import { registerBuiltinKinds } from '../../src/kinds/index.js';

registerBuiltinKinds();
