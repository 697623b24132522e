// spool/output — the ToolOutput sink: the state shape tools write into (one text block, then images;
// details; usage; addedTools; terminate; truncation), agent-side head/tail windowing, paced and forced
// flushes, and the rebase policy. Imports spool/delta and spool/capture only; it knows nothing of
// storage backends or HTTP — batches leave through onFlush.
export {
  createToolOutput,
  ToolOutputClosedError,
  type ToolOutput,
  type ToolOutputOptions,
  type ToolOutputState,
  type FlushInfo,
  type TextBlock,
  type ImageBlock,
  type Usage,
} from "./sink.js";
