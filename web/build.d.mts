/** Build the viewer into `outdir` (default web/dist); resolves to the directory. */
export function buildViewer(outdir?: string): Promise<string>;
