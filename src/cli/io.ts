/** Where a command writes: process streams in the shipped CLI, buffers in tests. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith("\n") ? text : `${text}\n`),
};

/**
 * A reader that stops early (`rpmlab run … 2>&1 | head`) closes stdout or stderr: what is left
 * to print there goes nowhere, and the command ends as it would have, with its own exit code and
 * files, not with an EPIPE stack trace and exit code 1.
 */
export function ignoreClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
    });
  }
}
