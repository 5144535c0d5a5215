// Imported first by main.tsx. zod 4 compiles object parsers with `new Function`
// and probes for it; our CSP has no 'unsafe-eval', so turn the JIT off before
// any schema is used (no probe, no CSP violation report, same results).
import { z } from 'zod';

z.config({ jitless: true });
