// spool/ai-sdk — spool for TypeScript agents on the Vercel AI SDK (`ai`, a peer dependency):
// createSpool gives AI SDK tools over the harness's agent tools (bash streams preliminary results),
// a deterministic prepareStep over the context layer, and a recorded session.
// Must not import the MCP or CLI layers.
export { createSpool, type CreateSpoolOptions, type Spool, type SpoolTools } from "./create-spool.js";
export { SpoolOptionError } from "./options.js";
export { createPrepareStep, type PrepareStepOptions, type SpoolPrepareStep } from "./prepare-step.js";
export { toAiTool, type SpoolTool, type ToAiToolOptions } from "./tools.js";
export type { SpoolToolOutput } from "./tool-output.js";
